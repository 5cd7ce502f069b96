// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

/// The readers the output tests use can fail: a key twice, a JUnit count that does not agree.
@Suite struct OutputCheckerTests {
    @Test func aKeyTwiceIsRefused() throws {
        #expect(throws: StrictJSON.Fault.self) { try StrictJSON.check(#"{"type":"eddystone","data":"30","data":"0201"}"#) }
        #expect(throws: StrictJSON.Fault.self) { try StrictJSON.check(#"{"a":{"b":1,"b":2}}"#) }
        let keys = try StrictJSON.check(#"{"a":[{"b":1},{"b":2}],"c":"x\"y","d":null,"e":-1.5e3,"f":true}"#)
        #expect(keys.first == ["a", "c", "d", "e", "f"])
    }

    @Test func aJUnitReportWhoseCountsDisagreeIsRefused() throws {
        let suite = JUnitSuite(name: "a <suite> & \"more\"", cases: [.init("one", .failed("x < y")), .init("two", .skipped("why")),
                                                                   .init("three", .passed, output: "seen")], time: 1.5)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try suite.xml.write(toFile: path, atomically: true, encoding: .utf8)
        let read = try JUnitCheck.read(path)
        #expect(read.suites == ["a <suite> & \"more\""] && read.failures == 1 && read.skipped == 1 && read.messages["one"] == "x < y")
        try suite.xml.replacingOccurrences(of: "failures=\"1\"", with: "failures=\"0\"").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: JUnitCheck.Fault.self) { try JUnitCheck.read(path) }
        try suite.xml.replacingOccurrences(of: "&amp;", with: "&").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try JUnitCheck.read(path) }
    }
}

/// `--junit` is written on every way `verify` and `run` end, each file a valid JUnit report
/// whose suite keeps its name: passed, failed, and runs that never got to judge (a device that
/// cannot be opened, a scenario that does not parse).
@Suite struct JUnitPathTests {
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    func junit(_ arguments: [String]) throws -> (status: Int32, report: JUnitCheck, stderr: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(arguments + ["--junit", path])
        return (result.status, try JUnitCheck.read(path), result.stderr)
    }

