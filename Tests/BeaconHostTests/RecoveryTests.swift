// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing
import LinuxSystem
import Foundation

/// A session whose signals, adapter state and restore results the test sets.
final class FakeSession: AdvertisingSession {
    var plan: AdvertisingPlan? = AdvertisingPlan(mode: .extended, handles: [0xEF], rotating: false, address: nil,
                                                 addressIsRandom: false)
    var rotationPeriod = Duration.seconds(1)
    var state = AdapterAvailability.usable
    var restoreFailures = 0
    private(set) var restores = 0
    private(set) var rotations = 0
    private(set) var stops = 0
    /// A disruption the next rotation runs into (seen by the session as it happens).
    var rotationRunsInto: Disruption?
    /// The next rotation is refused, nothing else happening.
    var refuseRotation = false
    private(set) var disruptionsSeen: (count: Int, last: Disruption?) = (0, nil)

    func catchUp(after failure: HostError) {}
    func takeIn() throws(HostError) -> SessionSignal { .quiet }
    var pollDescriptors: [Int32] { [] }
    func availability() -> AdapterAvailability { state }
    func restore() throws(HostError) {
        restores += 1
        if restoreFailures > 0 {
            restoreFailures -= 1
            throw .managementRefused(opcode: .addExtendedAdvertisingParameters, status: .busy, context: nil, adapter: "hci0")
        }
    }
    func rotate() throws(HostError) {
        rotations += 1
        if refuseRotation { throw .controllerRefused(opcode: .leSetExtendedAdvertisingData, status: .commandDisallowed, context: nil) }
        if let disruption = rotationRunsInto {
            rotationRunsInto = nil
            disruptionsSeen = (disruptionsSeen.count + 1, disruption)
            throw .controllerRefused(opcode: .leSetExtendedAdvertisingData, status: .unknownAdvertisingIdentifier, context: nil)
        }
    }
    func stop() throws(HostError) { stops += 1 }
    /// The advertiser of an idle core (no controller behind it): nothing here changes beacons.
    let changer = BeaconChanger(Advertiser(controller: HCIController(transport: ScriptedTransport([])),
                                           options: AdvertisingOptions(beacons: [])))
    func closeOwn() {}
}

/// The supervisor's decisions, on an injected clock.
@Suite struct SupervisorTests {
    final class Clock {
        var now = ContinuousClock.now
        func advance(_ duration: Duration) { now += duration }
    }

    struct Rig {
        let session = FakeSession()
        let clock = Clock()
        let events = EventLog()
        var supervisor: Supervisor

        init(failFast: Bool = false) {
            let clock = self.clock
            let events = self.events
            supervisor = Supervisor(session: session, failFast: failFast, device: "hci0",
                                    report: { events.all.append($0) }, now: { clock.now })
        }

        /// Advances the clock and lets the supervisor act.
        mutating func pass(_ duration: Duration) throws {
            clock.advance(duration)
            try supervisor.tick()
        }
    }

    final class EventLog {
        var all: [EmitterEvent] = []
        var names: [String] {
            all.map {
                switch $0 {
                case let .offAir(disruption): "off-air \(disruption.code)"
                case let .waiting(state): "waiting \(state == .down ? "down" : "gone")"
                case .restoreFailed: "restore-failed"
                case let .restored(cause, _, _): "restored \(cause.code)"
                case let .step(text): "step \(text)"
                default: "other"
                }
            }
        }
    }

    @Test func aResetIsHealedOneSettleTimeLater() throws {
        var rig = Rig()
        try rig.supervisor.handle(.disrupted(.controllerReset))
        #expect(rig.events.names == ["off-air controller-reset"])
        try rig.pass(.milliseconds(50))
        #expect(rig.session.restores == 0, "not before the settle time")
        try rig.pass(.milliseconds(60))
        #expect(rig.session.restores == 1)
        #expect(rig.events.names.last == "restored controller-reset")
        if case let .restored(_, gap, afterUsable) = rig.events.all.last {
            #expect(gap == .milliseconds(110))
            #expect(afterUsable == .milliseconds(110), "the adapter stayed usable")
        }
        #expect(!rig.supervisor.isOffAir)
    }

