// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import Foundation
import Testing

extension Rig {
/// `advertise --hcitool-file`: a tutorial's script advertised the way beacon-emit advertises,
/// heard on the virtual radio as the script set it up.
@Suite struct HcitoolRootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }
    static let data = "1E 02 01 06 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 65 00 02 C5 00"

    func script(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hcitool-\(getpid())-\(UUID().uuidString).sh").path
        try (["#!/bin/sh", "sudo hciconfig hci0 up"] + lines).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// 200 ms (0x0140), ADV_IND, from a random address: heard byte for byte, connectable, from
    /// that address; the emitter reports the interval; a command not about advertising is named.
    @Test func aScriptIsAdvertisedAsItSetsUp() throws {
        let path = try script([
            "sudo hcitool -i hci0 cmd 0x08 0x0005 06 05 04 03 02 C1",
            "sudo hcitool -i hci0 cmd 0x08 0x0008 " + Self.data,
            "sudo hcitool -i hci0 cmd 0x08 0x0006 40 01 40 01 00 01 00 00 00 00 00 00 00 07 00",
            "sudo hcitool -i hci0 cmd 0x03 0x0003",
            "sudo hcitool -i hci0 cmd 0x08 0x000a 01",
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--hcitool-file", path, "--json", "--duration", "3"])
        let wanted = Array(try HexText.parse(Self.data).dropFirst().prefix(30))
        let reports = try scanner.collect(timeout: .seconds(4)) { $0.contains { $0.data == wanted } }
        let heard = try #require(reports.first { $0.data == wanted }, "\(emitter.stderr)")
        #expect(heard.address == (try BluetoothAddress(parsing: "C1:02:03:04:05:06")))
        #expect(heard.kind.map { $0.contains(.connectable) } == true, "\(String(describing: heard.kind))")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        let advertising = emitter.stdout.split(separator: "\n").compactMap { JSONValue(parsing: String($0)) }
            .first { $0["event"]?.string == "advertising" }
        #expect(advertising?["intervalUnits"]?.integer == 320, "\(emitter.stdout)")
        #expect(emitter.stdout.contains("line 6: Reset: not about advertising, not sent"), "\(emitter.stdout)")
    }

    @Test(arguments: [
        (["sudo hcitool -i hci0 cmd 0x08 0x000a 01"], "no advertising data: the script has no `hcitool cmd 0x08 0x0008` line"),
        (["hcitool cmd 0x08 0x0008 " + data, "hcitool cmd 0x08 0x0006 A0 00 A0 00 01 00 00 00 00 00 00 00 00 07 00"],
         "ADV_DIRECT_IND (high duty) (directed advertising) is not what beacon-emit advertises"),
        (["hcitool cmd 0x08 0x0008 05 02 01 06 1A FF"], "LE Set Advertising Data"),
    ])
    func aScriptBeaconEmitCannotAdvertiseIsRefused(lines: [String], message: String) throws {
        let path = try script(lines)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["-i", device, "--hcitool-file", path, "--duration", "1"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// The recipe most copied for a Raspberry Pi, 44 parameter bytes (13 zeros of padding where
    /// the command takes one): advertised as a controller takes it, heard byte for byte, the
    /// padding named as a warning with its line.
    @Test func thePaddedRecipeIsAdvertisedAsAControllerTakesIt() throws {
        let body = "02 01 1A 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 07 00 03 C5"
        let path = try script(["sudo hcitool -i hci0 cmd 0x08 0x0008 1E " + body + " "
                                  + Array(repeating: "00", count: 13).joined(separator: " "),
                               "sudo hcitool -i hci0 cmd 0x08 0x000a 01"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--hcitool-file", path, "--duration", "3"])
        let wanted = try HexText.parse(body)
        let reports = try scanner.collect(timeout: .seconds(4)) { $0.contains { $0.data == wanted } }
        #expect(reports.contains { $0.data == wanted }, "\(emitter.stderr)")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stderr.contains("line 3: LE Set Advertising Data has 44 parameter bytes where it takes 32"),
                "\(emitter.stderr)")
    }

    @Test func theScriptIsTheOnlyDescription() throws {
        let path = try script(["hcitool cmd 0x08 0x0008 " + Self.data])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["-i", device, "--hcitool-file", path, "--connectable"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--hcitool-file sets up the advertising itself: drop --connectable"), "\(result.stderr)")
    }
}
}
