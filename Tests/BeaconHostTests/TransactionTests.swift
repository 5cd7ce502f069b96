// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// Changes to running beacons as transactions (`LiveBeacons`): a disruption that cuts one short
/// reaches the supervisor and changes nothing in the list; a refusal changes nothing on the
/// air either; what a failed change created on the controller is removed later.
@Suite struct TransactionTests {
    static let minor3 = LiveChangeTests.minor3
    static let minor3Data = LiveChangeTests.minor3Data
    static let hardwareError = hex("10 01 2A  // Hardware Error 0x2A")

    /// One beacon on set 0 of an owned controller, then `more` steps.
    func owned(_ more: [ScriptedTransport.Step]) throws -> (HCISession, Advertiser, ScriptedTransport) {
        let transport = ScriptedTransport(LiveChangeTests.started + more)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .extended))
        try advertiser.start(capabilities: capabilities(extended: true), controllerWasReset: true)
        return (HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil), advertiser, transport)
    }

    /// The Hardware Error that answers an update instead of its Command Complete: the update
    /// fails as interrupted, the list keeps the old beacon, and the session's next wait hands
    /// the error to the supervisor (before this, only the requester heard of it).
    @Test func aHardwareErrorDuringAnUpdateReachesTheSupervisor() throws {
        let (session, advertiser, _) = try owned([
            .init(command: hex("37 20 22 00 03 01 1E") + Self.minor3Data, answers: [Self.hardwareError]),
        ])
        do {
            try session.live.update(1, to: Self.minor3)
            Issue.record("the update succeeded")
        } catch {
            guard case let .interrupted(disruption, cause) = error else { throw error }
            #expect(disruption == .hardwareError(code: 0x2A))
            if case .hardwareError = cause {} else { Issue.record("cause \(cause)") }
        }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(try session.takeIn() == .disrupted(.hardwareError(code: 0x2A)))
        #expect(try session.takeIn() == .quiet, "one error, one disruption")
    }

    /// A reset by someone else lands between a remove's commands: the controller refuses the
    /// disable (the set is gone). The beacon stays in the list with its set, and the reset
    /// reaches the supervisor, whose restore puts both back.
    @Test func aRemoveThatAResetCutsShortKeepsTheBeaconAndItsSet() throws {
        let (session, advertiser, transport) = try owned(ComeAndGoTests.adding(set: 1, data: Self.minor3Data)
            + [.init(command: hex("39 20 06 00 01 00 00 00 00  // disable set 0"),
                     answers: [complete(0x0C03), complete(0x2039, status: 0x42)])])
        #expect(try session.live.add(Self.minor3) == 2)
        #expect(throws: HostError.self) { try session.live.remove(1) }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon, Self.minor3])
        #expect(advertiser.plan?.handles == [0, 1])
        #expect(advertiser.leftovers.isEmpty)
        #expect(try session.takeIn() == .disrupted(.controllerReset))
        #expect(transport.remainingSteps == 0)
    }

    /// Unknown Advertising Identifier for a set of ours, with no reset heard (yet): the set is
    /// gone, so the beacons are off the air, which the supervisor is told.
    @Test func aSetTheControllerNoLongerKnowsIsADisruption() throws {
        let (session, advertiser, _) = try owned([
            .init(command: hex("37 20 22 00 03 01 1E") + Self.minor3Data, answers: [complete(0x2037, status: 0x42)]),
        ])
        #expect(Self.interruption { () throws(HostError) in try session.live.update(1, to: Self.minor3) }?.code
                == "advertising-lost")
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        let signal = try session.takeIn()
        #expect("\(signal)".contains("LE Set Extended Advertising Data refused"), "\(signal)")
    }

    /// What interrupted `change`, or nil when it succeeded or failed otherwise.
    static func interruption(_ change: () throws(HostError) -> Void) -> Disruption? {
        do {
            try change()
        } catch {
            if case let .interrupted(disruption, _) = error { return disruption }
        }
        return nil
    }

    /// A refusal with no disruption is the request's answer, not an interruption.
    @Test func aPlainRefusalIsNotAnInterruption() throws {
        let (session, advertiser, _) = try owned([
            .init(command: hex("37 20 22 00 03 01 1E") + Self.minor3Data, answers: [complete(0x2037, status: 0x0C)]),
        ])
        do {
            try session.live.update(1, to: Self.minor3)
            Issue.record("the update succeeded")
        } catch {
            guard case .controllerRefused = error else { Issue.record("\(error)"); return }
        }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(try session.takeIn() == .quiet)
    }

    /// Disabled is off the air, as the list says: a set the controller then will not remove
    /// is a leftover, removed (with ours) at the next stop.
    @Test func aSetThatWillNotGoIsRemovedAtTheNextStop() throws {
        let (session, advertiser, transport) = try owned(ComeAndGoTests.adding(set: 1, data: Self.minor3Data)
            + [.init(command: hex("39 20 06 00 01 01 00 00 00  // disable set 1"), answers: [complete(0x2039)]),
               .init(command: hex("3C 20 01 01  // remove set 1"), answers: [complete(0x203C, status: 0x0C)]),
               // The stop: the leftover first, then ours.
               .init(command: hex("39 20 06 00 01 01 00 00 00"), answers: [complete(0x2039)]),
               .init(command: hex("3C 20 01 01"), answers: [complete(0x203C)]),
               .init(command: hex("39 20 06 00 01 00 00 00 00"), answers: [complete(0x2039)]),
               .init(command: hex("3C 20 01 00"), answers: [complete(0x203C)])])
        #expect(try session.live.add(Self.minor3) == 2)
        try session.live.remove(2)
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(advertiser.leftovers == [1])
        try session.stop()
        #expect(advertiser.leftovers.isEmpty)
        #expect(transport.remainingSteps == 0)
    }

    /// An add whose enable is answered by a Hardware Error: the new set is ours from its
    /// parameters on, so the clean-up that fails with the controller is left to the restore.
    @Test func anAddCutShortLeavesItsSetToTheRestore() throws {
        var adding = ComeAndGoTests.adding(set: 1, data: Self.minor3Data)
        adding[2].answers = [Self.hardwareError]
        let (session, advertiser, _) = try owned(adding
            + [.init(command: hex("39 20 06 00 01 01 00 00 00  // clean-up: disable set 1"), answers: [Self.hardwareError])])
        #expect(throws: HostError.self) { _ = try session.live.add(Self.minor3) }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(advertiser.plan?.handles == [0])
        #expect(advertiser.leftovers == [1])
        #expect(try session.takeIn() == .disrupted(.hardwareError(code: 0x2A)))
    }

    /// Through the kernel: a Controller Error kept while an update waited makes the update's
    /// failure an interruption, and the session hands the error over.
    @Test func throughTheKernelAControllerErrorDuringAChangeIsAnInterruption() throws {
        let update = try AddExtendedAdvertisingData(instance: 2, advertisingData: Self.minor3Data)
        let kernel = ScriptedKernel([featuresStep(maximum: 2, taken: [1])] + addSteps(instance: 2)
            + [.init(command: update.packet(index: 0),
                     answers: [MgmtEvent.controllerError(code: 0x2A).packet(index: 0),
                               MgmtEvent.commandComplete(opcode: AddExtendedAdvertisingData.opcode, status: .failed,
                                                         returnParameters: []).packet(index: 0)])])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start()
        let session = ManagedSession(advertiser: advertiser, openMonitor: { _ in nil })
        do {
            try session.live.update(1, to: Self.minor3)
            Issue.record("the update succeeded")
        } catch {
            guard case let .interrupted(disruption, _) = error else { throw error }
            #expect(disruption == .hardwareError(code: 0x2A))
        }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(try session.takeIn() == .disrupted(.hardwareError(code: 0x2A)))
    }

    /// An instance whose parameters the kernel took but whose data it refused is ours: removed
    /// at once. One whose parameters it refused was never ours: not touched (it may be
    /// another program's, taken since the features were read).
    @Test func throughTheKernelOnlyAnInstanceTheKernelTookIsRemovedAfterAFailedAdd() throws {
        let data = try AddExtendedAdvertisingData(instance: 3, advertisingData: Self.minor3Data)
        let kernel = ScriptedKernel([featuresStep(maximum: 2, taken: [1])] + addSteps(instance: 2)
            + [featuresStep(taken: [1, 2]), addSteps(instance: 3)[0], completes(data, status: .busy),
               completes(RemoveAdvertising(instance: 3), returning: [3])]
            + [featuresStep(taken: [1, 2]),
               completes(AddExtendedAdvertisingParameters(instance: 3, flags: [.intervalParameters],
                                                          minimumInterval: 160, maximumInterval: 160), status: .busy)])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon]))
        var recorded: [[UInt8]] = []
        advertiser.instancesChanged = { recorded.append($0) }
        try advertiser.start()
        let session = ManagedSession(advertiser: advertiser, openMonitor: { _ in nil })
        #expect(throws: HostError.self) { _ = try session.live.add(Self.minor3) }
        #expect(advertiser.leftovers.isEmpty)
        #expect(throws: HostError.self) { _ = try session.live.add(Self.minor3) }
        #expect(advertiser.plan?.handles == [2])
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(kernel.remainingSteps == 0, "no Remove Advertising for the refused instance")
        #expect(recorded == [[2], [2, 3], [2]], "recorded at start, and while it was ours")
    }
}