    @Test func aDownAdapterIsWaitedForAndTheGapCountsFromItsReturn() throws {
        var rig = Rig()
        rig.session.state = .down
        try rig.pass(.seconds(1))  // the once-a-second check notices
        #expect(rig.events.names == ["off-air adapter-down", "waiting down"])
        for _ in 0..<20 { try rig.pass(.milliseconds(100)) }
        #expect(rig.session.restores == 0, "nothing is sent to an adapter that is down")
        #expect(rig.events.names.count == 2, "the waiting line is said once")
        rig.session.state = .usable
        try rig.pass(.milliseconds(100))   // seen usable
        try rig.pass(.milliseconds(100))   // settled: put back
        #expect(rig.session.restores == 1)
        if case let .restored(cause, gap, afterUsable) = rig.events.all.last {
            #expect(cause == .adapterDown)
            #expect(gap == .milliseconds(2200))
            #expect(afterUsable == .milliseconds(100))
        } else {
            Issue.record("not restored: \(rig.events.names)")
        }
    }

    @Test func failFastEndsOnAnUnusableAdapterButStillHealsAReset() throws {
        var rig = Rig(failFast: true)
        try rig.supervisor.handle(.disrupted(.controllerReset))
        try rig.pass(.milliseconds(100))
        #expect(rig.session.restores == 1)
        do {
            try rig.supervisor.handle(.disrupted(.poweredOff))
            Issue.record("no error")
        } catch {
            #expect({ if case .transport(.system(_, ENETDOWN), "hci0") = error { true } else { false } }(), "\(error)")
            #expect(error.description.contains("hci0 is down"))
        }
    }

    @Test func aFailedRestoreIsRetriedWithAGrowingDelay() throws {
        var rig = Rig()
        rig.session.restoreFailures = 2
        try rig.supervisor.handle(.disrupted(.instanceRemoved(3)))
        try rig.pass(.milliseconds(100))
        #expect(rig.session.restores == 1)
        try rig.pass(.milliseconds(150))
        #expect(rig.session.restores == 1, "the first retry waits 200 ms")
        try rig.pass(.milliseconds(50))
        #expect(rig.session.restores == 2)
        try rig.pass(.milliseconds(399))
        #expect(rig.session.restores == 2, "the second retry waits 400 ms")
        try rig.pass(.milliseconds(1))
        #expect(rig.session.restores == 3)
        #expect(rig.events.names == ["off-air instance-removed", "restore-failed", "restore-failed", "restored instance-removed"])
    }

    @Test func aSecondCauseWhileOffAirIsOneGap() throws {
        var rig = Rig()
        try rig.supervisor.handle(.disrupted(.instanceRemoved(3)))
        try rig.supervisor.handle(.disrupted(.poweredOff))
        rig.session.state = .down
        try rig.pass(.milliseconds(100))
        #expect(rig.session.restores == 0, "powered off: no restore until it is back")
        try rig.supervisor.handle(.adapterBack)
        rig.session.state = .usable
        try rig.pass(.milliseconds(100))
        #expect(rig.session.restores == 1)
        #expect(rig.events.names.filter { $0.hasPrefix("off-air") } == ["off-air instance-removed"])
        #expect(rig.events.names.contains("step also: the adapter was powered off"))
    }

    @Test func rotationPausesWhileOffAir() throws {
        var rig = Rig()
        rig.session.plan?.rotating = true
        try rig.pass(.seconds(1))
        #expect(rig.session.rotations == 1)
        try rig.supervisor.handle(.disrupted(.controllerReset))
        rig.session.restoreFailures = 10
        for _ in 0..<10 { try rig.pass(.milliseconds(300)) }
        #expect(rig.session.rotations == 1)
    }
}

extension SupervisorTests {
    /// A rotation that runs into a disruption is not the end of the run: the disruption is
    /// handed over at the next wait. One refused with no disruption still ends it.
    @Test func aRotationCutShortByADisruptionDoesNotEndTheRun() throws {
        var rig = Rig()
        rig.session.plan?.rotating = true
        rig.session.rotationRunsInto = .hardwareError(code: 0x2A)
        try rig.pass(.seconds(1))
        #expect(rig.session.rotations == 1)
        try rig.pass(.seconds(1))
        #expect(rig.session.rotations == 2, "the turns go on")
        rig.session.refuseRotation = true
        #expect(throws: HostError.self) { try rig.pass(.seconds(1)) }
    }
}

