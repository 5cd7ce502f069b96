// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `--config FILE` as a service's owner meets it: each mistake at FILE:LINE:COLUMN with what
/// was expected there, input that does not decode (65, as a scenario's mistake is) before
/// anything is opened, and no file that can make the reader take the machine's memory.
@Suite struct ConfigurationFileCommandTests {
    func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    @Test(arguments: [
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: seven}\n", ":2:69: beacon 1: minor must be a number from 0 to 65535, got 'seven'"),
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: 2, colour: red}\n",
         ":2:80: beacon 1: unknown key 'colour': a beacon takes type, format, uuid, major, minor, measured-power"),
        ("{\"beacons\": [{\"uuid\": \"\(uuid)\", \"major\": \"7\", \"minor\": 2}]}\n",
         ":1:72: beacon 1: major must be a number from 0 to 65535, got the string \"7\" (write it without quotes)"),
        ("beacon:\n  - {uuid: \(uuid)}\n", ":1:1: unknown key 'beacon' in the configuration: expected one of beacons"),
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: 2, address: nowhere}\n",
         ":2:81: beacon 1: address must be public, static or non-resolvable (a random address made up for it) or a random AA:BB:CC:DD:EE:FF, got 'nowhere'"),
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: 2, interval: 5}\n",
         ":2:82: beacon 1: interval must be from 20 to 10485759 ms (extended advertising), got '5'"),
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: 2}\nmetrics: localhost\n",
         ": metrics: --metrics takes PORT or ADDRESS:PORT (9464, 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464), got 'localhost'"),
        ("beacons:\n  - {uuid: \(uuid), major: 101, minor: 2}\nmetrics: [9464]\n", ":3:10: metrics (PORT or ADDRESS:PORT)"),
    ])
    func aMistakeIsNamedAtItsPlace(text: String, message: String) throws {
        let path = try file(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["advertise", "--config", path, "--device", "tcp:127.0.0.1:9"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("--config \(path)\(message)"), "\(result.stderr)")
        #expect(!result.stderr.contains("Unknown option"), "\(result.stderr)")
    }

    /// `--check` reads the beacons and says how many, opening nothing (the port given is one
    /// nothing listens on: a run would fail there); a mistake is the same usage error as a run's.
    /// A beacon's own interval and TX power beside its fields.
    @Test func aBeaconsOwnIntervalAndTxPowerAreRead() throws {
        let path = try file("beacons:\n  - {uuid: \(Self.uuid), major: 101, minor: 2, interval: 500, txPower: -8}\n"
                            + "  - {uuid: \(Self.uuid), major: 101, minor: 3}\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let passed = try runBeaconEmit(["--config", path, "--check", "--device", "tcp:127.0.0.1:9"])
        #expect(passed.status == 0 && passed.stdout == "\(path): 2 beacons: valid\n", "\(passed.stderr)")
    }

    @Test func checkReadsTheFileAndOpensNothing() throws {
        let good = try file("beacons:\n  - {uuid: \(Self.uuid), major: 101, minor: 2}\n  - {url: https://example.com}\n")
        let bad = try file("beacons:\n  - {uuid: \(Self.uuid), major: 101, minr: 2}\n")
        defer { for path in [good, bad] { try? FileManager.default.removeItem(atPath: path) } }
        let passed = try runBeaconEmit(["--config", good, "--check", "--device", "tcp:127.0.0.1:9"])
        #expect(passed.status == 0, "\(passed.stderr)")
        #expect(passed.stdout == "\(good): 2 beacons: valid\n")
        let refused = try runBeaconEmit(["--config", bad, "--check", "--device", "tcp:127.0.0.1:9"])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("--config \(bad):2:68: beacon 1: unknown key 'minr'"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
    }

    /// A file others can change is refused before it is read (anyone could change what it
    /// advertises), as sudo and sshd's StrictModes refuse one; readable by others it is fine,
    /// unless it holds an identity key itself: then it names identity-key-file, which finds a
    /// key file beside it, itself refused when others can read it. No message shows the key.
    @Test func filesOthersCanChangeAndKeysOthersCanReadAreRefused() throws {
        let key = "553C66DA1485E9F78849DE00F2CB178E"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ name: String, _ text: String, mode: Int) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }
        func check(_ path: String, _ environment: [String: String] = [:]) throws -> (status: Int32, stderr: String) {
            let result = try runBeaconEmit(["--config", path, "--check", "--device", "tcp:127.0.0.1:9"], environment: environment)
            #expect(!result.stderr.contains(key.prefix(8)) && !result.stdout.contains(key.prefix(8)), "\(result.stderr)")
            return (result.status, result.stderr)
        }
        let plain = try write("plain.yaml", "beacons:\n  - {uuid: \(Self.uuid), major: 101, minor: 2}\n", mode: 0o666)
        let changeable = try check(plain)
        #expect(changeable.status == 65 && changeable.stderr.contains("--config \(plain): other users can change the file (mode "
                + "0666): refused, as anyone on this machine could change what it does; run `chmod o-w \(plain)`"), "\(changeable)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plain)
        #expect(try check(plain).status == 0)

        let eid = "type: eddystone-eid, rotation-exponent: 12, clock: 4096"
        let inline = try write("inline.yaml", "beacons:\n  - {\(eid), identity-key: \(key)}\n", mode: 0o644)
        let readable = try check(inline)
        #expect(readable.status == 65 && readable.stderr.contains("inline.yaml:2:77: beacon 1: identity-key: an identity key in a "
                + "file other users can read (mode 0644): put it in a file of its own that only its owner can read (chmod 600) and "
                + "name that file with identity-key-file"), "\(readable)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: inline)
        #expect(try check(inline).status == 0)

        let keyFile = try write("eid.key", key + "\n", mode: 0o600)
        let named = try write("named.yaml", "beacons:\n  - {\(eid), identity-key-file: eid.key}\n", mode: 0o644)
        #expect(try check(named).status == 0, "a relative key file is found beside the configuration")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        let exposed = try check(named)
        #expect(exposed.status == 65 && exposed.stderr.contains("--identity-key-file \(keyFile): other users can read it (mode "
                + "0644): a key must be readable by its owner alone; run `chmod 600 \(keyFile)`"), "\(exposed)")

        // A unit's credential, named the same wherever the unit runs: outside a unit the
        // variable is missing and said; set (as a check before deploying does), the key is read
        // there and its mode trusted, as systemd's copy shows its access list in the group bits.
        let credential = try write("credential.yaml", "beacons:\n  - {\(eid), identity-key-file: $CREDENTIALS_DIRECTORY/eid.key}\n",
                                   mode: 0o644)
        let unset = try check(credential, ["CREDENTIALS_DIRECTORY": ""])
        #expect(unset.status == 65 && unset.stderr.contains("--identity-key-file $CREDENTIALS_DIRECTORY/eid.key: CREDENTIALS_DIRECTORY "
                + "is not set: systemd sets it for a unit with LoadCredential= (docs/service.md)"), "\(unset)")
        #expect(try check(credential, ["CREDENTIALS_DIRECTORY": folder.path]).status == 0)
        let elsewhere = try check(credential, ["CREDENTIALS_DIRECTORY": folder.appendingPathComponent("none").path])
        #expect(elsewhere.status == 65 && elsewhere.stderr.contains("/none/eid.key: cannot read the key"), "\(elsewhere)")
    }

    /// Eight levels of ten aliases (10^9 values, 600 bytes): the old reader took 4.4 GB and 25 s
    /// before failing. Run with 100 MB of address space (its whole program included), it is refused at once.
    @Test(.notUnderEmulation("qemu-user's JIT code buffer alone needs 128 MiB of address space, more than the 100 MB limit"))
    func anAliasBombIsRefusedWithinAMemoryLimit() throws {
        var lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...8 {
            lines.append("a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]")
        }
        lines.append("beacons:\n  - {uuid: \(Self.uuid), major: 1, minor: *a8}")
        let path = try file(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let started = ContinuousClock.now
        let result = try runBeaconEmit(["-c", "ulimit -v 102400; exec \"$0\" advertise --config \"$1\" --device tcp:127.0.0.1:9",
                                        try beaconEmitPath(), path], executable: "/bin/sh")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("--config \(path):5:10: the document holds more than 20000 values"), "\(result.stderr)")
        #expect(started.duration(to: .now) < .seconds(10))
    }

    /// The file is read once at start (not once to check the options and again to run): a pipe
    /// written once gives its beacons to the run, and the run goes on to the device (here a
    /// port nothing listens on). Read twice, the second open would wait for a writer forever.
    @Test func theFileIsReadOnceAtStart() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).fifo").path
        #expect(mkfifo(path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let yaml = "beacons:\\n  - {uuid: \(Self.uuid), major: 101, minor: 2}\\n"
        // A bound far above a run's start (three times it under emulation, as the other time bounds).
        let bound = underEmulation ? 30 : 10
        let result = try runBeaconEmit(["-c", "printf '\(yaml)' > \"$1\" & exec timeout -k 2 \(bound) \"$0\" advertise --config \"$1\" "
                                        + "--device tcp:127.0.0.1:1", try beaconEmitPath(), path], executable: "/bin/sh")
        // Killed by timeout instead when a second read waited for a writer.
        #expect(result.status == 69, "no controller there: \(result.stderr)")
        #expect(result.stderr.contains("127.0.0.1:1"), "\(result.stderr)")
    }

    /// A pipe is taken; a device is refused before a byte is read (/dev/zero was read to the
    /// 1 MiB bound; a terminal would wait for typing), and a directory the same.
    @Test func aDeviceOrADirectoryIsRefused() throws {
        for (path, what) in [("/dev/zero", "a device"), (FileManager.default.temporaryDirectory.path, "a directory")] {
            let result = try runBeaconEmit(["--config", path, "--check"])
            #expect(result.status == 74 && result.stderr.contains("--config \(path): cannot read the file: it is \(what), not a "
                                                                  + "regular file or a pipe"), "\(result.status) \(result.stderr)")
        }
    }
}
