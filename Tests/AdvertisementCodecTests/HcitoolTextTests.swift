// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// The hcitool lines of tutorials' beacon scripts, read as the commands they send and written
/// from ours. Expected bytes come from the Core specification's layouts (OGF 0x08 is LE;
/// OCF 0x0006 parameters, 0x0008 data, 0x000A enable).
@Suite struct HcitoolTextTests {
    static let iBeaconData = "1E 02 01 06 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 65 00 02 C5 00"

    @Test(arguments: [
        "hcitool -i hci0 cmd 0x08 0x0008 " + iBeaconData,
        "sudo hcitool -i hci1 cmd 0x08 0x0008 " + iBeaconData.lowercased() + "   # the data",
        "/usr/bin/hcitool cmd 08 0008 " + iBeaconData.split(separator: " ").map { "0x" + $0 }.joined(separator: " "),
        "\thcitool   cmd 8 8 " + iBeaconData,
    ])
    func eachSpellingIsTheSameCommand(line: String) throws {
        let command = try #require(try HcitoolText.command(in: line))
        #expect(command.opcode == .leSetAdvertisingData)
        #expect(command.opcode.rawValue == 0x2008)
        #expect(HexText.format(command.parameters, separator: " ") == Self.iBeaconData)
    }

    @Test(arguments: ["hcitool lescan", "sudo hciconfig hci0 up", "hciconfig hci0 leadv 3", "echo hcitool cmd 0x08 0x000a 01", ""])
    func otherLinesAreNotCommands(line: String) throws {
        #expect(try HcitoolText.command(in: line) == nil)
    }

    @Test(arguments: [
        ("hcitool cmd 0x40 0x0001", "OGF"),
        ("hcitool cmd 0x08 0x0400", "OCF"),
        ("hcitool cmd 0x08 0x0008 1E 0G", "parameter byte 2"),
        ("hcitool cmd 0x08", "OCF"),
        ("hcitool -i hci0 cmd 0x08 0x0008 " + Array(repeating: "00", count: 256).joined(separator: " "), "1 unexpected trailing byte"),
    ])
    func aMalformedCommandLineSaysWhere(line: String, names: String) {
        do {
            let command = try HcitoolText.command(in: line)
            Issue.record("read \(String(describing: command))")
        } catch {
            #expect(error.description.contains(names), "\(error)")
        }
    }

    @Test func aLineIsWrittenAsHcitoolReadsIt() throws {
        let command = HCICommandPacket(opcode: .leSetAdvertisingEnable, parameters: [0x01])
        #expect(HcitoolText.line(for: command, device: "hci1") == "hcitool -i hci1 cmd 0x08 0x000A 01")
        #expect(try HcitoolText.command(in: HcitoolText.line(for: command)) == command)
    }

    /// What a script's other commands set, in words.
    @Test(arguments: [
        ("hcitool cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00",
         "advertising parameters: interval 100-100 ms, ADV_NONCONN_IND, own address public, channels 37 38 39"),
        ("hcitool cmd 0x08 0x0006 21 00 22 00 00 01 00 00 00 00 00 00 00 05 00",
         "advertising parameters: interval 20.625-21.25 ms, ADV_IND, own address random, channels 37 39"),
        ("hcitool cmd 0x08 0x000a 01", "advertising on"),
        ("hcitool cmd 0x08 0x000a 00", "advertising off"),
        ("hcitool cmd 0x08 0x0005 06 05 04 03 02 C1", "random address C1:02:03:04:05:06"),
        ("hcitool cmd 0x03 0x0003", "Reset"),
    ])
    func aSettingIsSaidInWords(line: String, setting: String) throws {
        let command = try #require(try HcitoolText.command(in: line))
        #expect(HcitoolText.setting(of: command) == setting)
    }

    /// Our beacon as a script: off, parameters (100 ms = 0x00A0, ADV_NONCONN_IND 0x03, public,
    /// no peer, channels 0x07, no filter), the data padded to 31 bytes, on.
    @Test func aBeaconIsWrittenAsAScript() throws {
        let beacon = Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                            major: 101, minor: 2))
        #expect(try HcitoolText.lines(advertising: beacon, intervalUnits: 160) == [
            "hcitool -i hci0 cmd 0x08 0x000A 00",
            "hcitool -i hci0 cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00",
            "hcitool -i hci0 cmd 0x08 0x0008 " + Self.iBeaconData,
            "hcitool -i hci0 cmd 0x08 0x000A 01",
        ])
    }

    /// The recipe most copied for a Raspberry Pi: length 0x1E, 30 bytes of data, then 13 zeros
    /// (44 parameter bytes where the command takes 32). A controller reads the length and 31
    /// bytes; the rest is cut and said.
    static let paddedRecipe = "hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 1A 1A FF 4C 00 02 15 "
        + "39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 00 00 00 C5 " + Array(repeating: "00", count: 13).joined(separator: " ")

    @Test func aPaddedRecipeIsCutToItsThirtyTwoBytes() throws {
        let command = try #require(try HcitoolText.command(in: Self.paddedRecipe))
        #expect(command.parameters.count == 44)
        let (cut, ignored) = try #require(HcitoolText.paddingCut(from: command))
        #expect(ignored == 12)
        #expect(cut.parameters == Array(command.parameters.prefix(32)))
        #expect(HcitoolText.paddingWarning(cut, ignored: ignored).contains("44 parameter bytes where it takes 32"))
        // Another command, or a data command of 32 bytes, is left alone.
        #expect(HcitoolText.paddingCut(from: HCICommandPacket(opcode: .leSetAdvertisingEnable, parameters: [1])) == nil)
        #expect(HcitoolText.paddingCut(from: try #require(try HcitoolText.command(
            in: "hcitool cmd 0x08 0x0008 " + Self.iBeaconData))) == nil)
    }

    @Test func aScriptTakesThePaddedRecipeAndSaysWhichLine() throws {
        let script = try HcitoolScript(parsing: "sudo hciconfig hci0 up\n" + Self.paddedRecipe + "\nhcitool cmd 0x08 0x000a 01")
        let data = try #require(script.data)
        #expect(HexText.format(data.bytes, separator: " ") == Self.paddedRecipe.split(separator: " ").dropFirst(6).dropFirst()
            .prefix(30).joined(separator: " "))
        #expect(script.warnings.count == 1)
        #expect(script.warnings.first?.hasPrefix("line 2: LE Set Advertising Data has 44 parameter bytes") == true,
                "\(script.warnings)")
    }

    /// A fault in a script's data is counted from the command's first parameter byte, inner
    /// offsets too: the command's length byte is byte 0, the Flags' length byte 1.
    @Test func aFaultInAScriptsDataIsAtTheParameterByte() throws {
        do {
            _ = try HcitoolScript(parsing: Self.paddedRecipe.replacingOccurrences(of: "1A 1A FF", with: "1A 1B FF"))
            Issue.record("a truncated structure was read")
        } catch {
            // The structure's length byte is parameter byte 4, its data (26 bytes wanted, 25 left) from byte 6.
            #expect(error.description.hasPrefix("line 1: LE Set Advertising Data: advertising data: byte 6: truncated: "
                + "Manufacturer Specific Data (length 27 at byte 4)"), "\(error)")
        }
    }
}