/// What the sessions make of what they see.
@Suite struct DisruptionTests {
    func sharedAdvertiser(legacy: Bool = false) throws -> Advertiser {
        let advertiser = Advertiser(controller: HCIController(transport: ScriptedTransport(answeringEverything: true)),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: legacy ? .legacy : .extended),
                                    sharedWithKernel: true)
        try advertiser.start(capabilities: capabilities(extended: !legacy))
        return advertiser
    }

    func command(_ annotated: String) throws -> ObservedPacket {
        .command(try HCICommandPacket(parsing: hex(annotated)[...]))
    }

    @Test func otherProgramsCommandsThatTouchOurSetsAreDisruptions() throws {
        let advertiser = try sharedAdvertiser()
        #expect(advertiser.plan?.handles == [0xEF])
        #expect(advertiser.isDisrupted(by: try command("39 20 02 00 00  // disable all")) != nil)
        #expect(advertiser.isDisrupted(by: try command("39 20 06 00 01 EF 00 00 00  // disable ours")) != nil)
        #expect(advertiser.isDisrupted(by: try command("3C 20 01 EF  // remove ours")) != nil)
        #expect(advertiser.isDisrupted(by: try command("37 20 05 EF 03 01 01 00  // data on ours")) != nil)
        #expect(advertiser.isDisrupted(by: .commandComplete(CommandComplete(opcode: .reset, returnParameters: [0]))) ==
                .controllerReset)
        #expect(advertiser.isDisrupted(by: .commandComplete(CommandComplete(opcode: .leClearAdvertisingSets,
                                                                            returnParameters: [0]))) != nil)
    }

    @Test func otherProgramsOwnSetsAreTheirBusiness() throws {
        let advertiser = try sharedAdvertiser()
        #expect(advertiser.isDisrupted(by: try command("39 20 06 00 01 01 00 00 00  // disable the kernel's set 1")) == nil)
        #expect(advertiser.isDisrupted(by: try command("39 20 06 01 01 01 00 00 00  // enable set 1")) == nil)
        #expect(advertiser.isDisrupted(by: try command("3C 20 01 01  // remove set 1")) == nil)
        #expect(advertiser.isDisrupted(by: try command("08 20 20 00" + String(repeating: " 00", count: 31))) == nil,
                "legacy data does not touch an extended set")
        #expect(advertiser.isDisrupted(by: .commandComplete(CommandComplete(opcode: .reset, returnParameters: [0x0C]))) == nil,
                "a refused reset reset nothing")
    }

    @Test func legacyAdvertisingIsDisruptedByAnyLegacyChange() throws {
        let advertiser = try sharedAdvertiser(legacy: true)
        #expect(advertiser.isDisrupted(by: try command("0A 20 01 00  // disable")) != nil)
        #expect(advertiser.isDisrupted(by: try command("0A 20 01 01  // enable")) == nil)
    }

    @Test func aHardwareErrorOrAForeignResetOnTheLinkIsSeen() throws {
        // After the enable, the controller reports a Reset nobody here sent, then a Hardware Error.
        let transport = ScriptedTransport(Array(legacySteps.dropFirst()) + [
            .init(command: nil, answers: [complete(0x0C03)]),
            .init(command: nil, answers: [hex("10 01 2A  // Hardware Error 0x2A")]),
        ])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy))
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil)
        try advertiser.start(capabilities: capabilities(extended: false), controllerWasReset: true)
        let signals: Set = [try session.takeIn(), try session.takeIn()]
        #expect(signals == [.disrupted(.controllerReset), .disrupted(.hardwareError(code: 0x2A))])
        #expect(try session.takeIn() == .quiet)
    }

    /// A lost link is closed at once (a socket left bound to an unplugged kernel adapter keeps
    /// its index taken, so it would come back under another name), then opened again.
    @Test func aLostLinkIsClosedThenReopened() throws {
        let transport = ScriptedTransport(Array(legacySteps.dropFirst()))
        transport.closeWhenDone = true
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy))
        let fresh = ScriptedTransport(answeringEverything: true)
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true,
                                 reconnect: { HCIController(transport: fresh) })
        try advertiser.start(capabilities: capabilities(extended: false), controllerWasReset: true)
        #expect(!transport.closed)
        #expect(try session.takeIn() == .disrupted(.linkClosed("scripted")))
        #expect(transport.closed)
        #expect(session.availability() == .usable)
        try session.restore()
        #expect(fresh.sent.first == hex("03 0C 00  // Reset, then the same beacon"))
        #expect(fresh.sent.count > 1)
    }
}

