// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// The timeline on a simulated air and clock (`SimulatedAir`): what each step does to the
/// stage, and each expectation's verdict, with Core Location's region timing in virtual time.
@Suite struct ScenarioRunnerTests {
    static let header = """
        scanner: peer
        exitAfter: 30
        beacons:
          lobby: {uuid: \(lobbyUUID), major: 1, minor: 2}
          door: {uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 7, minor: 8}
        regions:
          shop: {uuid: \(lobbyUUID), major: 1}

        """

    struct Run {
        var outcome: ScenarioOutcome
        var events: [ScenarioEvent]
        var air: SimulatedAir
    }

    func run(_ steps: String, air: SimulatedAir = SimulatedAir()) throws -> Run {
        let scenario = try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(Self.header + "steps:\n" + steps)
        var events: [ScenarioEvent] = []
        let runner = ScenarioRunner(scenario: scenario, stage: air, observer: air, makeBeacon: testBeacon,
                                    report: { events.append($0) })
        let outcome = runner.run()
        return Run(outcome: outcome, events: events, air: air)
    }

    @Test func aTimelineThatHoldsPasses() throws {
        let run = try run("""
              - advertise: lobby
              - expect: {seen: lobby, within: 1}
              - update: {beacon: lobby, minor: 3}
              - expect: {seen: lobby, within: 1}
              - stop: lobby
              - expect: {notSeen: lobby, for: 2}

            """)
        #expect(run.outcome.passed)
        #expect(run.outcome.results.map(\.passed) == [true, true, true])
        #expect(run.air.calls == ["advertise lobby", "update lobby", "stop lobby", "stop all"])
        // Seen at the first advertising event after the latency: 100 ms on this air.
        #expect(run.outcome.results[0].detail == "seen after 100 ms")
        #expect(run.outcome.results[2].detail == "not seen for 2 s")
        #expect(abs(run.outcome.duration - 2.2) < 0.11, "\(run.outcome.duration)")
    }

    @Test func aWrongExpectationFailsSayingWhatWasSeenInstead() throws {
        let run = try run("""
              - advertise: lobby
              - expect: {seen: door, within: 1}
              - expect: {notSeen: lobby, for: 1}

            """)
        #expect(!run.outcome.passed)
        #expect(run.outcome.failures == 2)
        #expect(run.outcome.results[0].detail == "not seen within 1 s; seen instead: iBeacon uuid=\(lobbyUUID) major=1 minor=2 measuredPower=-59dBm")
        #expect(run.outcome.results[1].detail == "seen after 100 ms")
        #expect(run.air.calls.last == "stop all")
    }

    /// After an update the old data no longer counts: expecting the beacon means its new data.
    @Test func anExpectationAfterAnUpdateWantsTheNewData() throws {
        let air = SimulatedAir()
        let run = try run("""
              - advertise: lobby
              - wait: 0.5
              - update: {beacon: lobby, minor: 3}
              - expect: {seen: lobby, within: 1}

            """, air: air)
        #expect(run.outcome.passed)
        let arrivals = run.events.compactMap { event -> (Double, Double?)? in
            if case let .updateArrived(beacon, _, after, gap) = event, beacon == "lobby" { return (after, gap) }
            return nil
        }
        #expect(arrivals.count == 1)
        // The update is set between two advertising events: the gap is one interval.
        #expect(arrivals.first.map { abs($0.0 - 0.1) < 0.011 } == true, "\(arrivals)")
        #expect(arrivals.first?.1.map { abs($0 - 0.1) < 0.011 } == true, "\(arrivals)")
    }

    @Test func regionsFollowCoreLocationsTiming() throws {
        let run = try run("""
              - expect: {region: shop, state: outside, within: 3}
              - advertise: lobby
              - expect: {region: shop, event: enter, within: 1}
              - stop: lobby
              - expect: {region: shop, event: exit, within: 25}
              - expect: {region: shop, event: exit, within: 10}
              - expect: {region: shop, state: outside, within: 0}

            """)
        #expect(run.outcome.results.map(\.passed) == [true, true, false, true, true], "\(run.outcome.results.map(\.detail))")
        // "Outside" at launch needs the initial window (2 s) without a sighting.
        #expect(run.outcome.results[0].detail.hasPrefix("outside after 200"), "\(run.outcome.results[0].detail)")
        #expect(run.outcome.results[2].detail == "not exit within 25 s; the region is inside")
        // The exit comes 30 s after the last sighting: 25 s of the step before, then about 5 s.
        let detail = run.outcome.results[3].detail
        #expect(detail.hasPrefix("exit after 49") || detail.hasPrefix("exit after 50"), "\(detail)")
        let regionEvents = run.events.compactMap { event -> RegionMonitor.Event? in
            if case let .region(name, event) = event, name == "shop" { return event }
            return nil
        }
        #expect(regionEvents.count == 3)
        if case .initialState(.outside, _) = regionEvents.first {} else { Issue.record("\(regionEvents)") }
    }

