// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import BeaconRig
import Foundation
import LinuxSystem
import Testing

/// A scenario's boxes elsewhere, with small shell programs standing in for the SSH sessions
/// (the real ones, over sshd in network namespaces, are scripts/multibox-test's): what each
/// box is sent, in which order, and what a refusal or a box that goes away does to the run.
@Suite struct RemoteBoxTests {
    /// A session that writes each request to `log` and answers it ok with id 7 (the
    /// requests it answers refused: those containing `refusing`). `exitAfter` requests, it ends.
    static func fakeSession(log: URL, refusing: String? = nil, exitAfter: Int? = nil) -> [String] {
        let refusal = refusing.map { "case \"$line\" in *\($0)*) echo '{\"ok\":false,\"error\":\"no set left\"}'; continue;; esac;" } ?? ""
        let limit = exitAfter.map { "n=$((n+1)); [ $n -gt \($0) ] && { echo 'Connection closed by remote host' >&2; exit 255; };" } ?? ""
        return ["sh", "-c", "n=0; while IFS= read -r line; do \(limit) printf '%s\\n' \"$line\" >> '\(log.path)'; "
                + "\(refusal) echo '{\"ok\":true,\"id\":7}'; done"]
    }

    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("remote-box-\(UUID().uuidString).log")
    }

    static func requests(_ log: URL) -> [JSONValue] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { JSONValue(parsing: String($0)) }
    }

    static let host = Scenario.HostDefinition(name: "lobby", destination: "beacon@pi-lobby",
                                              controlPath: "/run/beacon-emit-lobby/control")

    static func scenario(_ steps: [Scenario.Step], parameters: BeaconParameters = .run) throws -> Scenario {
        let beacon = try testBeacon(["uuid": lobbyUUID, "major": "1", "minor": "2"])
        var scenario = Scenario(beacons: [Scenario.BeaconDefinition(name: "door", fields: ["uuid": lobbyUUID, "major": "1", "minor": "2"],
                                                                   beacon: beacon, parameters: parameters, host: "lobby")],
                                steps: steps)
        scenario.hosts = [host]
        return scenario
    }

    /// Runs `steps` with the box `lobby` behind `session`; the outcome and the events.
    static func run(_ steps: [Scenario.Step], session: [String],
                    parameters: BeaconParameters = .run) throws -> (ScenarioOutcome, [ScenarioEvent]) {
        let scenario = try scenario(steps, parameters: parameters)
        let boxes = try RemoteBoxes.open(scenario.hosts, arguments: { _ in session }, progress: { _ in })
        defer { RemoteBoxes.close(boxes.values) }
        let air = SimulatedAir()
        let stage = HostedStage(local: nil, boxes: boxes, hosts: scenario.beaconHosts, fieldsOf: { beacon in
            guard case let .iBeacon(frame) = beacon else { return [:] }
            return ["uuid": frame.proximityUUID.uuidString, "major": "\(frame.major)", "minor": "\(frame.minor)"]
        })
        var events: [ScenarioEvent] = []
        let outcome = ScenarioRunner(scenario: scenario, stage: stage, observer: air, makeBeacon: testBeacon,
                                     report: { events.append($0) }).run()
        return (outcome, events)
    }

    @Test func theSshCommandQuotesThePathAndNeverPrompts() {
        var host = Self.host
        host.controlPath = "/run/it's here"
        host.sshOptions = ["-p", "2222"]
        let arguments = RemoteBox.sshArguments(host)
        #expect(arguments.first == "ssh")
        #expect(arguments.contains("BatchMode=yes"))
        #expect(Array(arguments.suffix(5)) == ["-p", "2222", "--", "beacon@pi-lobby",
                                                #"beacon-emit control '/run/it'\''s here' --session"#])
    }

    @Test func aStepsRequestsGoInOrderWithNumbersAsNumbers() throws {
        let log = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: log) }
        let (outcome, events) = try Self.run([Scenario.Step(.advertise(["door"])),
                                              Scenario.Step(.update("door", fields: ["minor": "3"])),
                                              Scenario.Step(.stop(["door"]))], session: Self.fakeSession(log: log))
        #expect(outcome.passed)
        let sent = Self.requests(log)
        #expect(sent.map { $0["command"]?.string } == ["status", "add", "update", "remove"])
        #expect(sent[1]["beacon"] == ["uuid": .string(lobbyUUID.uppercased()), "major": 1, "minor": 2])
        #expect(sent[2]["id"] == 7 && sent[2]["fields"]?["minor"] == 3)
        #expect(sent[3]["id"] == 7)
        // Each step that changed the box reports its delay; the end has nothing left to remove.
        let applied = events.compactMap { event -> (String, [String])? in
            guard case let .applied(number, _, hosts, _) = event else { return nil }
            return (number, hosts.map(\.host))
        }
        #expect(applied.map(\.0) == ["1", "2", "3"] && applied.allSatisfy { $0.1 == ["lobby"] })
    }

    /// A beacon's own parameters go to its box with it, and a change of them as an update, in
    /// the keys `control add` takes (they were refused: a rig across boxes could not mix a
    /// legacy beacon and a Coded one).
    @Test func aBeaconsOwnParametersGoToItsBox() throws {
        let log = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: log) }
        let (outcome, _) = try Self.run([Scenario.Step(.advertise(["door"])),
                                         Scenario.Step(.update("door", fields: ["txPower": "-4"]))],
                                        session: Self.fakeSession(log: log),
                                        parameters: BeaconParameters(intervalUnits: 800, phy: .coded))
        #expect(outcome.passed, "\(outcome)")
        let sent = Self.requests(log)
        // The update step: its data (unchanged), then the parameters its fields give (the box
        // merges them with those the beacon has, as `control update` does).
        #expect(sent.map { $0["command"]?.string } == ["status", "add", "update", "update", "remove"])
        #expect(sent[1]["beacon"] == ["uuid": .string(lobbyUUID.uppercased()), "major": 1, "minor": 2, "interval": 500, "phy": "coded"],
                "\(sent[1])")
        #expect(sent.count == 5 && sent[3]["id"] == 7 && sent[3]["fields"] == ["txPower": -4],
                "\(sent)")
        // What the box's handler reads back from those fields is what was sent.
        let read = try BeaconDescription.parameters(in: ControlHandler.beaconFields(sent[1]["beacon"] ?? .null, what: "add"))
        #expect(read.parameters == BeaconParameters(intervalUnits: 800, phy: .coded))
    }

    @Test func theEndRemovesWhatIsStillOnTheBox() throws {
        let log = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: log) }
        let (outcome, _) = try Self.run([Scenario.Step(.advertise(["door"]))], session: Self.fakeSession(log: log))
        #expect(outcome.passed)
        #expect(Self.requests(log).map { $0["command"]?.string } == ["status", "add", "remove"])
    }

    @Test func aRefusalFailsTheStepAndTheRunGoesOn() throws {
        let log = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: log) }
        let (outcome, _) = try Self.run([Scenario.Step(.advertise(["door"])), Scenario.Step(.wait(seconds: 1))],
                                        session: Self.fakeSession(log: log, refusing: "\"add\""))
        #expect(outcome.error == nil)
        #expect(outcome.results.count == 1)
        #expect(outcome.results.first?.passed == false)
        #expect(outcome.results.first?.detail == "lobby: advertise door: refused: no set left")
        // Never added, so nothing to remove at the end.
        #expect(Self.requests(log).map { $0["command"]?.string } == ["status", "add"])
    }

    @Test func aBoxThatGoesAwayFailsItsStepsWithWhatItSaid() throws {
        let log = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: log) }
        // The session answers status and the add, then ends at the next request.
        let (outcome, _) = try Self.run([Scenario.Step(.advertise(["door"])),
                                         Scenario.Step(.update("door", fields: ["minor": "3"])),
                                         Scenario.Step(.stop(["door"]))],
                                        session: Self.fakeSession(log: log, exitAfter: 2))
        #expect(outcome.error == nil)
        let failed = outcome.results.filter { !$0.passed }
        #expect(failed.map(\.number) == ["2", "3"])
        #expect(failed.first?.detail.contains("lobby: dropped out: the session ended (exit 255): Connection closed by remote host") == true)
        #expect(failed.last?.detail.contains("the box dropped out earlier") == true)
    }

    @Test func aBoxThatCannotBeReachedStopsTheRunBeforeItStarts() throws {
        let scenario = try Self.scenario([Scenario.Step(.advertise(["door"]))])
        #expect {
            _ = try RemoteBoxes.open(scenario.hosts, arguments: { _ in
                ["sh", "-c", "echo 'Host key verification failed.' >&2; exit 255"]
            }, progress: { _ in })
        } throws: { error in
            // Found at the write of its first request, or at the read after it: either way, why.
            "\(error)".hasPrefix("cannot drive every box: lobby: ")
                && "\(error)".contains("the session ended (exit 255): Host key verification failed.")
        }
    }

    /// A session that has ended before a request is written: the write fails, and the failure
    /// says what the session said on its way out (as a read at its end would).
    @Test func aWriteToASessionThatEndedSaysWhy() throws {
        let box = try RemoteBox(name: "lobby", arguments: ["sh", "-c", "echo 'Connection refused' >&2; exit 255"])
        defer { box.close() }
        _ = Poll.pause(.milliseconds(300), interrupt: nil)
        let failure = box.send(.status, what: "status", handle: { _ in nil })
        #expect(failure == "lobby: status: not done: the box dropped out: the session ended (exit 255): Connection refused")
        #expect(box.lost == "the session ended (exit 255): Connection refused")
    }

    @Test func aBoxThatDoesNotAnswerInTimeDropsOut() throws {
        let boxes = try RemoteBoxes.open([Self.host], arguments: { _ in
            ["sh", "-c", "read line; echo '{\"ok\":true}'; sleep 30"]
        }, progress: { _ in })
        defer { RemoteBoxes.close(boxes.values) }
        let box = try #require(boxes["lobby"])
        #expect(box.send(.list, what: "list", handle: { _ in nil }) == nil)
        let collected = RemoteBox.collect([box], timeout: .milliseconds(300))
        #expect(collected.failures == ["lobby: dropped out: no reply within 0.3 seconds"] && !collected.interrupted)
        #expect(box.send(.list, what: "list", handle: { _ in nil })?.contains("dropped out earlier") == true)
    }

    /// The wait for the boxes is the one loop type's: what else the run has on it (this
    /// machine's beacons, `beside`) is served while a box takes its time to answer.
    @Test func theWaitForTheBoxesServesWhatIsBesideIt() throws {
        final class Ticks: RunLoopSource {
            var served = 0
            var next = ContinuousClock.now + .milliseconds(50)
            var descriptors: [Int32] { [] }
            var due: ContinuousClock.Instant? { next }
            func serve() {
                served += 1
                next = .now + .milliseconds(50)
            }
        }
        let boxes = try RemoteBoxes.open([Self.host], arguments: { _ in
            ["sh", "-c", "read line; echo '{\"ok\":true}'; read line; sleep 0.5; echo '{\"ok\":true}'; sleep 30"]
        }, progress: { _ in })
        defer { RemoteBoxes.close(boxes.values) }
        let box = try #require(boxes["lobby"])
        #expect(box.send(.list, what: "list", handle: { _ in nil }) == nil)
        let ticks = Ticks()
        let collected = RemoteBox.collect([box], timeout: .seconds(10), beside: [ticks])
        #expect(collected.failures.isEmpty && !collected.interrupted && box.lost == nil, "\(collected)")
        #expect(ticks.served >= 3, "served \(ticks.served) times in the half second the box took")
    }

    /// A signal while a step waits for a box that does not answer: the wait ends then (the
    /// signal pipe is readable), not after the reply timeout; the box has not dropped out.
    @Test func aSignalEndsTheWaitForABox() throws {
        /// A box that answers the opening status, then nothing.
        func silentBox() throws -> [String: RemoteBox] {
            try RemoteBoxes.open([Self.host], arguments: { _ in ["sh", "-c", "read line; echo '{\"ok\":true}'; sleep 30"] },
                                 progress: { _ in })
        }
        let boxes = try silentBox()
        defer { RemoteBoxes.close(boxes.values) }
        let box = try #require(boxes["lobby"])
        var signal: [Int32] = [-1, -1]
        try #require(pipe(&signal) == 0)
        defer { close(signal[0]); close(signal[1]) }
        #expect(box.send(.list, what: "list", handle: { _ in nil }) == nil)
        let quiet = RemoteBox.collect([box], timeout: .milliseconds(200), interrupt: signal[0])
        #expect(!quiet.interrupted, "no signal: the timeout ends it")
        #expect(box.send(.list, what: "list", handle: { _ in nil })?.contains("dropped out earlier") == true)

        let second = try silentBox()
        defer { RemoteBoxes.close(second.values) }
        let waiting = try #require(second["lobby"])
        #expect(waiting.send(.list, what: "list", handle: { _ in nil }) == nil)
        var byte: UInt8 = 2  // SIGINT's number, as the handler writes it
        #expect(write(signal[1], &byte, 1) == 1)
        let collected = RemoteBox.collect([waiting], timeout: .seconds(60), interrupt: signal[0])
        #expect(collected.interrupted && collected.failures.isEmpty)
        #expect(waiting.lost == nil, "still in the run: the signal ends it, not the box")
    }

    /// What a box sends that is no reply (not JSON, or a line longer than a control line may
    /// be) is never taken for one: the box drops out, saying what it sent.
    @Test(arguments: [
        ("echo 'Welcome to pi-lobby'", "lobby: dropped out: it sent a line that is not JSON: Welcome to pi-lobby"),
        ("head -c 200000 /dev/zero | tr '\\0' x", "lobby: dropped out: a reply line longer than 65536 bytes"),
    ])
    func garbageFromABoxIsNeverTakenForAReply(garbage: String, failure: String) throws {
        let boxes = try RemoteBoxes.open([Self.host], arguments: { _ in
            ["sh", "-c", "read line; echo '{\"ok\":true}'; read line; \(garbage); sleep 30"]
        }, progress: { _ in })
        defer { RemoteBoxes.close(boxes.values) }
        let box = try #require(boxes["lobby"])
        var answered = false
        #expect(box.send(.list, what: "list", handle: { _ in answered = true; return nil }) == nil)
        #expect(RemoteBox.collect([box], timeout: .seconds(5)).failures == [failure])
        #expect(!answered)
        #expect(box.send(.list, what: "list", handle: { _ in nil })?.contains("dropped out earlier") == true)
    }

    @Test(arguments: [
        (nil, nil), ("", nil), ("beacon-emit control /run/x --session", nil),
        ("touch /tmp/x", "this key opens a beacon-emit control session only; 'touch /tmp/x' was not run"),
        ("beacon-emit control /run/x list", "this key opens a beacon-emit control session only; 'beacon-emit control /run/x list' was not run"),
        ("beacon-emit control /run/x --session; rm -rf /", "this key opens a beacon-emit control session only; 'beacon-emit control /run/x --session; rm -rf /' was not run"),
    ] as [(String?, String?)])
    func aForcedCommandKeyOpensSessionsOnly(asked: String?, refusal: String?) {
        #expect(ControlSession.refusal(originalCommand: asked) == refusal)
    }
}