    @Test func verifyWritesItOnEveryOutcome() throws {
        let beacon = ["--uuid", Self.uuid, "--major", "1", "--minor", "2"]
        let name = "beacon-emit verify ibeacon uuid=\(Self.uuid) major=1 minor=2"
        let passed = try junit(["verify", "--device", "virtual", "--scanner", "virtual"] + beacon)
        #expect(passed.status == 0 && passed.report.suites == [name] && passed.report.cases == ["heard", "fields"], "\(passed)")
        #expect(passed.report.failures == 0 && passed.report.errors == 0)
        // No device to emit on, nothing on the air: the beacon is not heard.
        let unheard = try junit(["verify", "--scanner", "virtual", "--timeout", "0.5"] + beacon)
        #expect(unheard.status != 0 && unheard.report.suites == [name], "\(unheard)")
        #expect(unheard.report.failures + unheard.report.errors == 1, "\(unheard)")
        let exact = try junit(["verify", "--device", "virtual", "--scanner", "virtual", "--exact", "--junit-name", "mine"] + beacon)
        #expect(exact.status == 0 && exact.report.suites == ["beacon-emit verify mine"] && exact.report.cases == ["heard", "bytes"])
        let noDevice = try junit(["verify", "--scanner", "hci9", "--timeout", "0.5"] + beacon)
        #expect(noDevice.status == 69 && noDevice.report.errors == 1 && noDevice.report.suites == [name], "\(noDevice)")
        // A signal ends the wait: the report says so.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let waiting = try BackgroundProcess.beaconEmit(["verify", "--scanner", "virtual", "--timeout", "20", "--junit", path] + beacon)
        // Once it takes SIGINT itself in its private namespace (a busy machine starts the virtual device slowly).
        #expect(waiting.waitUntilHandles(SIGINT, environment: "BEACON_EMIT_PRIVATE_NAMESPACE=1"), "\(waiting.stderr)")
        Thread.sleep(forTimeInterval: 1)
        waiting.signal(SIGINT)
        #expect(waiting.wait(timeout: .seconds(30)) == 1, "\(waiting.stderr)")  // a bound for a hang, not a speed
        let interrupted = try JUnitCheck.read(path)
        #expect(interrupted.failures == 1 && interrupted.messages["heard"]?.contains("before a signal ended the wait") == true,
                "\(interrupted)")
    }

    /// `run --check` names what a scenario would start on this machine, at its place in the
    /// file: a reviewer sees a ProxyCommand before the file runs it.
    @Test func runCheckNamesWhatTheScenarioRunsHere() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            hosts:
              lobby: {ssh: beacon@pi-lobby, control: /run/lobby, sshOptions: ['-oProxyCommand=sh -c id']}
            beacons:
              door: {host: lobby, uuid: \(Self.uuid), major: 1, minor: 3}
            steps:
              - advertise: door
            """.write(toFile: path, atomically: true, encoding: .utf8)
        // An option off the allow-list is refused unless the command line allows it.
        let refused = try runBeaconEmit(["run", path, "--check"])
        #expect(refused.status == 65 && refused.stderr.contains("\(path):2:67: host 'lobby': the ssh option '-oProxyCommand=sh -c id' "
                                                                + "is not one a scenario may give"), "\(refused.stderr)")
        let checked = try runBeaconEmit(["run", path, "--check", "--allow-ssh-options"])
        let lines = checked.stdout.split(separator: "\n").map(String.init)
        #expect(checked.status == 0 && lines.count == 3, "\(checked.status) \(checked.stdout) \(checked.stderr)")
        #expect(lines.first == "\(path): 1 beacon, 1 step, 1 host: valid", "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("\(path):2:16: host 'lobby': runs ssh -T ") == true, "\(lines)")
        #expect(lines.last == "\(path):2:67: host 'lobby': -o ProxyCommand: ssh runs the command 'sh -c id' on this machine", "\(lines)")
    }

    @Test func runWritesItWhenTheRunNeverStarts() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("junit-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let broken = folder.appendingPathComponent("broken.yaml").path
        try "steps: [\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let unreadable = try junit(["run", broken])
        #expect(unreadable.status == 65 && unreadable.report.suites == ["broken"] && unreadable.report.errors == 1, "\(unreadable)")
        // Nested 5,000 deep (10 KB): refused where it passes the bound, before its tree is built
        // (composing it overflowed the stack: signal 11, no report).
        // A chain of aliases, 2 deep as written and 50,000 once composed (freeing it overflowed
        // the stack: exit 139, no report), likewise.
        let deep = folder.appendingPathComponent("deep.yaml").path
        try ("beacons: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\nsteps: []\n")
            .write(toFile: deep, atomically: true, encoding: .utf8)
        let chain = folder.appendingPathComponent("chain.yaml").path
        try ("beacons:\n  - &a [0]\n" + String(repeating: "  - &a [*a]\n", count: 50_000) + "steps: []\n")
            .write(toFile: chain, atomically: true, encoding: .utf8)
        for (file, place) in [(deep, "deep.yaml:1:73"), (chain, "chain.yaml:64:9")] {
            let suite = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
            for arguments in [["run", file], ["run", file, "--check"]] {
                let refused = try junit(arguments)
                #expect(refused.status == 65 && refused.report.suites == [suite] && refused.report.errors == 1, "\(refused)")
                #expect(refused.stderr.contains("\(place): lists and maps nest more than 64 deep here"), "\(refused.stderr)")
            }
            let config = try runBeaconEmit(["advertise", "--config", file, "--check"])
            #expect(config.status == 65 && config.stderr.contains("\(place): lists and maps nest more than 64 deep"),
                    "\(config.status) \(config.stderr)")
        }
        let scenario = folder.appendingPathComponent("lobby.yaml").path
        try """
            beacons:
              lobby: {uuid: \(Self.uuid), major: 1, minor: 1}
            steps:
              - advertise: lobby
              - wait: 0.2
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let noDevice = try junit(["run", scenario, "--device", "hci9"])
        #expect(noDevice.status == 69 && noDevice.report.suites == ["lobby"] && noDevice.report.errors == 1, "\(noDevice)")
    }
}

