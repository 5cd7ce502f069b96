// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
@testable import BeaconRig
import Foundation
import Testing

/// `beacon-emit run` on rootcanal: the scenario's own scanner is a second device on the
/// radio (`peer`), and the test's scanner is a third, independent of the code under test.
extension Rig {
@Suite struct ScenarioRootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }

    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let beacons = """
        scanner: peer
        interval: 100
        exitAfter: 2
        beacons:
          lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
          door: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 3}
        regions:
          store: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101}

        """

    /// A crowd of 20 advertised whole beside another beacon: a member is seen, one is changed
    /// in place, and the crowd stopped whole is not seen again; the same where each member has
    /// an address of its own (those taking turns on the shared set too).
    @Test(arguments: ["", ", address: static"])
    func aCrowdGoesOnAndOffWhole(own: String) throws {
        let path = try write("""
            scanner: peer
            interval: 100
            beacons:
              room: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 5, minor: 1-20\(own)}
              door: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 6, minor: 1\(own)}
            steps:
              - advertise: [room, door]
              - expect: {seen: room-17, within: 5}
              - update: {beacon: room-17, minor: 99}
              - expect: {seen: room-17, within: 5}
              - stop: room
              - expect: {notSeen: room-3, for: 1}
              - expect: {seen: door, within: 3}

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try runBeaconEmit(["run", path, "-i", device, "--json"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let results = events(run.stdout).filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == Array(repeating: "pass", count: 4), "\(run.stdout)")
    }

    /// JSON lines of `run --json`, parsed.
    func events(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func enterAndExitExpectationsPass() throws {
        let path = try write(Self.beacons + """
            steps:
              - expect: {region: store, state: outside, within: 3}
              - advertise: lobby
              - expect: {region: store, event: enter, within: 2}
              - expect: {seen: lobby, within: 2}
              - stop: lobby
              - expect: {region: store, event: exit, within: 4}
              - expect: {notSeen: lobby, for: 1}

            """)
        let junit = path + ".xml"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: junit) }
        let run = try runBeaconEmit(["run", path, "-i", device, "--json", "--junit", junit])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let results = events(run.stdout).filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == Array(repeating: "pass", count: 5), "\(run.stdout)")
        let summary = events(run.stdout).last
        #expect(summary?["event"] as? String == "summary" && summary?["passed"] as? Int == 5)
        // The exit comes about exitAfter (2 s) after the last sighting.
        let exit = results[3]["detail"] as? String ?? ""
        #expect(exit.hasPrefix("exit after 1") || exit.hasPrefix("exit after 2"), "\(exit)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"tests="5" failures="0" errors="0""#), "\(xml)")
    }

    @Test func aWrongExpectationFailsWithWhatWasSeenAndLeavesTheAirQuiet() throws {
        let path = try write(Self.beacons + """
            steps:
              - advertise: lobby
              - expect: {seen: door, within: 1}

            """)
        let junit = path + ".xml"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: junit) }
        let run = try runBeaconEmit(["run", path, "-i", device, "--junit", junit])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("FAIL step 2 line 11: expect door seen within 1 s: not seen within 1 s; seen instead: "
                                    + "iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2"), "\(run.stdout)")
        #expect(run.stdout.contains("1 expectation: 0 passed, 1 failed"), "\(run.stdout)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"failures="1""#) && xml.contains("<failure message=\"not seen within 1 s; seen instead: iBeacon"))
        // Advertising is off: an independent scanner hears nothing of it now.
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .milliseconds(600)) { _ in false }
        #expect(!reports.contains { Array($0.data) == referenceAdvertisingData }, "still on the air")
    }

    /// A controller reset or a Hardware Error under a running scenario (a bridge, a bootloader,
    /// another program): it costs one gap, as under `advertise`. The beacon goes back (reset,
    /// parameters, data, enable on the wire), the expectations after it pass on what the
    /// scanner (another device) really hears, an update after it changes the beacon in place,
    /// and the disruption shows as events of the step it fell in and in the JUnit report.
    @Test(arguments: ["reset", "hardware error"])
    func aScenarioBeaconSurvivesAResetOrAHardwareError(cause: String) throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let path = try write("""
            scanner: tcp:127.0.0.1:\(port)
            interval: 100
            beacons:
              lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
            steps:
              - advertise: lobby
              - expect: {seen: lobby, within: 3}
              - wait: 2
              - expect: {seen: lobby, within: 3}
              - update: {beacon: lobby, minor: 3}
              - expect: {seen: lobby, within: 3}

            """)
        let junit = path + ".xml"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: junit) }
        let runner = try BackgroundProcess.beaconEmit(["run", path, "-i", "tcp:127.0.0.1:\(proxy.port)", "--json",
                                                       "--junit", junit])
        #expect(runner.waitForOutput(#""event":"step","step":"3""#), "\(runner.stdout)\(runner.stderr)")
        let before = proxy.commands.count
        if cause == "reset" {
            proxy.sendToController(Reset().packet)
        } else {
            proxy.sendToHost(.hardwareError(hardwareCode: 0x2A))
        }
        #expect(runner.wait(timeout: .seconds(20)) == 0, "\(runner.stdout)\(runner.stderr)")
        let lines = events(runner.stdout)
        let results = lines.filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == ["pass", "pass", "pass"], "\(runner.stdout)")
        let off = lines.first { $0["event"] as? String == "off-air" }
        #expect(off?["step"] as? String == "3", "\(runner.stdout)")
        #expect(off?["cause"] as? String == (cause == "reset" ? "controller-reset" : "hardware-error"), "\(runner.stdout)")
        let restored = lines.first { $0["event"] as? String == "restored" }
        #expect(restored?["step"] as? String == "3", "\(runner.stdout)")
        let gap = restored?["gapMs"] as? Int ?? .max
        #expect(gap < 1000, "\(runner.stdout)")
        print("\(cause) under a scenario: back on the air after \(gap) ms")
        // On the wire: the owned controller reset by the host, then parameters, data and enable.
        let again = proxy.commands.dropFirst(before).map { HexText.format($0.bytes) }
        #expect(again.first == "030C00", "\(again)")
        #expect(again.firstIndex { $0.hasPrefix("392006010100") } ?? .max < again.firstIndex { $0.hasPrefix("3720") && $0.contains("0003C5") } ?? -1,
                "enabled again before the update: \(again)")
        // No "ignored answers" and no Unknown Advertising Identifier on the way.
        #expect(!runner.stderr.contains("Unknown Advertising Identifier"), "\(runner.stderr)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"tests="3" failures="0" errors="0""#), "\(xml)")
        #expect(xml.contains("step 3: off the air: ") && xml.contains("step 3: back on the air after "), "\(xml)")
    }

    /// The H4 link closes mid-run (a bridge that restarts): the scenario's sets come back as
    /// `advertise`'s beacons do. The link is opened again, the new controller reset and given
    /// the beacon, and the expectation after it passes on what another device hears; the
    /// disruption costs one gap, reported as events of the step it fell in.
    @Test func aScenarioBeaconSurvivesItsLinkClosing() throws {
        let relay = try CuttableRelay(upstreamPort: port)
        defer { relay.close() }
        let path = try write("""
            scanner: tcp:127.0.0.1:\(port)
            interval: 100
            beacons:
              lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
            steps:
              - advertise: lobby
              - expect: {seen: lobby, within: 3}
              - wait: 3
              - update: {beacon: lobby, minor: 3}
              - expect: {seen: lobby, within: 5}

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let runner = try BackgroundProcess.beaconEmit(["run", path, "-i", "tcp:127.0.0.1:\(relay.port)", "--json"])
        #expect(runner.waitForOutput(#""event":"step","step":"3""#), "\(runner.stdout)\(runner.stderr)")
        relay.cut()
        #expect(runner.wait(timeout: .seconds(30)) == 0, "\(runner.stdout)\(runner.stderr)")
        #expect(relay.connections == 2, "the link was opened again once")
        let lines = events(runner.stdout)
        let results = lines.filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == ["pass", "pass"], "\(runner.stdout)")
        let off = lines.first { $0["event"] as? String == "off-air" }
        #expect(off?["step"] as? String == "3" && off?["cause"] as? String == "link-closed", "\(runner.stdout)")
        let restored = lines.first { $0["event"] as? String == "restored" }
        #expect(restored?["step"] as? String == "3", "\(runner.stdout)")
        let gap = restored?["gapMs"] as? Int ?? .max
        #expect(gap < 2000, "\(runner.stdout)")
        if restored != nil { print("an H4 link closed under a scenario: back on the air after \(gap) ms") }
    }

    /// A beacon's own interval: two beacons on the air at 100 ms and 500 ms, as an independent
    /// scanner counts their reports; then the slow one's interval changed in place by an
    /// update step, and both are heard as often.
    @Test func eachBeaconAdvertisesAtItsOwnInterval() throws {
        let path = try write("""
            interval: 100
            beacons:
              fast: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
              slow: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 3, interval: 500}
            steps:
              - advertise: [fast, slow]
              - wait: 3
              - update: {beacon: slow, interval: 100}
              - wait: 3

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duplicates", "--duration", "8.5"])
        Thread.sleep(forTimeInterval: 0.5)
        let runner = try runBeaconEmit(["run", path, "-i", device, "--json"])
        #expect(runner.status == 0, "\(runner.stdout)\(runner.stderr)")
        #expect(scan.wait() == 0, "\(scan.stderr)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ object: [String: Any]) -> Double? {
            (object["timestamp"] as? String).flatMap(formatter.date(from:))?.timeIntervalSince1970
        }
        let steps = events(runner.stdout).filter { $0["event"] as? String == "step" }.compactMap(time)
        try #require(steps.count >= 4, "\(runner.stdout)")
        let heard = events(scan.stdout).compactMap { line -> (minor: Int, at: Double)? in
            guard let minor = line["minor"] as? Int, let at = time(line) else { return nil }
            return (minor, at)
        }
        func counts(_ from: Double, _ to: Double) -> (fast: Int, slow: Int) {
            let window = heard.filter { $0.at >= from && $0.at < to }
            return (window.filter { $0.minor == 2 }.count, window.filter { $0.minor == 3 }.count)
        }
        let before = counts(steps[1] + 0.5, steps[2])
        let after = counts(steps[3] + 0.5, steps[3] + 3)
        print("reports in 2.5 s: fast (100 ms) \(before.fast), slow (500 ms) \(before.slow); after the update, both 100 ms: "
              + "\(after.fast) and \(after.slow)")
        #expect(before.fast >= 15 && before.slow >= 2 && before.fast >= 3 * before.slow, "\(before)")
        #expect(after.slow >= 15 && 2 * after.slow >= after.fast, "\(after)")
        #expect(runner.stderr.isEmpty || !runner.stderr.contains("error"), "\(runner.stderr)")
    }

    /// A beacon's own address: one given, one made up (`static`), each heard from its own
    /// random address by an independent scanner, the third from the controller's public one.
    @Test func eachBeaconAdvertisesFromItsOwnAddress() throws {
        let path = try write("""
            beacons:
              given: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2, address: C0:11:22:33:44:55}
              made: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 3, address: static}
              plain: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 4}
            steps:
              - advertise: [given, made, plain]
              - wait: 2

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duration", "3"])
        Thread.sleep(forTimeInterval: 0.4)
        let runner = try runBeaconEmit(["run", path, "-i", device, "--json"])
        #expect(runner.status == 0, "\(runner.stdout)\(runner.stderr)")
        #expect(scan.wait() == 0, "\(scan.stderr)")
        var from: [Int: (address: String, type: String)] = [:]
        for line in events(scan.stdout) {
            guard let minor = line["minor"] as? Int, let address = line["address"] as? String,
                  let type = line["addressType"] as? String else { continue }
            from[minor] = (address, type)
        }
        #expect(from[2]?.address == "C0:11:22:33:44:55" && from[2]?.type == "random", "\(from)")
        let made = from[3]?.address ?? ""
        #expect(from[3]?.type == "random" && made != "C0:11:22:33:44:55" && (made.first.map { "CDEF".contains($0) } ?? false),
                "a static random address (top bits 11): \(from)")
        #expect(from[4]?.type == "public" && from[4]?.address != made, "\(from)")
    }

    /// `rotateAddress`: a new non-resolvable address every second, on the running set, and no
    /// silence at an independent scanner longer than the beacon's interval or two (the address
    /// changes between advertising events, the set not stopped).
    @Test func aRotatingAddressChangesWithoutAGap() throws {
        let path = try write("""
            interval: 100
            beacons:
              moving: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 5, rotateAddress: 1}
            steps:
              - advertise: moving
              - wait: 4.5

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duplicates", "--duration", "6"])
        Thread.sleep(forTimeInterval: 0.4)
        let runner = try runBeaconEmit(["run", path, "-i", device, "--json"])
        #expect(runner.status == 0, "\(runner.stdout)\(runner.stderr)")
        #expect(scan.wait() == 0, "\(scan.stderr)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let heard = events(scan.stdout).compactMap { line -> (address: String, type: String, at: Double)? in
            guard line["minor"] as? Int == 5, let address = line["address"] as? String, let type = line["addressType"] as? String,
                  let at = (line["timestamp"] as? String).flatMap(formatter.date(from:))?.timeIntervalSince1970 else { return nil }
            return (address, type, at)
        }
        var addresses: [String] = []
        for report in heard where addresses.last != report.address { addresses.append(report.address) }
        #expect(addresses.count >= 4 && Set(addresses).count == addresses.count, "a new one each second: \(addresses)")
        #expect(heard.allSatisfy { $0.type == "random" && "0123".contains($0.address.first ?? "F") },
                "non-resolvable (top bits 00): \(Set(heard.map(\.address)))")
        let silences = zip(heard, heard.dropFirst()).map { $1.at - $0.at }
        let longest = silences.max() ?? .infinity
        print("rotating address: \(addresses.count) addresses in \(heard.count) reports, longest silence "
              + "\(Int(longest * 1000)) ms at a 100 ms interval")
        #expect(longest < 0.25, "\(silences)")
        #expect(runner.stderr.components(separatedBy: "moving: new address ").count - 1 >= 3, "\(runner.stderr)")
    }

    /// The minor changes twice while the beacon advertises: an independent scanner hears the
    /// old data, then the new, never the old again, and never a silence longer than three
    /// advertising intervals across a change.
    @Test func anUpdateInPlaceLeavesNoGapOnTheAir() throws {
        let path = try write(Self.beacons + """
            steps:
              - advertise: lobby
              - wait: 1
              - update: {beacon: lobby, minor: 3}
              - wait: 1
              - update: {beacon: lobby, minor: 1}
              - wait: 1

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["run", path, "-i", device, "--json"])
        var heard: [(time: ContinuousClock.Instant, data: [UInt8])] = []
        let deadline = ContinuousClock.now + .seconds(6)
        while ContinuousClock.now < deadline {
            guard let report = try scanner.scanner.nextReport(timeout: .milliseconds(200)) else {
                if !heard.isEmpty && emitter.stdout.contains(#""event":"summary""#) { break }
                continue
            }
            if threeBeaconData.contains(report.data) { heard.append((.now, report.data)) }
        }
        #expect(emitter.wait() == 0, "\(emitter.stdout)\(emitter.stderr)")
        // minor 2, then 3, then 1: the order of the data heard, runs collapsed.
        var order: [[UInt8]] = []
        for entry in heard where order.last != entry.data { order.append(entry.data) }
        #expect(order == [threeBeaconData[1], threeBeaconData[2], threeBeaconData[0]],
                "\(order.map { HexText.format($0) })")
        var gaps: [Duration] = []
        for index in heard.indices.dropFirst() where heard[index].data != heard[index - 1].data {
            gaps.append(heard[index - 1].time.duration(to: heard[index].time))
        }
        #expect(gaps.count == 2)
        #expect(gaps.allSatisfy { $0 <= .milliseconds(300) }, "\(gaps)")
        // The runner's own measure at its scanner agrees.
        let arrivals = emitter.stdout.split(separator: "\n").filter { $0.contains(#""event":"update-arrived""#) }
        #expect(arrivals.count == 2, "\(emitter.stdout)")
        print("update gaps at the independent scanner: \(gaps); the runner's: \(arrivals)")
    }

    /// More beacons than the controller's sets (rootcanal has 16): the ones beyond take turns
    /// on the last set, and the independent scanner hears every one.
    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"))
    func moreBeaconsThanSetsAreAllHeard() throws {
        let count = 20
        let path = try write("interval: 50\nrotation: 150\nbeacons:\n"
            + (1...count).map { "  b\($0): {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 9, minor: \($0)}\n" }.joined()
            + "steps:\n  - advertise: [" + (1...count).map { "b\($0)" }.joined(separator: ", ") + "]\n  - wait: 4\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["run", path, "-i", device])
        var minors = Set<UInt16>()
        _ = try scanner.collect(timeout: .seconds(5)) { reports in
            for report in reports.suffix(1) {
                if case let .iBeacon(beacon)? = (try? report.sightings())?.first?.beacon, beacon.major == 9 { minors.insert(beacon.minor) }
            }
            return minors.count == count
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(minors == Set(1...UInt16(count)), "heard \(minors.sorted())")
        #expect(emitter.stderr.contains("take turns"), "\(emitter.stderr)")
    }

    /// A TX-power ramp sets each level on the controller (its parameters), and the beacon is
    /// on the air again after it.
    @Test func aTxPowerRampSetsEachLevel() throws {
        let path = try write(Self.beacons + """
            steps:
              - advertise: lobby
              - ramp: {beacon: lobby, from: 0, to: -12, step: 4, every: 0.2}
              - expect: {seen: lobby, within: 2}

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try runBeaconEmit(["run", path, "-i", device, "-v"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for level in [0, -4, -8, -12] {
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.contains { $0.contains("parameters") && $0.contains("TX power \(level) dBm") }, "\(level): \(run.stderr)")
        }
        #expect(run.stdout.contains("1 expectation: 1 passed"), "\(run.stdout)")
    }
}
}

extension Rig {
/// A step's wait for its boxes is the observer's own wait: the scan goes on while a box takes
/// its time, and what it heard is there for the next step.
@Suite struct ObserverWaitRootcanalTests {
    let port = rigPort ?? 0

    @Test func theScanGoesOnWhileAStepWaitsForItsBoxes() throws {
        let beacon = try TestAdvertiser(port: port, data: threeBeaconData[0])
        defer { withExtendedLifetime(beacon) {} }
        let scanner = try TestScanner(port: port)
        let observer = LiveObserver(scanner: scanner.scanner, interrupt: nil)
        let host = Scenario.HostDefinition(name: "lobby", destination: "beacon@pi-lobby", controlPath: "/run/beacon-emit-lobby/control")
        let boxes = try RemoteBoxes.open([host], arguments: { _ in
            ["sh", "-c", "read line; echo '{\"ok\":true}'; read line; sleep 0.6; echo '{\"ok\":true}'; sleep 30"]
        }, progress: { _ in })
        defer { RemoteBoxes.close(boxes.values) }
        let box = try #require(boxes["lobby"])
        _ = try observer.queued()  // what was heard before the step
        #expect(box.send(.list, what: "list", handle: { _ in nil }) == nil)
        let started = ContinuousClock.now
        let collected = RemoteBox.collect([box], timeout: .seconds(10), waitingIn: observer)
        let waited = started.duration(to: .now)
        print("reports read while the step waited \(waited) for its box: \(observer.unread)")
        #expect(collected.failures.isEmpty && !collected.interrupted, "\(collected)")
        // A 100 ms beacon over the 0.6 s the box took: several reports, read in the wait.
        #expect(observer.unread >= 2, "read \(observer.unread) reports in the wait")
        if case .report(let report) = try observer.next(until: observer.now) {
            #expect(Array(report.data) == threeBeaconData[0])
        } else {
            Issue.record("no report kept for the next step")
        }
    }
}
}
