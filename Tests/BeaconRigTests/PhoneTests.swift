// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
@testable import BeaconRig
import Foundation
import BeaconReports
import Testing

/// Phones in a scenario: `phones:` as read (patterns checked where they are written), a phone's
/// log as a run reads it (real commands: lines stamped, matched, cut, limited, and the command
/// and what it started ended), and its expectations in the JUnit report.
@Suite struct PhoneTests {
    static let header = """
        beacons:
          lobby: {uuid: \(lobbyUUID), major: 1, minor: 2}
        regions:
          store: {uuid: \(lobbyUUID)}

        """

    func parse(_ phones: String, _ steps: String) throws(ScenarioError) -> Scenario {
        try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(Self.header + "phones:\n" + phones + "steps:\n" + steps)
    }

    @Test func phonesAndTheirExpectationsAreRead() throws {
        let scenario = try parse("""
              pixel:
                log: "adb logcat -v threadtime -s BeaconTest:I"
                enter: 'didEnterRegion (?<region>[a-z]+)'
                exit: 'didExitRegion (?<region>[a-z]+)'
              iphone: {log: "idevicesyslog", preset: marker}

            """, """
              - advertise: lobby
              - expect: {phone: pixel, region: store, event: enter, within: 6}
              - expect: {phone: iphone, region: store, state: inside, within: 6}
              - expect: {phone: pixel, region: store, noEvent: true, for: 20}

            """)
        #expect(scenario.phones.map(\.name) == ["pixel", "iphone"])
        #expect(scenario.phones[1].state == Scenario.PhoneDefinition.marker.state)
        guard case .expectPhone("pixel", "store", .enter, 6) = scenario.steps[1].action,
              case .expectPhone("iphone", "store", .inside, 6) = scenario.steps[2].action,
              case .expectPhone("pixel", "store", .noEvent, 20) = scenario.steps[3].action else {
            Issue.record("\(scenario.steps.map(\.action))")
            return
        }
        // No scanner needed: a phone is the judge. And what the run starts here is named.
        #expect(scenario.scanner == nil)
        #expect(scenario.localPrograms.map(\.description) == ["phone 'pixel': sh -c 'adb logcat -v threadtime -s BeaconTest:I' (its log)",
                                                             "phone 'iphone': sh -c 'idevicesyslog' (its log)"])
    }

    /// `run --check` lists a phone's command with its control characters written out: a `\r`
    /// or `ESC[2K` in the file cannot hide from the reviewer what will run.
    @Test func aCommandsControlCharactersAreShownNotObeyed() throws {
        let scenario = try parse("""
              pixel: {log: "rm -rf ~/x \\r\\e[2Kadb logcat", preset: marker}

            """, "  - advertise: lobby\n")
        #expect(scenario.localPrograms.map(\.description) == [#"phone 'pixel': sh -c 'rm -rf ~/x \r\e[2Kadb logcat' (its log)"#])
        #expect(TerminalText.escape("a\u{7F}b\u{9B}c\u{0}") == #"a\u{7F}b\u{9B}c\u{0}"#)
    }

    /// Phone commands run only from a file the user running it (or root) owns and no one else
    /// can change, as sudo and OpenSSH decide; the refusal names the owner and the way round.
    @Test func phoneCommandsRunOnlyFromAFileItsRunnerTrusts() {
        let refuse = { (mode: UInt32, owner: UInt32, user: UInt32) in
            ScenarioParser.commandsRefusal(path: "rig.yaml", mode: mode, owner: owner, user: user)
        }
        #expect(refuse(0o644, 1000, 1000) == nil, "the runner's own")
        #expect(refuse(0o644, 0, 1000) == nil, "root's")
        #expect(refuse(0o600, 0, 0) == nil)
        let stranger = refuse(0o644, 65534, 0)
        #expect(stranger?.contains("belongs to nobody (uid 65534), not to you (root (uid 0)) or root") == true, "\(stranger ?? "")")
        #expect(stranger?.contains("`run --allow-commands` runs it") == true)
        #expect(refuse(0o664, 1000, 1000)?.contains("other users can change it (mode 0664)") == true)
        #expect(refuse(0o646, 0, 1000)?.contains("other users can change it (mode 0646)") == true)
    }

    /// Each mistake at its place, saying what to write instead.
    @Test(arguments: [
        ("  p: {log: x, enter: 'didEnter (?<region>[a-z+'}\n", "- advertise: lobby\n", "rig.yaml:6:22:", "phone 'p''s enter: not a regular expression"),
        ("  p: {log: x, state: 'state (?<region>\\\\w+)'}\n", "- advertise: lobby\n", "rig.yaml:6:22:", "a state line needs a group (?<state>inside|outside)"),
        ("  p: {log: x}\n", "- advertise: lobby\n", "rig.yaml:6:6:", "needs the app's lines to match"),
        ("  p: {enter: x}\n", "- advertise: lobby\n", "rig.yaml:6:6:", "needs 'log: COMMAND'"),
        ("  p: {log: x, preset: fancy}\n", "- advertise: lobby\n", "rig.yaml:6:23:", "the one preset is 'marker'"),
        ("  p: {log: x, enter: e}\n", "- expect: {phone: q, region: store, event: enter, within: 1}\n", "rig.yaml:8:19:", "no phone named 'q'"),
        ("  p: {log: x, enter: e}\n", "- expect: {phone: p, region: shop, event: enter, within: 1}\n", "rig.yaml:8:30:", "no region named 'shop'"),
        ("  p: {log: x, enter: e}\n", "- expect: {phone: p, region: store, event: exit, within: 1}\n", "rig.yaml:8:11:", "has no 'exit:' line"),
        ("  p: {log: x, enter: e}\n", "- expect: {phone: p, region: store, noEvent: true, within: 1}\n", "rig.yaml:8:11:", "takes phone and region and noEvent and for"),
    ])
    func aMistakeIsRefusedWhereItIs(phones: String, steps: String, place: String, message: String) {
        #expect { try parse(phones, steps) } throws: { error in
            "\(error)".hasPrefix(place) && "\(error)".contains(message)
        }
    }

    /// Waits (really) until the log has `count` lines or `seconds` pass.
    func lines(of log: PhoneLog, count: Int, seconds: Double = 5) -> [PhoneLine] {
        let start = Date()
        var taken: [PhoneLine] = []
        while taken.count < count && Date().timeIntervalSince(start) < seconds {
            taken += log.take(now: Date().timeIntervalSince(start))
            if taken.count < count { usleep(10_000) }
        }
        return taken
    }

    @Test func linesAreStampedAndMatched() {
        let log = PhoneLog(Scenario.PhoneDefinition(
            name: "pixel", command: "printf '12-02 10:00:00.000 1 2 I BeaconTest: didEnterRegion store\\nnoise\\n"
                + "12-02 10:00:05.000 1 2 I BeaconTest: didExitRegion garage\\nBEACON-EMIT state region=store outside'",
            enter: "didEnterRegion (?<region>[a-z]+)", exit: "didExitRegion (?<region>[a-z]+)",
            state: Scenario.PhoneDefinition.marker.state))
        log.start()
        defer { log.stop() }
        let taken = lines(of: log, count: 4)
        #expect(taken.map(\.transition) == [.enter, nil, .exit, .outside], "\(taken)")
        #expect(taken.map(\.region) == ["store", nil, "garage", "store"])
        #expect(taken[0].concerns("store") && !taken[2].concerns("store") && !taken[1].concerns("store"))
        #expect(taken.last?.text == "BEACON-EMIT state region=store outside", "a last line without a newline counts")
    }

    /// A command that floods: lines over the rate are counted, not kept; a line longer than
    /// the limit is cut (counted). It is ended with everything it started: nothing is left.
    @Test func aFloodIsBoundedAndEverythingItStartedEnds() throws {
        let marker = "phone-test-\(UUID().uuidString.prefix(8))"
        let log = PhoneLog(Scenario.PhoneDefinition(
            name: "flood", command: "head -c 10000 /dev/zero | tr '\\0' x; echo; sh -c 'sleep 60; :' \(marker) & yes enter",
            enter: "enter"))
        log.start()
        let start = Date()
        while Date().timeIntervalSince(start) < 1.5 {
            _ = log.take(now: Date().timeIntervalSince(start))
            usleep(20_000)
        }
        #expect(log.cut == 1, "the 10,000-byte line cut once")
        #expect(log.dropped > 1000 && log.lines.count <= 2 * PhoneLog.maximumLinesPerSecond + 2, "\(log.dropped) left out, \(log.lines.count) kept")
        #expect(log.lines.contains { $0.text.utf8.count == PhoneLog.maximumLineBytes && $0.text.allSatisfy { $0 == "x" } })
        log.stop()
        let left = try ChildProcessTesting.processes(named: marker)
        #expect(left.isEmpty, "left running: \(left)")
        #expect(log.account.contains("left out over 200 a second") && log.account.contains("cut at 4096 bytes"), "\(log.account)")
    }

    /// Patterns that repeat a group holding a repetition or alternatives of its own (the shape
    /// of every exponential backtracking case) are refused before they run; others pass.
    @Test(arguments: [
        (#"(?<region>(\w+\s?)+) entered"#, true), (#"(a|aa)+"#, true), (#"(a?){30}"#, true), (#"((ab)*)+"#, true),
        (#"(?:x+)*y"#, true), (#"((a)|b){2,}"#, true), (#"(?<region>[a-z]+(-[a-z]+)*)+"#, true),
        (#"didEnterRegion (?<region>[a-z]+)"#, false), (#"(?<state>inside|outside) (?<region>\w+)"#, false),
        (#"(\d{2}){3}"#, false), (#"[(+)]+"#, false), (#"\(x+\)+"#, false), (#"(?<region>[\w\s]+) entered"#, false),
        (#"(ab)+c"#, false), (#"\p{L}+ (x)+"#, false), (#"[]a|(]+"#, false), (#"(?<region>[a-z]+(-[a-z]+)*)"#, true),
        (Scenario.PhoneDefinition.marker.enter, false), (Scenario.PhoneDefinition.marker.state, false),
    ])
    func nestedRepetitionIsRefused(pattern: String, refused: Bool) {
        let why = PhonePattern.nestedRepetition(in: pattern)
        #expect((why != nil) == refused, "\(pattern): \(why ?? "accepted")")
        if refused { #expect(why?.contains("exponential") == true) }
        #expect((try? PhoneLog.compile(pattern, key: "enter")) == nil || !refused)
    }

    /// A pattern that passes the check but backtracks for seconds on one line (six adjacent
    /// repetitions of the same class: polynomial, degree 6; 30 letters take about 5 s here, 75
    /// would take hours, and the thread would spin that long beside the rest of the suite):
    /// that line is given up after the budget, counted, and matching stops for the phone; the
    /// lines after it are still taken (shown), not matched, and the whole takes about the budget.
    @Test func aLineThatOutrunsItsBudgetStopsMatchingNotTheRun() {
        let log = PhoneLog(Scenario.PhoneDefinition(
            name: "slow", command: "echo store entered; echo token \(String(repeating: "a", count: 30))!; echo garage entered",
            enter: #"(?<region>\w*\w*\w*\w*\w*\w*) entered"#))
        log.start()
        defer { log.stop() }
        let start = Date()
        let taken = lines(of: log, count: 3, seconds: 20)
        let took = Date().timeIntervalSince(start)
        #expect(taken.map(\.transition) == [.enter, nil, nil], "\(taken)")
        #expect(taken.first?.region == "store")
        #expect(log.unmatched == 2 && log.overBudget?.line.hasPrefix("token aaa") == true, "\(log.unmatched)")
        #expect(log.unread(from: 0, to: took) == 2, "the lines not matched are not read for judging")
        #expect(log.account.contains("matching stopped at ") && log.account.contains("2 lines not matched"), "\(log.account)")
        #expect(took < 15, "took \(took) s")
    }

    @Test func aCommandThatEndsIsSaidSo() {
        let log = PhoneLog(Scenario.PhoneDefinition(name: "gone", command: "echo adb: no devices/emulators found >&2; exit 1",
                                                    enter: "enter"))
        log.start()
        _ = lines(of: log, count: 1)
        let start = Date()
        while log.termination == nil && Date().timeIntervalSince(start) < 5 {
            _ = log.take(now: 0)
            usleep(10_000)
        }
        #expect(log.account == "its log printed 1 line; the command ended (exit 1); its last: adb: no devices/emulators found",
                "\(log.account)")
    }

    @Test func theJUnitReportNamesThePhoneWithItsLatency() {
        var outcome = ScenarioOutcome()
        var result = ScenarioResult(number: "3", round: nil, place: Scenario.Place(line: 9, column: 5),
                                    text: "expect phone pixel: region store enter event within 6 s", passed: true, started: 1,
                                    ended: 2.5, detail: "enter logged after 1500 ms")
        result.phone = PhoneVerdict(phone: "pixel", region: "store", logLine: "didEnterRegion store <&>", latency: 1.234)
        outcome.results = [result]
        let xml = JUnitReport.xml(suite: "rig", outcome: outcome)
        #expect(xml.contains("name=\"step 3 line 9: expect phone pixel: region store enter event within 6 s\""), "\(xml)")
        #expect(xml.contains("<property name=\"latencyMs\" value=\"1234\"/>") && xml.contains("value=\"didEnterRegion store &lt;&amp;&gt;\""),
                "\(xml)")
    }
}

/// Processes by name, from /proc.
enum ChildProcessTesting {
    static func processes(named name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return nil }
            return command.contains(name) ? "\(pid): \(command)" : nil
        }
    }
}
