// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

@Suite struct EncodeCommandTests {
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    @Test func iBeaconAdvertisingDataMatchesTheReference() throws {
        for spelling in [Self.uuid, Self.uuid.lowercased(), Self.uuid.replacingOccurrences(of: "-", with: "")] {
            let result = try runBeaconEmit(["encode", "--uuid", spelling, "--major", "101", "--minor", "2"])
            #expect(result.status == 0)
            #expect(result.stdout == "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5\n")
        }
    }

    @Test func hciCommandBytes() throws {
        let legacy = try runBeaconEmit(["encode", "--uuid", Self.uuid, "--major", "101", "--minor", "2",
                                        "--measured-power", "-65", "--hci", "--separator", " "])
        // H4 command, LE Set Advertising Data (0x2008), 32 parameter bytes, length 30, data, one zero pad.
        #expect(legacy.stdout == "01 08 20 20 1E 02 01 06 1A FF 4C 00 02 15 39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2 00 65 00 02 BF 00\n")
        let extended = try runBeaconEmit(["encode", "--uuid", Self.uuid, "--major", "101", "--minor", "2",
                                          "--hci", "--extended"])
        // LE Set Extended Advertising Data (0x2037): handle 0, complete, no fragmenting, 30 bytes.
        #expect(extended.stdout == "013720220003011E0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5\n")
    }

    @Test(arguments: [
        (["--major", "65536", "--minor", "2"], "--major must be from 0 to 65535, got 65536"),
        (["--major", "1", "--minor", "-1"], "--minor must be from 0 to 65535, got -1"),
        (["--major", "1", "--minor", "2", "--measured-power", "200"], "--measured-power must be from -128 to 127 dBm, got 200"),
    ])
    func outOfRangeValuesAreUsageErrors(arguments: [String], message: String) throws {
        try expectUsageError(["encode", "--uuid", Self.uuid] + arguments, message)
    }

    /// Eddystone-EID: the frame for the counter given, with the identifier OpenSSL gives for it
    /// (`EddystoneEIDComputationTests`: K 12, counter 4096, the period after the first).
    @Test func anEIDFrameIsTheOneForTheClockGiven() throws {
        let result = try runBeaconEmit(["encode", "--eddystone-eid", "--identity-key", "553C66DA1485E9F78849DE00F2CB178E",
                                        "--rotation-exponent", "12", "--clock", "4096"])
        #expect(result.status == 0, "\(result.stderr)")
        // Flags, the 0xFEAA list, service data: 0x30, TX power at 0 m -18 (0xEE), the identifier.
        #expect(result.stdout == "0201060303AAFE0D16AAFE30EE8F56056BCE87688D\n")
    }