@Suite struct ManagedSessionTests {
    func session(_ extra: [ScriptedKernel.Step] = [], bringingUp: Bool = false) throws -> (ManagedSession, ScriptedKernel) {
        let kernel = ScriptedKernel([featuresStep(maximum: 2, taken: [1])] + addSteps(instance: 2) + extra)
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start()
        return (ManagedSession(advertiser: advertiser, bringsUpReturningAdapter: bringingUp, openMonitor: { _ in nil }), kernel)
    }

    /// Read Controller Information's return parameters with `settings` current.
    func information(_ settings: UInt32) -> [UInt8] {
        var information: [UInt8] = [0, 0, 0, 1, 0xAA, 0, 9, 0xF1, 0x05]
        information.appendLE(UInt32(0x0201))
        information.appendLE(settings)
        return information
    }

    @Test func ourInstanceRemovedIsADisruptionAnotherProgramsIsNot() throws {
        let (session, kernel) = try session()
        kernel.deliver([.advertisingRemoved(instance: 1), .advertisingAdded(instance: 2)])
        #expect(try session.takeIn() == .quiet)
        #expect(try session.takeIn() == .quiet)
        kernel.deliver([.advertisingRemoved(instance: 2)])
        #expect(try session.takeIn() == .disrupted(.instanceRemoved(2)))
    }

    @Test func powerOffAndOnAreFollowed() throws {
        let (session, kernel) = try session()
        kernel.deliver([.newSettings([.lowEnergy])])
        #expect(try session.takeIn() == .disrupted(.poweredOff))
        #expect(session.availability() == .down)
        kernel.deliver([.advertisingRemoved(instance: 2)])  // while off: expected, not news
        #expect(try session.takeIn() == .quiet)
        kernel.deliver([.newSettings([.powered, .lowEnergy])])
        #expect(try session.takeIn() == .adapterBack)
        #expect(session.availability() == .usable)
    }

    @Test func anAdapterThatGoesAwayAndComesBack() throws {
        var information: [UInt8] = [0, 0, 0, 1, 0xAA, 0, 9, 0xF1, 0x05]
        information.appendLE(UInt32(0x0201))
        information.appendLE(UInt32(0x0201))  // powered, LE
        let (session, kernel) = try session([completes(ReadControllerInformation(), returning: information)])
        kernel.deliver([.indexRemoved])
        #expect(try session.takeIn() == .disrupted(.adapterRemoved))
        #expect(session.availability() == .gone)
        kernel.deliver([.indexAdded])
        #expect(try session.takeIn() == .adapterBack)
        #expect(session.availability() == .usable)
        kernel.deliver([.controllerError(code: 7)])
        #expect(try session.takeIn() == .disrupted(.hardwareError(code: 7)))
    }

    /// With --up, an adapter that comes back (plugged in again, as the kernel makes it: LE and
    /// power off) is switched on as the first one was; without it, the session waits.
    @Test func aReturningAdapterIsBroughtUpWithUp() throws {
        let (session, kernel) = try session([
            completes(ReadControllerInformation(), returning: information(0)),
            completes(SetLowEnergy(enabled: true), returning: [0x00, 0x02, 0, 0]),
            completes(SetPowered(powered: true), returning: [0x01, 0x02, 0, 0]),
        ], bringingUp: true)
        kernel.deliver([.indexRemoved])
        #expect(try session.takeIn() == .disrupted(.adapterRemoved))
        kernel.deliver([.indexAdded])
        #expect(try session.takeIn() == .adapterBack)
        #expect(session.availability() == .usable)
        #expect(kernel.remainingSteps == 0)

        let (plain, plainKernel) = try self.session([completes(ReadControllerInformation(), returning: information(0))])
        plainKernel.deliver([.indexRemoved])
        #expect(try plain.takeIn() == .disrupted(.adapterRemoved))
        plainKernel.deliver([.indexAdded])
        #expect(try plain.takeIn() == .quiet)
        #expect(plain.availability() == .down)
        #expect(plainKernel.remainingSteps == 0)
    }

    @Test func eventsAboutOtherAdaptersAreIgnored() throws {
        let (session, kernel) = try session()
        kernel.deliver([.indexRemoved, .newSettings([])], index: 1)
        #expect(try session.takeIn() == .quiet)
        #expect(session.availability() == .usable)
    }
}

