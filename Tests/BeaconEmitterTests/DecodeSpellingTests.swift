// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `decode` on packets as other tools print them: real samples (Fixtures/text/README.md says
/// where each came from), on standard input and as one argument of several lines.
@Suite struct DecodeSpellingTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/text")
    static let reference = #"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59}"#

    func sample(_ name: String) throws -> String {
        try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
    }

    /// hcidump's packets across lines: every advertising report of the capture, and nothing
    /// for its commands and their answers; -R and -X -R give the same beacons.
    @Test(arguments: ["hcidump-R.txt", "hcidump-X-R.txt"])
    func hcidump(file: String) throws {
        let result = try runBeaconEmit(["decode", "--json"], input: try sample(file))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutLines.count == (try reportEventsInCapture()))
        #expect(result.stdoutLines.filter { $0.contains(#""uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2"#) }.count == 16)
        #expect(result.stdoutLines.filter { $0.contains(#""url":"https://www.example.com/x""#) }.count == 16)
        // The capture's first report, read from its bytes: 0x2A bytes of event, RSSI 0xE7 (-25).
        #expect(result.stdoutLines.first?.hasSuffix(#""address":"DA:4C:10:DE:17:00","addressType":"public","rssi":-25}"#) == true)
    }

    @Test func hcidumpRawAndHexDumpAgree() throws {
        let raw = try runBeaconEmit(["decode", "--json"], input: try sample("hcidump-R.txt"))
        let dump = try runBeaconEmit(["decode", "--json"], input: try sample("hcidump-X-R.txt"))
        #expect(raw.stdout == dump.stdout)
        #expect(!raw.stdout.isEmpty)
    }

    /// btmon: the bytes it prints (Flags, service data, service UUIDs) make the Eddystone
    /// reports again, as hcidump's give them; its iBeacon fields are an error that says why.
    @Test func btmon() throws {
        let fromBtmon = try runBeaconEmit(["decode", "--json"], input: try sample("btmon.txt"))
        let fromHcidump = try runBeaconEmit(["decode", "--json"], input: try sample("hcidump-R.txt"))
        #expect(fromBtmon.status == 65)
        let eddystone = fromHcidump.stdoutLines.filter { $0.contains("eddystone-url") }
        #expect(fromBtmon.stdoutLines == eddystone)
        #expect(eddystone.count == 16)
        // The advice once, with the lines it holds for again counted (it was printed 16 times).
        let errors = fromBtmon.stderr.split(separator: "\n")
        #expect(errors.count == 3, "\(fromBtmon.stderr)")
        #expect(errors.first?.hasPrefix("beacon-emit: line 98: btmon prints an iBeacon's fields, not its bytes") == true)
        #expect(errors.dropFirst().first == "beacon-emit: line 98's message holds for 15 more lines too (129, 160, 191, 222, 253, ...)")
        #expect(errors.last == "beacon-emit: 16 of 32 inputs failed to decode")
    }

    /// One packet per dump, whatever tool made it.
    @Test(arguments: ["xxd.txt", "hexdump-C.txt", "od-Ax-tx1.txt"])
    func offsetDumps(file: String) throws {
        let text = try sample(file)
        let piped = try runBeaconEmit(["decode", "--json"], input: text)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdoutLines == [Self.reference])
        let argument = try runBeaconEmit(["decode", "--json", text])
        #expect(argument.status == 0, "\(argument.stderr)")
        #expect(argument.stdoutLines == [Self.reference])
    }

    @Test func wiresharkHexDumpsOneAfterAnother() throws {
        let result = try runBeaconEmit(["decode", "--json"], input: try sample("tshark-x.txt"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 4)
        #expect(result.stdoutLines[1].hasPrefix(String(Self.reference.dropLast())))
        #expect(result.stdoutLines[1].hasSuffix(#""rssi":-30}"#))
        #expect(result.stdoutLines[0].contains(#""rssi":-25}"#) && result.stdoutLines[0].contains("eddystone-url"))
    }

    @Test func androidLogs() throws {
        let logcat = try runBeaconEmit(["decode", "--json"], input: try sample("android-logcat.txt"))
        #expect(logcat.status == 0, "\(logcat.stderr)")
        // [.., -71, 64, 127, 48, ...] is B9 40 7F 30: Estimote's UUID; major 0x8647, minor 0x54B3, power -74.
        #expect(logcat.stdoutLines == [
            #"{"type":"ibeacon","uuid":"B9407F30-F5F8-466E-AFF9-25556B57FE6D","major":34375,"minor":21683,"measuredPower":-74}"#,
        ])
        let record = try runBeaconEmit(["decode", "--json"], input: try sample("android-scanrecord.txt"))
        #expect(record.status == 0, "\(record.stderr)")
        #expect(record.stderr.isEmpty)
        #expect(record.stdoutLines.count == 2)
        #expect(record.stdoutLines.first ==
            #"{"type":"ibeacon","uuid":"E1F54E02-1E23-44E0-9C3D-512EB56ADEC9","major":100,"minor":100,"measuredPower":-71}"#)
        #expect(record.stdoutLines.last?.contains(#""namespace":"F86410C4C588A9CEC5F1","instance":"009000011523""#) == true)
    }

    @Test func appleLogs() throws {
        let mac = try runBeaconEmit(["decode", "--json"], input: try sample("apple-macos.txt"))
        #expect(mac.status == 0, "\(mac.stderr)")
        #expect(mac.stdoutLines == [
            #"{"type":"ibeacon","uuid":"A495BB30-C5B1-4B44-B512-1370F02D74DE","major":67,"minor":1024,"measuredPower":5}"#,
        ])
        let elided = try runBeaconEmit(["decode"], input: try sample("apple-ios-elided.txt"))
        #expect(elided.status == 65)
        #expect(elided.stderr.contains("line 1: the log left out the middle of these 29 bytes"), "\(elided.stderr)")
        #expect(elided.stdout.isEmpty)
    }

    /// An unset variable in a CI script: an error that says so, not silence.
    @Test func anEmptyArgumentIsAnError() throws {
        for arguments in [["decode", ""], ["decode", "--json", DecodeCommandTests.reference, "  "]] {
            let result = try runBeaconEmit(arguments)
            #expect(result.status == 65)
            #expect(result.stderr.contains("is empty (an unset variable?)"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// Plain hex keeps its errors; text that is neither hex nor another tool's packet is
    /// reported too, unless the input shows itself to be a log.
    @Test func textIsAnErrorUnlessTheInputIsALog() throws {
        let plain = try runBeaconEmit(["decode"], input: "hello world\n\(DecodeCommandTests.reference)\n")
        #expect(plain.status == 65)
        #expect(plain.stderr.contains("line 1: hex text: byte 0"), "\(plain.stderr)")
        #expect(plain.stdoutLines.count == 1)
        let log = try runBeaconEmit(["decode"], input: "hello world\n" + (try sample("android-logcat.txt")) + "bye\n")
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.stdoutLines.count == 1)
    }
}