    /// The key from a file only its owner reads gives the specification's EID; the same file
    /// readable by others is refused (exit 64, its mode and `chmod 600` named), as a missing
    /// one is; no message carries any part of the key. On the command line the key still
    /// works, with a warning that other users can read it.
    @Test func theKeyComesFromAFileOnlyItsOwnerReads() throws {
        let key = "553C66DA1485E9F78849DE00F2CB178E"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("eid-\(UUID().uuidString).key").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data("  \(key)\n".utf8), attributes: [.posixPermissions: 0o600]))
        let arguments = ["encode", "--eddystone-eid", "--identity-key-file", path, "--rotation-exponent", "12", "--clock", "4096"]
        let read = try runBeaconEmit(arguments)
        #expect(read.status == 0 && read.stdout == "0201060303AAFE0D16AAFE30EE8F56056BCE87688D\n" && read.stderr.isEmpty,
                "\(read.status) \(read.stderr)")
        for (mode, who) in [(0o644, "other users can read it (mode 0644)"), (0o640, "other users can read it (mode 0640)"),
                            (0o602, "other users can change it (mode 0602)")] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let refused = try runBeaconEmit(arguments)
            #expect(refused.status == 64 && refused.stderr.contains("--identity-key-file \(path): \(who): a key must be readable by "
                                                                    + "its owner alone; run `chmod 600 \(path)`"), "\(refused.stderr)")
            #expect(!refused.stderr.contains(key.prefix(8)) && refused.stdout.isEmpty)
        }
        // One wrong digit (31 right ones): its place, not the key.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try Data((key.dropLast() + "Z").utf8).write(to: URL(fileURLWithPath: path))
        let wrong = try runBeaconEmit(arguments)
        #expect(wrong.status == 64 && wrong.stderr.contains("character 32 is not a hex digit (the key was not shown)"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains(key.prefix(8)) && !wrong.stderr.contains(key.dropFirst(16).prefix(8)))
        let missing = try runBeaconEmit(["encode", "--eddystone-eid", "--identity-key-file", path + ".none"])
        #expect(missing.status == 64 && missing.stderr.contains("\(path).none: cannot read the key: No such file or directory"),
                "\(missing.stderr)")
        // On the command line: it works, and says who else can read it.
        let given = try runBeaconEmit(["encode", "--eddystone-eid", "--identity-key", key, "--rotation-exponent", "12", "--clock", "4096"])
        #expect(given.status == 0 && given.stdout == read.stdout)
        #expect(given.stderr == "beacon-emit: warning: an identity key on the command line can be read by every local user (ps, "
                + "/proc/PID/cmdline): put it in a file only you can read (chmod 600) and give --identity-key-file FILE\n")
    }

    /// A key file that is a FIFO (whose read would wait for a writer), a directory or a device
    /// is refused at once, naming it, before a byte is read.
    @Test func aKeyFileThatIsNoRegularFileIsRefusedAtOnce() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("eid-\(UUID().uuidString).fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: fifo) }
        for path in [fifo, FileManager.default.temporaryDirectory.path, "/dev/null"] {
            let emitter = try BackgroundProcess.beaconEmit(["encode", "--eddystone-eid", "--identity-key-file", path])
            #expect(emitter.wait(timeout: .seconds(5)) == 64, "\(path): \(emitter.stderr)")
            #expect(emitter.stderr.contains("--identity-key-file \(path): cannot read the key: it is not a regular file"),
                    "\(emitter.stderr)")
        }
    }

    @Test(arguments: [
        (["--identity-key", "553C66DA"], "--identity-key has 8 hex digits (the key was not shown): a key is 32 hex digits (AES-128)"),
        (["--identity-key", "553C66DA1485E9F78849DE00F2CB178Z"], "--identity-key: character 32 is not a hex digit (the key was not shown)"),
        (["--identity-key", "553C66DA1485E9F78849DE00F2CB178E", "--rotation-exponent", "16"],
         "--rotation-exponent must be from 0 to 15, got 16"),
        (["--identity-key", "553C66DA1485E9F78849DE00F2CB178E", "--rotation-exponent", "-1"],
         "--rotation-exponent must be from 0 to 15, got -1"),
    ])
    func aBadEIDIsAUsageError(arguments: [String], message: String) throws {
        try expectUsageError(["encode", "--eddystone-eid"] + arguments, message)
        // Whatever is wrong, no message repeats the digits given.
        let result = try runBeaconEmit(["encode", "--eddystone-eid"] + arguments)
        #expect(!result.stderr.contains("553C66DA"), "\(result.stderr)")
    }

    private func expectUsageError(_ arguments: [String], _ message: String) throws {
        let result = try runBeaconEmit(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Error: \(message)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }


    @Test func fifteenByteUUIDIsAUsageErrorSayingTheLength() throws {
        let result = try runBeaconEmit(["encode", "--uuid", "39ED98FF2900441A802F9C398FC199", "--major", "1", "--minor", "2"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("expected 32 hex digits (16 bytes), with or without dashes, found 30 hex digits (15 bytes)"))
    }

    @Test func missingFieldsAndConflictingFormats() throws {
        #expect(try runBeaconEmit(["encode", "--uuid", Self.uuid, "--minor", "2"]).stderr.contains("missing --major"))
        let both = try runBeaconEmit(["encode", "--eddystone-uid", "--eddystone-url", "https://x.io"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("url does not apply to an eddystone-uid beacon"))
        #expect(try runBeaconEmit(["encode", "--eddystone-url", "ftp://x"]).status == 64)
        #expect(try runBeaconEmit(["encode", "--eddystone-uid", "--namespace", "0011", "--instance", "AABBCCDDEEFF"])
            .stderr.contains("--namespace must be 10 bytes (20 hex digits), got 2 bytes"))
    }

    @Test(arguments: [
        (["--temperature", "127.999"], "--temperature must be from -127.99 to 127.99 degrees C, got 127.999"),
        (["--temperature", "-128"], "--temperature must be from -127.99 to 127.99 degrees C, got -128.0"),
        (["--temperature", "nan"], "--temperature must be from -127.99 to 127.99 degrees C, got nan"),
        (["--uptime", "1e300"], "--uptime must be from 0 to 429496729.5 seconds, got 1e+300"),
        (["--uptime", "-1"], "--uptime must be from 0 to 429496729.5 seconds, got -1.0"),
        (["--pdu-count", "4294967296"], "--pdu-count must be from 0 to 4294967295, got 4294967296"),
    ])
    func telemetryRangesAreUsageErrorsNotCrashes(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(["encode", "--eddystone-tlm"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Error: \(message)"), "\(result.stderr)")
    }

    /// Every format encoded by the CLI decodes back to what was asked for.
    @Test(arguments: [
        (["--altbeacon", "--uuid", uuid, "--major", "7", "--minor", "8", "--company-id", "0x0059"],
         #"{"type":"altbeacon","companyId":89,"id1":"39ED98FF-2900-441A-802F-9C398FC199D2","id2":7,"id3":8,"measuredPower":-59,"reserved":0}"#),
        (["--eddystone-uid", "--namespace", "00112233445566778899", "--instance", "aabbccddeeff", "--measured-power", "-60"],
         #"{"type":"eddystone-uid","namespace":"00112233445566778899","instance":"AABBCCDDEEFF","txPowerAt0m":-19,"measuredPower":-60}"#),
        (["--eddystone-url", "https://www.example.com/x"],
         #"{"type":"eddystone-url","url":"https://www.example.com/x","txPowerAt0m":-18,"measuredPower":-59}"#),
        (["--eddystone-tlm", "--battery", "2950", "--temperature", "-3.25", "--pdu-count", "77", "--uptime", "60.5"],
         #"{"type":"eddystone-tlm","version":0,"batteryMillivolts":2950,"temperature":-3.25,"advertisingPduCount":77,"uptimeSeconds":60.5}"#),
        (["--eddystone-tlm"],
         #"{"type":"eddystone-tlm","version":0,"batteryMillivolts":0,"temperature":null,"advertisingPduCount":0,"uptimeSeconds":0.0}"#),
    ])
    func encodeThenDecode(arguments: [String], json: String) throws {
        let encoded = try runBeaconEmit(["encode"] + arguments)
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let decoded = try runBeaconEmit(["decode", "--json"], input: encoded.stdout)
        #expect(decoded.stdoutLines == [json])
    }

    @Test func helpListsTheSubcommands() throws {
        let help = try runBeaconEmit(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("decode"))
        #expect(help.stdout.contains("encode"))
    }
}
