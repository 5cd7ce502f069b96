// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// `advertise`'s beacons with an interval and TX power of their own (`--beacon ...,interval=500`):
/// each on its set with its own parameters, changed in place on that set only, and refused
/// before anything is sent where the beacons would take turns on one set.
@Suite struct OwnParametersTests {
    static let beacons = (1...3).map { Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                                              major: 1, minor: UInt16($0))) }
    static let slow = BeaconParameters(intervalUnits: 800, txPower: -8)

    /// LE Set Extended Advertising Parameters for a legacy non-connectable PDU on `set`.
    static func parameters(set: UInt8, interval: String, txPower: String) -> [UInt8] {
        hex("36 20 19 \(String(format: "%02X", set)) 10 00  \(interval) \(interval) 07  00 00 00 00 00 00 00 00 00"
            + "  \(txPower) 01 00 01 \(String(format: "%02X", set)) 00")
    }

    @Test func eachBeaconsSetHasItsOwnParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2)),
                                                                beaconParameters: [.run, Self.slow]))
        try advertiser.start(capabilities: capabilities(extended: true))
        let parameters = transport.sent.filter { $0.prefix(2) == [0x36, 0x20] }
        #expect(parameters == [Self.parameters(set: 0, interval: "A0 00 00", txPower: "7F"),   // the run's: 100 ms, no preference
                               Self.parameters(set: 1, interval: "20 03 00", txPower: "F8")])  // its own: 500 ms, -8 dBm
        #expect(advertiser.parameters == [.run, Self.slow])
    }

    /// New parameters: that beacon's set disabled, its parameters, enabled again; its data and
    /// the other set untouched.
    @Test func aChangeOfParametersIsAGapOnItsOwnSetOnly() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2))))
        try advertiser.start(capabilities: capabilities(extended: true))
        let before = transport.sent.count
        try advertiser.update(1, to: Self.beacons[1], parameters: BeaconParameters(intervalUnits: 320))
        #expect(Array(transport.sent.dropFirst(before)) == [
            hex("39 20 06 00 01 01 00 00 00   // disable set 1"),
            Self.parameters(set: 1, interval: "40 01 00", txPower: "7F"),
            hex("39 20 06 01 01 01 00 00 00   // enable set 1"),
        ])
        #expect(advertiser.parameters == [.run, BeaconParameters(intervalUnits: 320)])
        // Data and parameters together: the parameters first, then the data on the running set.
        let middle = transport.sent.count
        try advertiser.update(0, to: Self.beacons[2], parameters: Self.slow)
        #expect(transport.sent.dropFirst(middle).map { $0[0] } == [0x39, 0x36, 0x39, 0x37])
        #expect(advertiser.beacons == [Self.beacons[2], Self.beacons[1]])
    }

    /// A restore (after a reset) puts each beacon back with its own parameters, as changed.
    @Test func aRestoreKeepsEachBeaconsOwnParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2)),
                                                                beaconParameters: [.run, Self.slow]))
        try advertiser.start(capabilities: capabilities(extended: true))
        try advertiser.update(0, to: Self.beacons[0], parameters: BeaconParameters(intervalUnits: 320))
        let before = transport.sent.count
        try advertiser.restore(controllerWasReset: true)
        #expect(transport.sent.dropFirst(before).filter { $0.prefix(2) == [0x36, 0x20] }
                == [Self.parameters(set: 0, interval: "40 01 00", txPower: "7F"),
                    Self.parameters(set: 1, interval: "20 03 00", txPower: "F8")])
    }

    /// Parameters the controller refuses: the set enabled again with the ones it had, the books as they were.
    @Test func refusedParametersLeaveTheSetAsItWas() throws {
        let transport = ScriptedTransport(extendedSteps + [
            .init(command: hex("39 20 06 00 01 00 00 00 00"), answers: [complete(0x2039)]),
            .init(command: Self.parameters(set: 0, interval: "A0 00 00", txPower: "EC"),
                  answers: [complete(0x2036, status: 0x11)]),  // Unsupported Feature or Parameter Value
            .init(command: hex("39 20 06 01 01 00 00 00 00   // enabled again"), answers: [complete(0x2039)]),
        ])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start(capabilities: capabilities(extended: true))
        #expect(throws: HostError.self) { try advertiser.update(0, to: referenceBeacon, parameters: BeaconParameters(txPower: -20)) }
        #expect(transport.remainingSteps == 0)
        #expect(advertiser.parameters == [.run])
    }

    /// Beacons that take turns on one set share its parameters: a beacon of its own is refused
    /// before anything is sent, at start and when it would join the turns.
    @Test func turnsRefuseABeaconWithItsOwnParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Self.beacons, beaconParameters: [.run, .run, Self.slow]))
        #expect {
            try advertiser.start(capabilities: capabilities(extended: true, sets: 2))
        } throws: { "\($0)".contains("beacon 3 has its own interval 500 ms = 800 x 0.625 ms, TX power -8 dBm, and the beacons would take turns") }
        #expect(transport.sent.isEmpty)

        let legacy = ScriptedTransport(answeringEverything: true)
        let single = Advertiser(controller: HCIController(transport: legacy),
                                options: AdvertisingOptions(beacons: [referenceBeacon], beaconParameters: [BeaconParameters(intervalUnits: 800)]))
        try single.start(capabilities: capabilities(extended: false))
        // Legacy advertising takes the one beacon's own interval.
        #expect(Array(legacy.sent[1].prefix(7)) == hex("06 20 0F 20 03 20 03"))
        let sent = legacy.sent.count
        #expect(throws: HostError.self) { try single.add(Self.beacons[1]) }
        #expect(single.beacons == [referenceBeacon] && legacy.sent.count == sent)
        #expect {
            try single.update(0, to: referenceBeacon, parameters: BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("beacon 1's TX power needs extended advertising") }
        #expect(legacy.sent.count == sent)
    }

    /// Through the kernel: the instance's parameters carry the beacon's interval, and a change
    /// gives them again (the kernel sets the instance up anew).
    @Test func throughTheKernelAnInstanceHasItsBeaconsInterval() throws {
        let own = BeaconParameters(intervalUnits: 800)
        let kernel = ScriptedKernel([featuresStep(maximum: 2)] + addSteps(instance: 1) + [featuresStep(maximum: 2, taken: [1]),
            completes(AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters],
                                                       minimumInterval: 800, maximumInterval: 800), returning: [2, 0x00, 31, 31]),
            completes(try! AddExtendedAdvertisingData(instance: 2, advertisingData: Self.beacons[1].advertisingData.bytes),
                      returning: [2]),
            completes(AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters],
                                                       minimumInterval: 320, maximumInterval: 320), returning: [2, 0x00, 31, 31]),
            completes(try! AddExtendedAdvertisingData(instance: 2, advertisingData: Self.beacons[1].advertisingData.bytes),
                      returning: [2]),
        ])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon, Self.beacons[1]],
                                                                       beaconParameters: [.run, own]))
        try advertiser.start()
        try advertiser.update(1, to: Self.beacons[1], parameters: BeaconParameters(intervalUnits: 320))
        #expect(kernel.remainingSteps == 0)
        #expect(advertiser.parameters == [.run, BeaconParameters(intervalUnits: 320)])
    }
}