/// Every kind of JSON the tool writes, read with a reader that refuses a key written twice:
/// decode's beacons and settings, scan's beacons, unknown reports and scan responses, audit,
/// verify, advertise's events, monitor and calibrate.
@Suite struct StrictJSONOutputTests {
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"
    /// Advertising data of each kind: iBeacon, AltBeacon, Eddystone-UID, -URL, -TLM, -EID, an
    /// Eddystone frame without a name (0x40, no frame type yet), data without a beacon.
    static let data = [
        "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5",
        "1BFF1801BEAC39ED98FF2900441A802F9C398FC199D200650002C500",
        "0201060303AAFE1716AAFE00EE00112233445566778899AABBCCDDEEFF0000",
        "0201060303AAFE0E16AAFE10EE016578616D706C6507",
        "0201060303AAFE1116AAFE20000BB810000000000100000064",
        "0201060303AAFE0D16AAFE30EE0102030405060708",
        "0201060303AAFE0716AAFE40EE0102",
        "02010609094D7953656E736F72",
    ]

    /// An LE Advertising Report (H4) of `data` from one address: ADV_NONCONN_IND, or SCAN_RSP.
    static func report(_ data: String, scanResponse: Bool = false) -> String {
        let length = data.count / 2
        return "043E" + String(format: "%02X", 12 + length) + "0201" + (scanResponse ? "04" : "03") + "01" + "0605040302C1"
            + String(format: "%02X", length) + data + "C4"
    }

    func check(_ lines: [String], _ what: String) {
        #expect(!lines.isEmpty, "\(what): no output")
        for line in lines {
            do {
                try StrictJSON.check(line)
            } catch {
                Issue.record("\(what): \(error)")
            }
        }
    }

    @Test func decodesJSONHasEachKeyOnce() throws {
        let input = (Self.data + [Self.report(Self.data[5]), "hcitool cmd 0x08 0x000a 01"]).joined(separator: "\n") + "\n"
        let result = try runBeaconEmit(["decode", "--json"], input: input)
        check(result.stdoutLines, "decode")
        #expect(result.stdoutLines.count == 10, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains(#""type":"eddystone-eid","eid":"0102030405060708","txPowerAt0m":-18,"measuredPower":-59"#),
                "\(result.stdout)")
        #expect(result.stdout.contains(#""frameType":64,"frameData":"EE0102""#), "\(result.stdout)")
    }

    @Test func scansJSONHasEachKeyOnce() throws {
        let path = try writeBtsnoop(Self.data.map { Self.report($0) } + [Self.report("03094869", scanResponse: true)],
                                    spacing: 100_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path, "--json", "--duplicates"])
        check(result.stdoutLines, "scan")
        #expect(result.stdoutLines.count == 9, "\(result.stdout) \(result.stderr)")
        let eid = result.stdoutLines.first { $0.contains(#""type":"eddystone-eid""#) } ?? ""
        #expect(eid.contains(#""eid":"0102030405060708","txPowerAt0m":-18"#) && eid.contains(#""data":"0201060303AAFE0D16AAFE30EE0102030405060708""#),
                "\(eid)")
        let unnamed = result.stdoutLines.first { $0.contains(#""frameType":64"#) } ?? ""
        #expect(unnamed.contains(#""frameData":"EE0102""#), "\(unnamed)")
    }

    @Test func auditsVerifysAndAdvertisesJSONHasEachKeyOnce() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        for file in ["rootcanal-scan.btsnoop", "pcap/rootcanal-scan-h4.pcap"] {
            let audit = try runBeaconEmit(["audit", "--replay", fixtures.appendingPathComponent(file).path, "--json"])
            check(audit.stdoutLines, "audit \(file)")
        }
        let beacon = ["--uuid", Self.uuid, "--major", "1", "--minor", "2"]
        for mode in [[], ["--exact"]] {
            let verify = try runBeaconEmit(["verify", "--device", "virtual", "--scanner", "virtual", "--json"] + mode + beacon)
            check(verify.stdoutLines, "verify \(mode)")
        }
        let advertise = try runBeaconEmit(["--device", "virtual", "--json", "--duration", "0.5"] + beacon)
        check(advertise.stdoutLines, "advertise")
        #expect(advertise.stdoutLines.count >= 3, "\(advertise.stdout)")
        let monitor = try runBeaconEmit(["monitor", "--replay", fixtures.appendingPathComponent("rootcanal-scan.btsnoop").path,
                                         "--uuid", Self.uuid, "--json"])
        check(monitor.stdoutLines, "monitor")
        let calibrate = try runBeaconEmit(["calibrate", "--device", "virtual", "--scanner", "virtual", "--duration", "1.5",
                                           "--json"] + beacon)
        check(calibrate.stdoutLines, "calibrate")
    }
}