    /// The README's order: the enter that the sighting `expect seen` waited for raised counts
    /// for the `event: enter` after it (it counts from the region's last expectation, not from
    /// its own step); an enter already met by one expectation does not meet the next.
    @Test func anEnterRaisedByAnEarlierStepCountsOnce() throws {
        let run = try run("""
              - expect: {region: shop, state: outside, within: 3}
              - advertise: lobby
              - expect: {seen: lobby, within: 1}
              - expect: {region: shop, event: enter, within: 3}
              - expect: {region: shop, event: enter, within: 1}

            """)
        #expect(run.outcome.results.map(\.passed) == [true, true, true, false], "\(run.outcome.results.map(\.detail))")
        #expect(run.outcome.results[2].detail == "enter after 0 ms", "\(run.outcome.results[2].detail)")
    }

    @Test func aRepeatNumbersItsStepsByRound() throws {
        let run = try run("""
              - advertise: lobby
              - repeat:
                  times: 2
                  steps:
                    - stop: lobby
                    - advertise: lobby

            """)
        let steps = run.events.compactMap { event -> String? in
            if case let .step(number, round, _, _, _) = event { return number + (round.map { "@" + $0 } ?? "") }
            return nil
        }
        #expect(steps == ["1", "2", "2.1@1/2", "2.2@1/2", "2.1@2/2", "2.2@2/2"])
        #expect(run.air.calls == ["advertise lobby", "stop lobby", "advertise lobby", "stop lobby", "advertise lobby", "stop all"])
    }

    @Test func aRampStepsTheTxPowerOnItsTimeline() throws {
        let run = try run("""
              - advertise: lobby
              - ramp: {beacon: lobby, from: 0, to: -12, step: 4, every: 2}

            """)
        #expect(run.air.calls == ["advertise lobby", "parameters lobby tx 0", "parameters lobby tx -4", "parameters lobby tx -8",
                                  "parameters lobby tx -12", "stop all"])
        #expect(abs(run.outcome.duration - 8) < 0.01)
    }

    @Test func aRefusalEndsTheRunWithEverythingOff() throws {
        let air = SimulatedAir()
        air.refuse = "door"
        let run = try run("""
              - advertise: lobby
              - expect: {seen: lobby, within: 1}
              - advertise: door
              - expect: {seen: door, within: 1}

            """, air: air)
        #expect(run.outcome.results.count == 1)
        #expect(run.outcome.error?.description.contains("no set left for door") == true)
        #expect(!run.outcome.passed)
        #expect(run.air.calls.last == "stop all")
        #expect(run.air.onAir.isEmpty)
    }

    /// The JUnit report of a run with a failure: well-formed XML (read back by Python's XML
    /// parser, as CI tools written in it read such reports), a test case per expectation, the
    /// failure's message escaped.
    @Test func theJUnitReportHasACasePerExpectation() throws {
        let run = try run("""
              - advertise: lobby
              - expect: {seen: lobby, within: 1}
              - expect: {seen: door, within: 1}

            """)
        let xml = JUnitReport.xml(suite: "enter & exit <1>", outcome: run.outcome)
        let script = """
            import json, sys, xml.etree.ElementTree as E
            root = E.fromstring(sys.stdin.read())
            suite = root.find("testsuite")
            print(json.dumps({"suite": suite.get("name"), "tests": suite.get("tests"), "failures": suite.get("failures"),
                              "cases": len(suite.findall("testcase")),
                              "messages": [f.get("message") for f in suite.iter("failure")]}))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(xml.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(xml)")
        let read = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(read["suite"] as? String == "enter & exit <1>")
        #expect(read["tests"] as? String == "2")
        #expect(read["failures"] as? String == "1")
        #expect(read["cases"] as? Int == 2)
        #expect((read["messages"] as? [String])?.first?.hasPrefix("not seen within 1 s; seen instead: iBeacon") == true)
    }
}
