// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

@Suite struct DecodeCommandTests {
    static let reference = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"

    @Test func jsonMatchesTheDocumentedExample() throws {
        let result = try runBeaconEmit(["decode", "--json", Self.reference])
        #expect(result.status == 0)
        #expect(result.stdoutLines == [
            #"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59}"#,
        ])
        #expect(result.stderr.isEmpty)
    }

    /// An Eddystone-UID frame that says -90 dBm at 0 m: 1 m is -131 dBm, below what a signed
    /// byte holds, and is reported as it is (it was clamped to -128).
    /// A path that cannot be read is named with the system's reason and exit 74 (it was read as
    /// hex: "byte 0: expected a hex digit, found 'm'", exit 65, blaming the capture).
    @Test func aFileThatCannotBeReadIsSaidSo() throws {
        let missing = try runBeaconEmit(["decode", "missing.pcap"])
        #expect(missing.status == 74 && missing.stderr == "beacon-emit: missing.pcap: cannot read the file: No such file or directory\n",
                "\(missing.status) \(missing.stderr)")
        let directory = try runBeaconEmit(["decode", "/tmp/"])
        #expect(directory.status == 74 && directory.stderr.contains("/tmp/: cannot read the file: Is a directory"), "\(directory.stderr)")
        // Beside input that decodes: that is printed, and the exit is still 74.
        let both = try runBeaconEmit(["decode", "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5", "/no/such/file"])
        #expect(both.status == 74 && both.stdout.contains("iBeacon"), "\(both.status) \(both.stdout) \(both.stderr)")
        // Hex is still hex, and a word that is no path is still judged as hex.
        #expect(try runBeaconEmit(["decode", "zz"]).status == 65)
        // A FIFO nobody writes to is refused at once (its open waited for a writer, for good).
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("decode-\(UUID().uuidString).fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let waited = try runBeaconEmit(["-c", "exec timeout -k 1 10 \"$0\" decode \"$1\"", try beaconEmitPath(), fifo],
                                       executable: "/bin/sh")
        #expect(waited.status == 74 && waited.stderr.contains("\(fifo): cannot read the file: it is a FIFO, a pipe or a device, "
                                                               + "not a regular file"), "\(waited.status) \(waited.stderr)")
    }

    @Test func measuredPowerIsNeverClamped() throws {
        let frame = "0201060303AAFE1716AAFE00A6" + "00112233445566778899" + "AABBCCDDEEFF" + "0000"
        let result = try runBeaconEmit(["decode", "--json", frame])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""measuredPower":-131"#), "\(result.stdout)")
        #expect(result.stdout.contains(#""txPowerAt0m":-90"#), "\(result.stdout)")
    }

    /// The Raspberry Pi recipe with 13 bytes of padding (44 parameter bytes): decoded as a
    /// controller takes it, with a warning; a fault in it is at the same byte for `decode` and
    /// `--hcitool-file`, counted from the command's first parameter byte.
    @Test func aPaddedHcitoolRecipeDecodesAndAFaultIsWhereTheScriptSaysItIs() throws {
        let recipe = "sudo hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 1A 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 "
            + "8F C1 99 D2 00 65 00 02 C5 " + Array(repeating: "00", count: 13).joined(separator: " ")
        let decoded = try runBeaconEmit(["decode", "--json"], input: recipe + "\n")
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutLines == [
            #"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59}"#,
        ])
        #expect(decoded.stderr.contains("warning: line 1: LE Set Advertising Data has 44 parameter bytes"), "\(decoded.stderr)")

        let faulty = recipe.replacingOccurrences(of: "1A 1A FF", with: "1A 1B FF")
        let decodeFault = try runBeaconEmit(["decode"], input: faulty + "\n")
        #expect(decodeFault.status == 65)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("recipe-\(UUID().uuidString).sh").path
        try (faulty + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scriptFault = try runBeaconEmit(["--device", "virtual", "--hcitool-file", path, "--check"])
        #expect(scriptFault.status == 64)
        let fault = "LE Set Advertising Data: advertising data: byte 6: truncated: Manufacturer Specific Data (length 27 at byte 4)"
        #expect(decodeFault.stderr.contains(fault), "\(decodeFault.stderr)")
        #expect(scriptFault.stderr.contains(fault), "\(scriptFault.stderr)")
    }

    @Test func readableOutput() throws {
        let result = try runBeaconEmit(["decode", Self.reference])
        #expect(result.stdout ==
            "iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2 measuredPower=-59dBm\n")
    }

    @Test func everySpellingOfTheSameBytes() throws {
        let spaced = stride(from: 0, to: Self.reference.count, by: 2).map { offset -> String in
            let start = Self.reference.index(Self.reference.startIndex, offsetBy: offset)
            return String(Self.reference[start..<Self.reference.index(start, offsetBy: 2)])
        }
        let inputs = [spaced.joined(separator: " "), spaced.joined(separator: ":").lowercased(),
                      spaced.map { "0x" + $0 }.joined(separator: " "), "0x" + Self.reference]
        let result = try runBeaconEmit(["decode", "--json"] + inputs)
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 4)
        #expect(Set(result.stdoutLines).count == 1)
    }

    @Test func streamKeepsGoingPastBadLinesAndCountsThem() throws {
        let input = """
            # a comment, skipped
            \(Self.reference)
            02 01 0G

            0201061AFF4C000215
            02 01 06
            04 3E 2A 02 01 03 00 01 17 DE 10 4C DA 1E \(Self.reference) C4
            """
        let result = try runBeaconEmit(["decode", "--json"], input: input)
        #expect(result.status == 65)
        let errors = result.stderr.split(separator: "\n").map(String.init)
        #expect(errors == [
            "beacon-emit: line 3: hex text: byte 7: character: expected a hex digit, found 'G'",
            "beacon-emit: line 5: advertising data: byte 5: truncated: Manufacturer Specific Data (length 26 at byte 3) needs 25 bytes, only 4 left",
            "beacon-emit: 2 of 5 inputs failed to decode",
        ])
        #expect(result.stdoutLines.count == 3)
        // Flags alone: no beacon, its one AD structure named.
        #expect(result.stdoutLines[1] == #"{"type":"advertisement","structures":[{"adType":1,"name":"Flags","value":6,"flags":["LE General Discoverable","BR/EDR Not Supported"]}]}"#)
        #expect(result.stdoutLines.last ==
            #"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59,"address":"DA:4C:10:DE:17:01","addressType":"public","rssi":-60}"#)
    }

    /// A file of thousands of lines is decoded in halves on two threads (where there are two
    /// cores): results and errors still come in input order, with the right line numbers.
    /// A file is mapped and a pipe is read: over more than one mapped piece, with CRLF line
    /// ends, comments, bad lines and a last line without a line end, both give the same output.
    @Test func fileAndPipeGiveTheSameOutput() throws {
        var lines: [String] = []
        for number in 1...20_000 {
            let major = String(format: "%04X", number & 0xFFFF)
            switch number % 97 {
            case 0: lines.append("# comment \(number)")
            case 1: lines.append("02 01 0G")
            case 2: lines.append("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D2\(major)0002C5\r")
            default: lines.append("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D2\(major)0002C5")
            }
        }
        let input = lines.joined(separator: "\n")  // more than 1 MiB, no line end after the last line
        #expect(input.utf8.count > 1 << 20)
        let fromFile = try runBeaconEmit(["decode", "--json"], input: input, fromFile: true)
        let fromPipe = try runBeaconEmit(["decode", "--json"], input: input)
        #expect(fromFile.status == 65 && fromPipe.status == 65)
        #expect(fromFile.stdout == fromPipe.stdout)
        #expect(fromFile.stderr == fromPipe.stderr)
        #expect(fromFile.stdoutLines.count == 20_000 - 2 * (20_000 / 97) - (20_000 % 97 >= 1 ? 1 : 0))
        #expect(fromFile.stdoutLines.last?.contains(#""major":\#(20_000)"#) == true)
    }

    @Test func largeInputKeepsInputOrder() throws {
        let count = 6000
        var lines: [String] = []
        for number in 1...count {
            if number % 50 == 0 {
                lines.append("02 01 0G")  // bad hex at byte 7
            } else {
                let major = String(format: "%04X", number)
                lines.append("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D2\(major)0002C5")
            }
        }
        let result = try runBeaconEmit(["decode", "--json"], input: lines.joined(separator: "\n") + "\n", fromFile: true)
        #expect(result.status == 65)
        let majors = result.stdoutLines.map { line -> Int in
            guard let range = line.range(of: #""major":"#) else { return -1 }
            return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? -1
        }
        let expected = (1...count).filter { $0 % 50 != 0 }
        let firstDifference = zip(majors, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(majors.count == expected.count && firstDifference == nil,
                "\(majors.count) results, first out of order at result \(firstDifference.map(String.init) ?? "-")")
        let errors = result.stderr.split(separator: "\n").map(String.init)
        #expect(errors.dropLast() == (1...count).filter { $0 % 50 == 0 }.map {
            "beacon-emit: line \($0): hex text: byte 7: character: expected a hex digit, found 'G'"
        })
        #expect(errors.last == "beacon-emit: 120 of 6000 inputs failed to decode")
    }

    @Test func singleBadArgumentIsOneLineAndExit65() throws {
        let result = try runBeaconEmit(["decode", "zz"])
        #expect(result.status == 65)
        #expect(result.stderr == "beacon-emit: argument 1: hex text: byte 0: character: expected a hex digit, found 'z'\n")
        #expect(!result.stderr.contains("Fatal"))
    }

    @Test func arbitraryBytesNeverCrash() throws {
        var generator = SystemRandomNumberGenerator()
        let lines = (0..<300).map { _ in
            (0..<Int.random(in: 1...40, using: &generator))
                .map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &generator)) }.joined()
        }
        let result = try runBeaconEmit(["decode"], input: lines.joined(separator: "\n"))
        #expect(result.status == 0 || result.status == 65)
        #expect(!result.stderr.contains("Crash"))
        #expect(!result.stderr.contains("Fatal error"))
    }

    /// Advertising data without a beacon: every AD structure named, with its value, and the
    /// company of manufacturer data by the Bluetooth SIG's name (0x004C is Apple, 0x0059 Nordic).
    @Test func advertisingDataWithoutABeaconIsDescribed() throws {
        let sensor = "02010609094D7953656E736F7207FF590001020304"
        let appleNotIBeacon = "0AFF4C001005011C1E2F3A"
        let services = "0319C1030503AAFE0F1804160F1864" + "020A0C" + "05020A180F18" + "030F0102"
        let nordicUART = "11079ECADC240EE5A9E093F3A3B50100406E"  // 128-bit UUIDs travel little-endian
        let result = try runBeaconEmit(["decode", sensor, appleNotIBeacon, services, nordicUART])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines == [
            #"advertisement: Flags 0x06 (LE General Discoverable, BR/EDR Not Supported); Complete Local Name "MySensor"; "#
                + "Manufacturer Specific Data Nordic Semiconductor ASA (0x0059): 01020304",
            "advertisement: Manufacturer Specific Data Apple, Inc. (0x004C): 1005011C1E2F3A",
            "advertisement: Appearance 0x03C1; Complete List of 16-bit Service UUIDs FEAA, 180F; "
                + "Service Data - 16-bit UUID 180F: 64; Tx Power Level 12 dBm; "
                + "Incomplete List of 16-bit Service UUIDs 180A, 180F; AD type 0x0F: 0102",
            "advertisement: Complete List of 128-bit Service UUIDs 6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
        ])
        // A company the list does not name has its identifier alone.
        let json = try runBeaconEmit(["decode", "--json", "05FFFEFF0102", "0409414243"])
        #expect(json.stdoutLines == [
            #"{"type":"advertisement","structures":[{"adType":255,"name":"Manufacturer Specific Data","companyId":65534,"data":"0102"}]}"#,
            #"{"type":"advertisement","structures":[{"adType":9,"name":"Complete Local Name","value":"ABC"}]}"#,
        ], "\(json.stdout)")
    }

    /// With --expect, only beacons count: advertising data without one is still a failure.
    @Test func anExpectationStillWantsABeacon() throws {
        let result = try runBeaconEmit(["decode", "--expect", "major=1", "0201060303AAFE"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("expected a beacon"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}

/// `encode` with any payload: the bytes of each building block, and each refusal a usage error
/// naming the option.
@Suite struct EncodeAnyPayloadTests {
    @Test func buildingBlocksMakeTheseBytes() throws {
        let sensor = try runBeaconEmit(["encode", "--name", "MySensor", "--manufacturer-data", "0x0059:01020304"])
        #expect(sensor.stdoutLines == ["020106" + "07FF590001020304" + "09094D7953656E736F72"], "\(sensor.stderr)")
        let services = try runBeaconEmit(["encode", "--flags", "none", "--service-uuid", "180F", "--service-data", "180F:64"])
        #expect(services.stdoutLines == ["03030F18" + "04160F1864"], "\(services.stderr)")
        let whole = try runBeaconEmit(["encode", "--ad", "0201060303AAFE"])
        #expect(whole.stdoutLines == ["0201060303AAFE"])
        let long = try runBeaconEmit(["encode", "--extended-pdu", "--manufacturer-data", "0x0059:" + String(repeating: "11", count: 40)])
        #expect(long.stdoutLines == ["0201062BFF5900" + String(repeating: "11", count: 40)], "\(long.stderr)")
        // With a beacon format: its structures, then the blocks.
        let beacon = try runBeaconEmit(["encode", "--eddystone-url", "https://a.io", "--flags", "04", "--name", "X"])
        #expect(beacon.stdoutLines.first?.hasPrefix("020104" + "0303AAFE") == true, "\(beacon.stdout)")
        #expect(beacon.stdoutLines.first?.hasSuffix("020958") == true, "\(beacon.stdout)")
        // A name that does not fit beside an iBeacon goes whole into the scan response (second line);
        // --hci gives LE Set Scan Response Data after the data.
        let lobby = try runBeaconEmit(["encode", "--uuid", "E2C56DB5DFFB48D2B060D0F5A71096E0", "--major", "1", "--minor", "2",
                                       "--name", "Lobby"])
        #expect(lobby.stdoutLines == ["0201061AFF4C000215E2C56DB5DFFB48D2B060D0F5A71096E000010002C5", "06094C6F626279"],
                "\(lobby.stderr)")
        let hci = try runBeaconEmit(["encode", "--ad", "020106", "--scan-response", "0409414243", "--hci"])
        #expect(hci.stdoutLines == ["01082020" + "03020106" + String(repeating: "00", count: 28),
                                    "01092020" + "050409414243" + String(repeating: "00", count: 26)], "\(hci.stdout)")
        // The same keys in --beacon, several service UUIDs in one value.
        let keys = try runBeaconEmit(["advertise", "--beacon", "name=Hi,service-uuid=180F FEAA", "--device", "tcp:127.0.0.1:1"])
        #expect(keys.status == 69, "parsed, then no controller: \(keys.stderr)")
    }

    /// A scenario takes the same keys, an update step too, each checked at its place.
    @Test func scenariosTakeTheKeys() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            beacons:
              sensor: {name: MySensor, manufacturer-data: "0x0059:0102", service-uuid: 180F FEAA}
            steps:
              - advertise: sensor
              - wait: 1
              - update: {beacon: sensor, name: Other}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let valid = try runBeaconEmit(["run", path, "--check"])
        #expect(valid.status == 0, "\(valid.stderr)")
        try "beacons:\n  sensor: {name: MySensor, manufacturer-data: \"0x10000:01\"}\nsteps:\n  - advertise: sensor\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let wrong = try runBeaconEmit(["run", path, "--check"])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("\(path):2:"), "\(wrong.stderr)")
    }

    @Test(arguments: [
        (["--ad", "0201060303AA"], "--ad 0201060303AA: advertising data: byte 5: truncated"),
        (["--ad", "0201", "--name", "x"], "--ad is the whole advertising data"),
        (["--manufacturer-data", "0x10000:01"], "--manufacturer-data: the company ID must be from 0x0000 to 0xFFFF"),
        (["--manufacturer-data", "0059"], "--manufacturer-data takes ID:HEX"),
        (["--service-data", "18F:01"], "--service-data 18F:01: "),
        (["--flags", "0601"], "--flags takes one byte"),
        (["--manufacturer-data", "0x004C:" + String(repeating: "00", count: 25)], "at most 31 bytes, found 32 bytes"),
        (["--ad", "020106", "--scan-response", "0609414243"], "--scan-response 0609414243: advertising data: byte 2: truncated"),
        (["--scan-response", "20FF" + String(repeating: "00", count: 31)], "at most 31 bytes, found 33 bytes"),
        (["--manufacturer-data", "0x0059:" + String(repeating: "00", count: 30)], "--extended-pdu, or pdu=extended for the beacon alone, allows more"),
        (["--extended-pdu", "--manufacturer-data", "0x0059:" + String(repeating: "00", count: 250)],
         "at most 251 bytes, found 257 bytes"),
    ])
    func refusalsAreUsageErrors(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(["encode"] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}

/// A tutorial's hcitool script, read by `decode` and written by `encode --hcitool`.
@Suite struct HcitoolScriptTests {
    static let script = """
        #!/bin/sh
        sudo hciconfig hci0 up
        sudo hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 06 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 65 00 02 C5 00
        sudo hcitool -i hci0 cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00
        sudo hcitool -i hci0 cmd 0x08 0x000a 01
        """

    @Test func aScriptDecodesToItsBeaconAndWhatItSets() throws {
        let result = try runBeaconEmit(["decode", "--json", "--expect", "major=101,minor=2"], input: Self.script)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines.compactMap { JSONValue(parsing: $0) }
        #expect(lines.count == 3, "\(result.stdout)")
        #expect(lines.first?["type"]?.string == "ibeacon" && lines.first?["minor"]?.integer == 2)
        #expect(lines.dropFirst().map { $0["setting"]?.string ?? "" } == [
            "advertising parameters: interval 100-100 ms, ADV_NONCONN_IND, own address public, channels 37 38 39",
            "advertising on"])
        #expect(lines.dropFirst().map { $0["line"]?.integer ?? 0 } == [4, 5])
    }

    @Test func aMalformedHcitoolLineIsAnErrorNamingTheWord() throws {
        let result = try runBeaconEmit(["decode"], input: "hcitool -i hci0 cmd 0x08 0x0008 1E 0G\n")
        #expect(result.status == 65)
        #expect(result.stderr.contains("line 1: hcitool cmd, word 8: parameter byte 2"), "\(result.stderr)")
    }

    @Test(arguments: [
        (["--interval", "200"], "--interval and --hcitool-device only apply with --hcitool"),
        (["--hcitool", "--interval", "5"], "--interval must be from 20 to 10240 ms"),
        (["--hcitool", "--hci"], "--hcitool and --hci exclude each other"),
    ])
    func misusedHcitoolOptionsAreRefused(options: [String], message: String) throws {
        let result = try runBeaconEmit(["encode", "--uuid", "39ed98ff2900441a802f9c398fc199d2", "--major", "1", "--minor", "2"]
                                       + options)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func dataOverThirtyOneBytesCannotBeAnHcitoolScript() throws {
        let result = try runBeaconEmit(["encode", "--name", String(repeating: "x", count: 60), "--extended-pdu", "--hcitool"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--hcitool writes legacy advertising commands"), "\(result.stderr)")
    }
}
