// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
import Testing

/// The app in the loop on rootcanal: a stand-in phone of the tests' own (a second scanner on
/// the same virtual radio, `beacon-emit monitor`, whose enter and exit it logs as an app would,
/// in logcat's threadtime format), phones that misbehave, and what is left after a run.
extension Rig {
@Suite struct PhoneRootcanalTests {
    let port = rigPort ?? 0
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    /// The stand-in phone: monitors the region (`--exit-after` 3 s) and logs
    /// `MM-DD HH:MM:SS.mmm  PID  TID I BeaconTest: didEnterRegion NAME` (the region named as
    /// the first argument: the app's name for it), its time the monitor's own.
    func standIn(_ directory: String) throws -> String {
        let path = directory + "/standin.sh"
        try """
            #!/bin/sh
            "\(try beaconEmitPath())" monitor -i tcp:127.0.0.1:\(port) --uuid \(Self.uuid) --exit-after 3 --json |
            while IFS= read -r line; do
              case "$line" in
                *'"event":"enter"'*) what="didEnterRegion $1" ;;
                *'"event":"exit"'*) what="didExitRegion $1" ;;
                *'"state":"inside"'*) what="didDetermineState inside $1" ;;
                *'"state":"outside"'*) what="didDetermineState outside $1" ;;
                *) continue ;;
              esac
              when=$(printf '%s' "$line" | sed -n 's/.*"timestamp":"[0-9]*-\\([0-9-]*\\)T\\([0-9:.]*\\)Z".*/\\1 \\2/p')
              echo "$when  4242  4243 I BeaconTest: $what"
            done
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func events(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// A logcat threadtime time (`12-02 03:25:16.458`, UTC here) or an ISO one, as seconds since 1970.
    static func time(_ text: String) -> Double? {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        if text.range(of: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T"#, options: .regularExpression) != nil {
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
            return formatter.date(from: text)?.timeIntervalSince1970
        }
        formatter.dateFormat = "yyyy MM-dd HH:mm:ss.SSS"
        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        return formatter.date(from: "\(year) " + text.prefix(18))?.timeIntervalSince1970
    }

    static let patterns = """
        enter: 'didEnterRegion (?<region>[a-z]+)'
            exit: 'didExitRegion (?<region>[a-z]+)'
            state: 'didDetermineState (?<state>inside|outside) (?<region>[a-z]+)'
        """

    /// Enter and exit met with the latency the stand-in itself logged (its line's time less
    /// the rig's change, within half a second); a window tighter than the phone's rule fails,
    /// in JSON and JUnit; a line for another region does not meet this region's expectation;
    /// `noEvent` holds while the beacon advertises and fails on a false exit; a silent phone,
    /// one whose command exits and one that floods fail their expectations saying so; the run
    /// keeps its time and leaves no process behind.
    @Test(.notUnderEmulation("the phones' windows are seconds long"))
    func thePhonesLogJudgesTheApp() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = try standIn(directory)
        let marker = "phones-\(UUID().uuidString.prefix(8))"
        let path = directory + "/phones.yaml"
        try """
            device: tcp:127.0.0.1:\(port)
            beacons:
              lobby: {uuid: \(Self.uuid), major: 1, minor: 2}
            regions:
              store: {uuid: \(Self.uuid)}
              garage: {uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}
            phones:
              standin:
                log: "sh \(script) store # \(marker)"
                \(Self.patterns)
              elsewhere:
                log: "sh \(script) garage # \(marker)"
                \(Self.patterns)
              silent: {log: "sleep 600 # \(marker)", preset: marker}
              gone: {log: "echo 'adb: no devices/emulators found' >&2; exit 1 # \(marker)", preset: marker}
              flood: {log: "yes 'BEACON-EMIT enter region=garage' # \(marker)", preset: marker}
              falseexit: {log: "while sleep 1; do echo 'BEACON-EMIT exit region=store'; done # \(marker)", preset: marker}
            steps:
              - expect: {phone: standin, region: store, state: outside, within: 5}
              - advertise: lobby
              - expect: {phone: standin, region: store, event: enter, within: 5}
              - expect: {phone: elsewhere, region: store, event: enter, within: 1}
              - expect: {phone: standin, region: store, noEvent: true, for: 1}
              - expect: {phone: falseexit, region: store, noEvent: true, for: 3}
              - expect: {phone: silent, region: store, event: enter, within: 0.5}
              - expect: {phone: gone, region: store, event: enter, within: 0.5}
              - expect: {phone: flood, region: store, event: enter, within: 0.5}
              - stop: lobby
              - expect: {phone: standin, region: store, event: exit, within: 1}
              - expect: {phone: standin, region: store, event: exit, within: 8}

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let junit = directory + "/report.xml"
        let started = Date()
        let run = try runBeaconEmit(["run", path, "--json", "--junit", junit])
        let took = Date().timeIntervalSince(started)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let said = events(run.stdout)
        let results = said.filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String }
                == ["pass", "pass", "fail", "pass", "fail", "fail", "fail", "fail", "fail", "pass"], "\(run.stdout)")
        guard results.count == 10 else { return }
        let detail = results.map { $0["detail"] as? String ?? "" }
        #expect(detail[2].contains("no line of elsewhere's log matched enter of store"), "\(detail[2])")
        #expect(detail[4].contains("exit logged after") && detail[4].contains("the radio: store's beacons on the air since"), "\(detail[4])")
        #expect(detail[5].contains("silent: its log printed nothing"), "\(detail[5])")
        #expect(detail[6].contains("the command ended (exit 1); its last: adb: no devices/emulators found"), "\(detail[6])")
        #expect(detail[7].contains("left out over 200 a second"), "\(detail[7])")
        #expect(detail[8].contains("the radio: store's beacons off the air since"), "a window tighter than the rule: \(detail[8])")
        // The latency the rig says against the stand-in's own: its line's time less the rig's change.
        let change = { (action: String) in
            said.first { $0["event"] as? String == "step" && $0["action"] as? String == action }
                .flatMap { ($0["timestamp"] as? String).flatMap(Self.time) }
        }
        for (index, action) in [(1, "advertise lobby"), (9, "stop lobby")] {
            let latency = (results[index]["latencyMs"] as? Double).map { $0 / 1000 }
            let logged = (results[index]["logLine"] as? String).flatMap(Self.time)
            let standInLatency = logged.flatMap { logged in change(action).map { logged - $0 } }
            print("phone latency after \(action): the rig says \(latency as Any) s, the stand-in \(standInLatency as Any) s")
            #expect(latency.flatMap { latency in standInLatency.map { abs(latency - $0) < 0.5 } } == true, "\(results[index])")
        }
        #expect((results[9]["latencyMs"] as? Double).map { $0 > 2500 && $0 < 5000 } == true, "exit after about 3 s: \(results[9])")
        // Every phone line in the JSON, one timeline.
        #expect(said.contains { $0["event"] as? String == "phone" && $0["phone"] as? String == "standin"
                                && ($0["logLine"] as? String)?.contains("didEnterRegion store") == true })
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("expect phone standin: region store exit event within 1 s") && xml.contains("<property name=\"latencyMs\""),
                "\(xml)")
        #expect(took < 40, "the run keeps its windows: \(took) s")
        let left = try PhoneProcesses.named(marker)
        #expect(left.isEmpty, "left running: \(left)")
    }

    /// A scenario written in `directory` as `name`: the lobby beacon advertised, then one
    /// expectation (`expect`) of the store region on one phone, `pixel`, whose log is `log`
    /// and whose lines are read by `patterns`.
    /// - Returns: its path.
    func onePhone(in directory: String, _ name: String, log: String, patterns: String = "preset: marker",
                  expect: String) throws -> String {
        let path = directory + "/" + name
        try """
            device: tcp:127.0.0.1:\(port)
            beacons:
              lobby: {uuid: \(Self.uuid), major: 1, minor: 2}
            regions:
              store: {uuid: \(Self.uuid)}
            phones:
              pixel: {log: "\(log)", \(patterns)}
            steps:
              - advertise: lobby
              - expect: {phone: pixel, region: store, \(expect)}

            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A flood cannot blind the judge: a phone that floods its log (`yes`) while it logs an exit
    /// has lines left out over the rate in the window, so `noEvent` is not passed over them: it
    /// fails, saying how many lines were not read; the flood's count is in its account.
    @Test(.notUnderEmulation("waits seconds"))
    func aFloodCannotBlindTheJudge() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let marker = "phones-\(UUID().uuidString.prefix(8))"
        let path = try onePhone(in: directory, "flood.yaml",
                                log: "yes noise & sleep 1.5; echo 'BEACON-EMIT exit region=store'; wait # \(marker)",
                                expect: "noEvent: true, for: 4")
        let run = try runBeaconEmit(["run", path, "--json"])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let results = events(run.stdout).filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == ["fail"], "\(run.stdout)")
        let detail = results.first?["detail"] as? String ?? ""
        #expect(detail.contains("not judged: ") && detail.contains("lines of pixel's log in these 4 s were not read"), "\(detail)")
        #expect(detail.contains("left out over 200 a second"), "\(detail)")
        #expect(try PhoneProcesses.named(marker).isEmpty)
    }

    /// A scenario another user owns (`nobody`), run by root: its phone's command would run as
    /// root, so the run is refused before anything starts (exit 65, naming the owner and
    /// `--allow-commands`), nothing ran; `--check` still lists it; with the opt-in it runs.
    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"), .notUnderEmulation("waits seconds"))
    func aStrangersScenarioRunsNoCommandUnlessAllowed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ranAs = directory + "/ran-as"
        let path = try onePhone(in: directory, "theirs.yaml", log: "id -u > \(ranAs)", expect: "event: enter, within: 1")
        #expect(chown(path, 65534, 65534) == 0 && chmod(path, 0o644) == 0)
        let refused = try runBeaconEmit(["run", path])
        #expect(refused.status == 65 && refused.stderr.contains("belongs to nobody (uid 65534)")
                && refused.stderr.contains("--allow-commands"), "\(refused.status) \(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ranAs), "nothing ran")
        let listed = try runBeaconEmit(["run", path, "--check"])
        #expect(listed.status == 0 && listed.stdout.contains("phone 'pixel': sh -c 'id -u > \(ranAs)'"), "\(listed.stdout)")
        let allowed = try runBeaconEmit(["run", path, "--allow-commands"])
        #expect(allowed.status == 1, "ran, and the phone said nothing: \(allowed.stderr)")
        #expect((try? String(contentsOfFile: ranAs, encoding: .utf8)) == "0\n", "the opt-in runs it")
    }

    /// Patterns cannot stall a run: the issue's `(?<region>(\w+\s?)+) entered` is refused before
    /// anything starts (`--check` too); one that passes the check but backtracks for hours on
    /// the phone's line of 75 letters is given up after its budget: the 3 s run ends on time,
    /// its `noEvent` not judged (saying why), and the phone's command does not outlive it.
    @Test(.notUnderEmulation("waits seconds"))
    func aPatternCannotStallTheRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let marker = "phones-\(UUID().uuidString.prefix(8))"
        let scenario = { (name: String, pattern: String) throws -> String in
            try onePhone(in: directory, name, log: "echo token \(String(repeating: "a", count: 75))!; sleep 611 # \(marker)",
                         patterns: "enter: '\(pattern)'", expect: "noEvent: true, for: \(name == "long.yaml" ? 60 : 3)")
        }
        let nested = try scenario("nested.yaml", #"(?<region>(\w+\s?)+) entered"#)
        for arguments in [["run", nested, "--check"], ["run", nested]] {
            let refused = try runBeaconEmit(arguments)
            #expect(refused.status == 65 && refused.stderr.contains("nested.yaml:7:")
                    && refused.stderr.contains("repeats a group that holds a repetition"), "\(refused.status) \(refused.stderr)")
        }
        let slow = try scenario("slow.yaml", #"(?<region>\w*\w*\w*\w*\w*\w*) entered"#)
        let started = Date()
        let run = try runBeaconEmit(["run", slow, "--json"])
        let took = Date().timeIntervalSince(started)
        #expect(run.status == 1 && took < 10, "exit \(run.status) after \(took) s: \(run.stderr)")
        let results = events(run.stdout).filter { $0["event"] as? String == "expectation" }
        let detail = results.first?["detail"] as? String ?? ""
        #expect(detail.contains("not judged: ") && detail.contains("matching stopped at ")
                && detail.contains("1 line not matched"), "\(run.stdout)")
        #expect(try PhoneProcesses.named(marker).isEmpty)
        // SIGTERM once the line is in: the run is not held by the matching (which goes on, on
        // its own thread, for hours) and ends, with its phone. Without the bound it ends never.
        let long = try scenario("long.yaml", #"(?<region>\w*\w*\w*\w*\w*\w*) entered"#)
        let running = try BackgroundProcess(try beaconEmitPath(), ["run", long, "--json"])
        defer { running.signal(SIGKILL) }
        #expect(running.waitForOutput(#""logLine":"token aaa"#), "\(running.stdout)")
        usleep(300_000)
        let signalled = Date()
        running.signal(SIGTERM)
        #expect(running.wait(timeout: .seconds(10)) == 1, "\(running.stderr)")
        #expect(Date().timeIntervalSince(signalled) < 5, "ended \(Date().timeIntervalSince(signalled)) s after SIGTERM")
        #expect(try PhoneProcesses.named(marker).isEmpty)
    }

    /// SIGTERM, SIGHUP or SIGKILL in the middle of a run, and a `--check` that fails: no phone
    /// command is left (found by a marker in its command line).
    @Test(.notUnderEmulation("waits seconds"))
    func nothingIsLeftAfterASignalOrAFailedCheck() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let marker = "phones-\(UUID().uuidString.prefix(8))"
        let scenario = { (pattern: String) in """
            device: tcp:127.0.0.1:\(port)
            beacons:
              lobby: {uuid: \(Self.uuid), major: 1, minor: 2}
            regions:
              store: {uuid: \(Self.uuid)}
            phones:
              pixel: {log: "sh -c 'sleep 600; :' \(marker) & sleep 600 # \(marker)", enter: '\(pattern)'}
            steps:
              - advertise: lobby
              - expect: {phone: pixel, region: store, event: enter, within: 60}

            """ }
        let bad = directory + "/bad.yaml"
        try scenario("didEnter (?<region>[a-z+").write(toFile: bad, atomically: true, encoding: .utf8)
        let check = try runBeaconEmit(["run", bad, "--check"])
        #expect(check.status == 65 && check.stderr.contains("bad.yaml:7:") && check.stderr.contains("not a regular expression"),
                "\(check.stderr)")
        let good = directory + "/good.yaml"
        try scenario("didEnterRegion (?<region>[a-z]+)").write(toFile: good, atomically: true, encoding: .utf8)
        let listed = try runBeaconEmit(["run", good, "--check"])
        #expect(listed.stdout.contains("good.yaml:7:10: phone 'pixel': sh -c"), "\(listed.stdout)")
        #expect(try PhoneProcesses.named(marker).isEmpty, "a check starts nothing")
        // SIGTERM, SIGHUP, and SIGKILL (which the run cannot catch: its phones' guard ends them).
        for signal in [SIGTERM, SIGHUP, SIGKILL] {
            let run = try ChildProcess(arguments: [try beaconEmitPath(), "run", good, "--json"], output: .discard, errors: .discard)
            let start = Date()
            while try PhoneProcesses.named(marker).count < 2 && Date().timeIntervalSince(start) < 10 { usleep(50_000) }
            #expect(try PhoneProcesses.named(marker).count >= 2, "the phone's command and its child run")
            kill(run.pid, signal)
            let ended = run.wait(until: .now + .seconds(10))
            if signal == SIGKILL || signal == SIGHUP {
                // SIGHUP, which a run does not catch, ends it as SIGKILL does: its guard ends the phones.
                #expect(ended == .signalled(signal) || ended == .exited(1), "\(String(describing: ended))")
            } else {
                #expect(ended == .exited(1), "a signal ends the run as a failure (signal \(signal)): \(String(describing: ended))")
            }
            if ended == nil { run.stop() }
            // Ended at once by the run, or by the guard once the kernel closed the run's end of its pipe.
            let stopped = Date()
            while try !PhoneProcesses.named(marker).isEmpty && Date().timeIntervalSince(stopped) < 3 { usleep(20_000) }
            let left = try PhoneProcesses.named(marker)
            #expect(left.isEmpty, "left running after signal \(signal): \(left)")
        }
    }
}
}

/// Processes whose command line holds a text, from /proc.
enum PhoneProcesses {
    static func named(_ text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                  command.contains(text), !command.contains("swift") else { return nil }
            return "\(pid): \(command.replacingOccurrences(of: "\0", with: " "))"
        }
    }
}