@Suite struct InstanceRecordTests {
    func directory(_ name: String) -> String { "/tmp/beacon-emit-record-test-\(getpid())-\(name)" }

    @Test func aRecordRoundTripsWithItsOwnerAndOnlyThisBootCounts() throws {
        let directory = directory("roundtrip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = InstanceRecord(adapter: "hci0", instances: [3, 2], data: [3: [0x02, 0x01, 0x06]])
        try record.save(in: directory)
        let read = InstanceRecord.all(adapter: "hci0", in: directory)
        #expect(read.map(\.record) == [record])
        #expect(read.first?.record.owner?.pid == getpid())
        #expect(read.first?.record.owner?.isRunning == true, "this process runs")
        #expect(InstanceRecord.all(adapter: "hci1", in: directory).isEmpty)
        try InstanceRecord(adapter: "hci0", instances: [3], boot: "an-earlier-boot",
                           owner: .init(pid: 1, startTime: 1)).save(in: directory)
        #expect(InstanceRecord.all(adapter: "hci0", in: directory).count == 1, "a record from before a reboot is ignored")
        #expect(InstanceRecord(adapter: "hci0", text: "boot x\ninstance 0\n") == nil, "instance 0 is not an instance")
        #expect(InstanceRecord(adapter: "hci0", text: "instance 3\n") == nil, "no boot: not a record")
        #expect(InstanceRecord(adapter: "hci0", text: "boot x\ninstance 3 0G\n") == nil, "data that is not hex")
        // A record written before owners were recorded still reads (its owner counts as gone).
        #expect(InstanceRecord(adapter: "hci0", text: "boot x\ninstance 3\n")?.owner == nil)
        // Carriage returns end lines too: "\r\n" is one Character, which a split at "\n" kept
        // whole (the boot read as "x\r", so the record counted as another boot's; found by fuzzing).
        let windows = InstanceRecord(adapter: "hci0", text: "boot x\r\nowner 7 9\r\ninstance 3\r\n")
        #expect(windows?.boot == "x" && windows?.instances == [3] && windows?.owner == .init(pid: 7, startTime: 9), "\(String(describing: windows))")
        #expect(InstanceRecord(adapter: "hci0", text: "boot x\r\r")?.text == "boot x\n")
    }

    @Test func anOwnerWhosePIDWasReusedIsNotRunning() {
        let me = InstanceRecord.Owner.current
        #expect(me.isRunning)
        #expect(!InstanceRecord.Owner(pid: me.pid, startTime: me.startTime + 1).isRunning, "same PID, another start")
        #expect(!InstanceRecord.Owner(pid: Int32.max, startTime: 0).isRunning, "no such process")
    }

    @Test func theDirectoryOutlivesSystemdsRuntimeDirectory() {
        #expect(InstanceRecord.directory(environment: ["STATE_DIRECTORY": "/var/lib/beacon-emit-lobby",
                                                       "RUNTIME_DIRECTORY": "/run/beacon-emit-lobby"])
                == "/var/lib/beacon-emit-lobby")
        #expect(InstanceRecord.directory(environment: ["RUNTIME_DIRECTORY": "/run/beacon-emit:/run/x"]) == "/run/beacon-emit")
        #expect(InstanceRecord.directory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/beacon-emit")
    }

    @Test func theLedgerFollowsTheInstancesAndGoesWhenNothingIsLeft() {
        let directory = directory("ledger")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = InstanceLedger(adapter: "hci0", directory: directory)
        ledger.note([3], data: [3: [1, 2]])
        #expect(InstanceRecord.all(in: directory).map(\.record.instances) == [[3]])
        ledger.note([3, 2])
        #expect(InstanceRecord.all(in: directory).map(\.record.instances) == [[3, 2]])
        ledger.finish(remaining: [2], kept: true)
        #expect(InstanceRecord.all(in: directory).map(\.record.kept) == [true])
        ledger.finish(remaining: [], kept: false)
        #expect(InstanceRecord.all(in: directory).isEmpty)
    }

    /// A dead run's record (a PID that is not running) and a running one's, on hci0.
    func records(in directory: String, keptDead: Bool = false) throws {
        try InstanceRecord(adapter: "hci0", instances: [3, 2], owner: .init(pid: Int32.max, startTime: 5),
                           kept: keptDead).save(in: directory)
        try InstanceRecord(adapter: "hci0", instances: [1], owner: .init(pid: getppid(), startTime:
            InstanceRecord.Owner.startTime(of: getppid()) ?? 0)).save(in: directory)
    }

    @Test func aNewRunRemovesWhatADeadRunLeftThatStillExistsAndNothingElse() throws {
        let directory = directory("sweep")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try records(in: directory)
        // The kernel lists 1 (the running owner's), 3 (the dead run's) and 4 (another program's);
        // 2 is gone already.
        let kernel = ScriptedKernel([featuresStep(maximum: 4, taken: [1, 3, 4]),
                                     completes(RemoveAdvertising(instance: 3), returning: [3])])
        let what = try AdvertisingShutdown.removeRecordedInstances(MgmtClient(transport: kernel, index: 0), keptToo: false,
                                                                   directory: directory)
        #expect(kernel.remainingSteps == 0)
        #expect(what.contains("removed instance(s) 3"), "\(what)")
        #expect(what.contains("pid \(getppid())"), "the running run's instances are named, not touched: \(what)")
        #expect(InstanceRecord.all(in: directory).map(\.record.instances) == [[1]], "the dead run's record is gone")
    }

    @Test func whatEndedRunsLeftIsSaidAndAFailureNeverStopsTheNewRun() throws {
        let directory = directory("left")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try records(in: directory)
        let refusing = ScriptedKernel([featuresStep(maximum: 4, taken: [1, 2, 3]),
                                       completes(RemoveAdvertising(instance: 3), status: .busy)])
        let failure = AdvertisingShutdown.removeWhatEndedRunsLeft(MgmtClient(transport: refusing, index: 0), directory: directory)
        #expect(failure?.hasPrefix("could not remove what an earlier run of beacon-emit left on hci0") == true, "\(String(describing: failure))")
        let kernel = ScriptedKernel([featuresStep(maximum: 4, taken: [1, 2, 3]),
                                     completes(RemoveAdvertising(instance: 3), returning: [3]),
                                     completes(RemoveAdvertising(instance: 2), returning: [2])])
        let said = AdvertisingShutdown.removeWhatEndedRunsLeft(MgmtClient(transport: kernel, index: 0), directory: directory)
        #expect(said == "an earlier run of beacon-emit on hci0 ended without cleaning up: removed instance(s) 3, 2 that "
                + "beacon-emit added; left those of beacon-emit runs still going: instance(s) 1 (pid \(getppid())) "
                + "(stop them with SIGTERM or systemctl stop)")
        #expect(AdvertisingShutdown.removeWhatEndedRunsLeft(MgmtClient(transport: ScriptedKernel([]), index: 0),
                                                            directory: directory + "-none") == nil, "nothing recorded: nothing said")
    }

    @Test func aKeptRecordStaysForStopNotForTheNextRun() throws {
        let directory = directory("kept")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try records(in: directory, keptDead: true)
        let untouched = ScriptedKernel([])
        _ = try AdvertisingShutdown.removeRecordedInstances(MgmtClient(transport: untouched, index: 0), keptToo: false,
                                                            directory: directory)
        #expect(untouched.sent.isEmpty, "a new run leaves --keep's instances")
        let kernel = ScriptedKernel([featuresStep(taken: [2, 3]), completes(RemoveAdvertising(instance: 3), returning: [3]),
                                     completes(RemoveAdvertising(instance: 2), returning: [2])])
        _ = try AdvertisingShutdown.removeRecordedInstances(MgmtClient(transport: kernel, index: 0), directory: directory)
        #expect(kernel.remainingSteps == 0, "stop removes them")
    }
}

/// The run loop and its sources: work that no descriptor announces is served when due.
@Suite struct RunLoopTests {
    final class DueSource: RunLoopSource {
        let pipe: [Int32]
        private(set) var served = 0
        init() {
            var fds: [Int32] = [0, 0]
            _ = Glibc.pipe(&fds)
            pipe = fds
        }
        var descriptors: [Int32] { [pipe[0]] }
        func serve() { served += 1 }
        /// Due at once until served twice.
        var due: ContinuousClock.Instant? { served < 2 ? .now : nil }
        deinit { pipe.forEach { close($0) } }
    }

    @Test func aSourceDueNowIsServedWithoutItsDescriptor() throws {
        let source = DueSource()
        try Emitter.run(FakeSession(), duration: .milliseconds(50), keep: true, interrupt: nil, sources: [source], report: { _ in })
        #expect(source.served == 2)
    }
}
