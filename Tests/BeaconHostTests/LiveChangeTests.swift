// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// Beacons changed while they advertise (`advertise --control`): what each change sends, and
/// that a refused change leaves the beacons as they were.
@Suite struct LiveChangeTests {
    static let minor3 = Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                               major: 101, minor: 3))
    static let minor3Data = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650003C5")

    /// The extended flow on set 0 (an owned controller, nothing to disable first).
    static let started = Array(extendedSteps[1...])

    @Test func anUpdateIsNewDataOnTheRunningSetOnly() throws {
        let transport = ScriptedTransport(Self.started
            + [.init(command: hex("37 20 22 00 03 01 1E") + Self.minor3Data, answers: [complete(0x2037)])])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .extended))
        try advertiser.start(capabilities: capabilities(extended: true), controllerWasReset: true)
        try advertiser.live.update(1, to: Self.minor3)
        #expect(advertiser.running.map(\.beacon) == [Self.minor3])
        #expect(transport.remainingSteps == 0)
    }

    @Test func aRefusedUpdateKeepsTheOldBeacon() throws {
        let transport = ScriptedTransport(Self.started
            + [.init(command: hex("37 20 22 00 03 01 1E") + Self.minor3Data, answers: [complete(0x2037, status: 0x0C)])])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .extended))
        try advertiser.start(capabilities: capabilities(extended: true), controllerWasReset: true)
        #expect(throws: HostError.self) { try advertiser.live.update(1, to: Self.minor3) }
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
    }

    /// An added beacon gets the next set (its parameters, data, enable; the others untouched);
    /// a removed one's set is disabled and removed; through `LiveBeacons` (`advertise`, the
    /// control socket, the library) the last one stays, and nothing is sent for it.
    @Test func anAddedBeaconGetsASetOfItsOwnAndARemovedOneGivesItBack() throws {
        let numberOfSets = ScriptedTransport.Step(command: hex("3B 20 00"), answers: [complete(0x203B, returning: [0x04])])
        let transport = ScriptedTransport(Self.started
            + [EmitterStartTests.readCommands(extended: true), numberOfSets]
            + ComeAndGoTests.adding(set: 1, data: Self.minor3Data)
            + ComeAndGoTests.removing(set: 0))
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .extended))
        // One beacon at start: the number of sets was not read then, so the first add reads it.
        try advertiser.start(capabilities: AdvertisingCapabilities(supportsExtendedAdvertising: true), controllerWasReset: true)
        #expect(try advertiser.live.add(Self.minor3) == 2)
        #expect(advertiser.plan?.handles == [0, 1])
        try advertiser.live.remove(1)
        #expect(advertiser.plan?.handles == [1])
        #expect(advertiser.running.map(\.beacon) == [Self.minor3])
        let live = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil).live
        #expect { try live.remove(2) } throws: { "\($0)".contains("the last one") }
        #expect(advertiser.running.map(\.beacon) == [Self.minor3])
        #expect(transport.remainingSteps == 0)
    }

    /// Legacy advertising has one set: an added beacon takes turns with the first.
    @Test func onLegacyAdvertisingAnAddedBeaconTakesTurns() throws {
        let transport = ScriptedTransport(Array(legacySteps[1...])
            + [.init(command: hex("08 20 20 1E") + Self.minor3Data + [0x00], answers: [complete(0x2008)])])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy))
        try advertiser.start(capabilities: capabilities(extended: false), controllerWasReset: true)
        #expect(try advertiser.live.add(Self.minor3) == 2)
        #expect(advertiser.plan?.rotating == true)
        try advertiser.rotate()
        #expect(transport.remainingSteps == 0)
    }

    @Test func throughTheKernelAnUpdateIsNewDataForTheInstance() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 2, taken: [1])] + addSteps(instance: 2)
            + [completes(try AddExtendedAdvertisingData(instance: 2, advertisingData: Self.minor3Data), returning: [2])]
            + [featuresStep(taken: [1, 2])] + addSteps(instance: 3)
            + [completes(RemoveAdvertising(instance: 2), returning: [2])])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon]))
        var recorded: [[UInt8]] = []
        advertiser.instancesChanged = { recorded.append($0) }
        try advertiser.start()
        try advertiser.live.update(1, to: Self.minor3)
        #expect(try advertiser.live.add(referenceBeacon) == 2)
        try advertiser.live.remove(1)
        #expect(advertiser.plan?.handles == [3])
        #expect(advertiser.running.map(\.beacon) == [referenceBeacon])
        #expect(recorded == [[2], [2, 3], [3]])
        #expect(kernel.remainingSteps == 0)
    }
}

/// An interval that only extended advertising takes, on a controller with legacy advertising
/// only: refused before anything is sent.
@Suite struct IntervalRangeTests {
    @Test func aLegacyOnlyControllerRefusesALongIntervalBeforeSending() throws {
        let transport = ScriptedTransport([])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], intervalUnits: 0x4001))
        do {
            try advertiser.start(capabilities: capabilities(extended: false), controllerWasReset: true)
            Issue.record("started")
        } catch {
            #expect("\(error)".contains("legacy advertising only, which takes 20 to 10240 ms"), "\(error)")
        }
        #expect(transport.sent.isEmpty)
    }
}
