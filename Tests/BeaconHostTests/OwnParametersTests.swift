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
        #expect(advertiser.live.parameters == [.run, Self.slow])
    }

    /// New parameters: that beacon's set disabled, its parameters, enabled again; its data and
    /// the other set untouched.
    /// A beacon is one value from the options to the air: given with its own parameters, it runs
    /// as one `RunningBeacon` with its id, sent as the parallel lists send it.
    @Test func aBeaconIsOneValueFromTheOptionsToTheAir() throws {
        let given = [AdvertisingOptions.GivenBeacon(Self.beacons[0]), .init(Self.beacons[1], parameters: Self.slow)]
        let options = AdvertisingOptions(given: given)
        #expect(options.beacons == Array(Self.beacons.prefix(2)) && options.beaconParameters == [.run, Self.slow])
        #expect(options.given == given)
        #expect(AdvertisingOptions(given: [.init(Self.beacons[0])]).beaconParameters.isEmpty, "all the run's: none of their own")
        let (oneValue, lists) = (ScriptedTransport(answeringEverything: true), ScriptedTransport(answeringEverything: true))
        let advertiser = Advertiser(controller: HCIController(transport: oneValue), options: options)
        try advertiser.start(capabilities: capabilities(extended: true))
        let reference = Advertiser(controller: HCIController(transport: lists),
                                   options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2)), beaconParameters: [.run, Self.slow]))
        try reference.start(capabilities: capabilities(extended: true))
        #expect(oneValue.sent == lists.sent)
        #expect(advertiser.running == [RunningBeacon(id: 1, beacon: Self.beacons[0]),
                                       RunningBeacon(id: 2, beacon: Self.beacons[1], parameters: Self.slow)])
        let added = try advertiser.live.add(Self.beacons[2], parameters: BeaconParameters(txPower: 0))
        #expect(added == 3 && advertiser.live.running(3)?.parameters == BeaconParameters(txPower: 0))
        try advertiser.live.remove(1)
        #expect(advertiser.ids == [2, 3], "a remove moves no other beacon's id")
        #expect { try advertiser.live.update(1, to: Self.beacons[0]) } throws: { "\($0)".contains("no beacon 1") }
    }

    @Test func aChangeOfParametersIsAGapOnItsOwnSetOnly() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2))))
        try advertiser.start(capabilities: capabilities(extended: true))
        let before = transport.sent.count
        try advertiser.live.update(2, to: Self.beacons[1], parameters: BeaconParameters(intervalUnits: 320))
        #expect(Array(transport.sent.dropFirst(before)) == [
            hex("39 20 06 00 01 01 00 00 00   // disable set 1"),
            Self.parameters(set: 1, interval: "40 01 00", txPower: "7F"),
            hex("39 20 06 01 01 01 00 00 00   // enable set 1"),
        ])
        #expect(advertiser.live.parameters == [.run, BeaconParameters(intervalUnits: 320)])
        // Data and parameters together: one step, both while the set is disabled (a scenario's
        // update that gives it an address of its own: the new address never carries the old data).
        let middle = transport.sent.count
        try advertiser.live.update(1, to: Self.beacons[2], parameters: Self.slow)
        #expect(transport.sent.dropFirst(middle).map { $0[0] } == [0x39, 0x36, 0x37, 0x39])
        #expect(advertiser.running.map(\.beacon) == [Self.beacons[2], Self.beacons[1]])
        let last = transport.sent.count
        try advertiser.live.update(1, to: Self.beacons[0], parameters: BeaconParameters(address: .generatedNonResolvable))
        // disable, parameters (random own address), its address, the data, enable
        #expect(transport.sent.dropFirst(last).map { $0[0] } == [0x39, 0x36, 0x35, 0x37, 0x39])
        #expect(transport.sent.last?[3] == 0x01, "enabled last")
    }

    /// A restore (after a reset) puts each beacon back with its own parameters, as changed.
    @Test func aRestoreKeepsEachBeaconsOwnParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2)),
                                                                beaconParameters: [.run, Self.slow]))
        try advertiser.start(capabilities: capabilities(extended: true))
        try advertiser.live.update(1, to: Self.beacons[0], parameters: BeaconParameters(intervalUnits: 320))
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
        #expect(throws: HostError.self) { try advertiser.live.update(1, to: referenceBeacon, parameters: BeaconParameters(txPower: -20)) }
        #expect(transport.remainingSteps == 0)
        #expect(advertiser.live.parameters == [.run])
    }

    /// Beacons that take turns on one set share its parameters: a beacon of its own is refused
    /// before anything is sent, at start and when it would join the turns.
    @Test func turnsRefuseABeaconWithItsOwnParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Self.beacons, beaconParameters: [.run, .run, Self.slow]))
        #expect {
            try advertiser.start(capabilities: capabilities(extended: true, sets: 2))
        } throws: { "\($0)".contains("beacon 3's own interval 500 ms = 800 x 0.625 ms, TX power -8 dBm: the beacons would take turns") }
        #expect(transport.sent.isEmpty)

        let legacy = ScriptedTransport(answeringEverything: true)
        let single = Advertiser(controller: HCIController(transport: legacy),
                                options: AdvertisingOptions(beacons: [referenceBeacon], beaconParameters: [BeaconParameters(intervalUnits: 800)]))
        try single.start(capabilities: capabilities(extended: false))
        // Legacy advertising takes the one beacon's own interval.
        #expect(Array(legacy.sent[1].prefix(7)) == hex("06 20 0F 20 03 20 03"))
        let sent = legacy.sent.count
        #expect(throws: HostError.self) { try single.live.add(Self.beacons[1]) }
        #expect(single.running.map(\.beacon) == [referenceBeacon] && legacy.sent.count == sent)
        #expect {
            try single.live.update(1, to: referenceBeacon, parameters: BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("beacon 1's TX power 0 dBm: needs extended advertising") }
        #expect {
            try single.live.update(1, to: referenceBeacon, parameters: BeaconParameters(pdu: .extended))
        } throws: { "\($0)".contains("beacon 1's extended PDUs: needs extended advertising") }
        #expect(legacy.sent.count == sent)
    }

    /// A beacon of its own extended PDUs (`pdu=extended`) added to a run of legacy ones: its
    /// data over 31 bytes is checked against what extended PDUs hold (one rule, the set's), and
    /// its set's parameters carry no legacy bit; the same data with the run's PDUs is refused.
    @Test func anExtendedBeaconJoinsALegacyRun() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start(capabilities: capabilities(extended: true))
        let long = Beacon.custom(CustomAdvertisement(data: try AdvertisingData(parsing: [0x02, 0x01, 0x06, 0x26, 0xFF, 0x59, 0x00]
                                                                                + [UInt8](repeating: 0xAB, count: 35))))
        #expect(throws: HostError.self) { _ = try advertiser.live.add(long, parameters: .run) }
        let sent = transport.sent.count
        _ = try advertiser.live.add(long, parameters: BeaconParameters(pdu: .extended))
        let parameters = try #require(transport.sent[sent...].first { $0.prefix(2) == [0x36, 0x20] })
        #expect(parameters[4] & 0x10 == 0, "extended PDUs: no legacy bit in the event properties: \(HexText.format(parameters))")
        #expect(advertiser.running.map(\.beacon).count == 2)
    }

    /// A beacon's own address: its set's parameters say random, then that set's random address;
    /// a made-up one is kept through a restore and new parameters, and renewed in place (after a
    /// Command Disallowed, around a disable from then on).
    @Test func aBeaconsOwnAddressIsItsSetsAndRenewedOnIt() throws {
        let given = try BluetoothAddress(parsing: "C0:11:22:33:44:55")
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Self.beacons,
                                                                beaconParameters: [.run, BeaconParameters(address: .random(given)),
                                                                                   BeaconParameters(address: .generatedStaticRandom)]))
        try advertiser.start(capabilities: capabilities(extended: true))
        func addresses() -> [[UInt8]] { transport.sent.filter { $0.prefix(2) == [0x35, 0x20] } }
        let parameters = transport.sent.filter { $0.prefix(2) == [0x36, 0x20] }
        #expect(parameters.map { $0[13] } == [0x00, 0x01, 0x01], "own address type: public, random, random")
        let made = try #require(addresses().last)
        #expect(addresses().count == 2 && addresses()[0] == hex("35 20 07 01 55 44 33 22 11 C0"))
        #expect(made[3] == 2 && BluetoothAddress(littleEndian: made.dropFirst(4)).isStaticRandom)
        try advertiser.restore(controllerWasReset: true)
        try advertiser.live.update(3, to: Self.beacons[2], parameters: BeaconParameters(intervalUnits: 320, address: .generatedStaticRandom))
        #expect(addresses().suffix(2) == [made, made], "kept through a restore and new parameters")
        let sent = transport.sent.count
        let renewed = try advertiser.live.renewAddress(3)
        #expect(Array(transport.sent.dropFirst(sent)) == [hex("35 20 07 02") + renewed.littleEndianBytes], "in place")
        #expect(renewed.isStaticRandom && renewed != BluetoothAddress(littleEndian: made.dropFirst(4)))
        #expect(throws: HostError.self) { try advertiser.live.renewAddress(2) }  // a given address is not renewed
    }

    /// A controller that takes a set's address only while the set is disabled: the renewal is
    /// made around a disable, from then on at once.
    @Test func aRenewalTheControllerRefusesInPlaceGoesAroundADisable() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon],
                                                                beaconParameters: [BeaconParameters(address: .generatedNonResolvable)]))
        try advertiser.start(capabilities: capabilities(extended: true))
        transport.refuse(opcode: 0x2035, status: 0x0C, times: 1)
        let sent = transport.sent.count
        try advertiser.live.renewAddress(1)
        try advertiser.live.renewAddress(1)
        #expect(transport.sent.dropFirst(sent).map { $0[0] } == [0x35, 0x39, 0x35, 0x39, 0x39, 0x35, 0x39])
    }

    /// One beacon from a made-up (non-resolvable) address of its own, advertising on extended
    /// sets over an answering controller.
    static func madeUpAddressAdvertising() throws -> (Advertiser, ScriptedTransport) {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [beacons[0]],
                                                                beaconParameters: [BeaconParameters(address: .generatedNonResolvable)]))
        try advertiser.start(capabilities: capabilities(extended: true))
        return (advertiser, transport)
    }

    /// A beacon's new identity (new content with a new address, an EID's next identifier) goes
    /// on its set in one step: disabled, the address, the data, enabled again, so that no PDU
    /// pairs the old address with the new data or the reverse. Data refused after the address
    /// went in leaves the set disabled (off the air, not out from the new address with the old
    /// data) and the books as they were; the next step enables it again.
    @Test func aNewIdentityGoesOnItsDisabledSetAndStaysOffWhenHalfOfItIsRefused() throws {
        let (advertiser, transport) = try Self.madeUpAddressAdvertising()
        var sent = transport.sent.count
        let address = try advertiser.live.renewAddress(1, with: Self.beacons[1])
        var commands = Array(transport.sent.dropFirst(sent))
        // 0x2039 LE Set Extended Advertising Enable (off, on), 0x2035 its random address, 0x2037 its data
        #expect(commands.map { $0[0] } == [0x39, 0x35, 0x37, 0x39], "\(commands.map { HexText.format($0) })")
        #expect(commands.first?[3] == 0x00 && commands.last?[3] == 0x01, "disabled first, enabled last")
        #expect(commands[1] == hex("35 20 07 00") + address.littleEndianBytes, "set 0's random address")
        #expect(Array(commands[2].suffix(Self.beacons[1].advertisingData.bytes.count)) == Self.beacons[1].advertisingData.bytes)
        #expect(advertiser.running[0].ownAddress == address && advertiser.running.map(\.beacon) == [Self.beacons[1]])

        transport.refuse(opcode: 0x2037, status: 0x12, times: 1)
        sent = transport.sent.count
        #expect(throws: HostError.self) { try advertiser.live.renewAddress(1, with: Self.beacons[2]) }
        commands = Array(transport.sent.dropFirst(sent))
        #expect(commands.map { $0[0] } == [0x39, 0x35, 0x37], "left disabled: \(commands.map { HexText.format($0) })")
        #expect(advertiser.running.map(\.beacon) == [Self.beacons[1]] && advertiser.running[0].ownAddress == address, "the books as they were")

        sent = transport.sent.count
        let next = try advertiser.live.renewAddress(1, with: Self.beacons[2])
        commands = Array(transport.sent.dropFirst(sent))
        #expect(commands.map { $0[0] } == [0x39, 0x35, 0x37, 0x39] && commands.last?[3] == 0x01, "enabled again by the next step")
        #expect(next != address && advertiser.running.map(\.beacon) == [Self.beacons[2]])
    }

    /// A refused address is undone by enabling the set again: the old identity goes on whole.
    @Test func aNewIdentityWhoseAddressIsRefusedLeavesTheOldOneOnTheAir() throws {
        let (advertiser, transport) = try Self.madeUpAddressAdvertising()
        let before = advertiser.running[0].ownAddress
        transport.refuse(opcode: 0x2035, status: 0x12, times: 1)
        let sent = transport.sent.count
        #expect(throws: HostError.self) { try advertiser.live.renewAddress(1, with: Self.beacons[1]) }
        let commands = Array(transport.sent.dropFirst(sent))
        #expect(commands.map { $0[0] } == [0x39, 0x35, 0x39] && commands.last?[3] == 0x01, "\(commands.map { HexText.format($0) })")
        #expect(advertiser.running.map(\.beacon) == [Self.beacons[0]] && advertiser.running[0].ownAddress == before)
    }

    /// Through the kernel, which picks the address itself: a beacon's own address is refused
    /// before anything is added.
    @Test func throughTheKernelAnOwnAddressIsRefused() {
        let kernel = ScriptedKernel([featuresStep(maximum: 2)])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon],
                                                                       beaconParameters: [BeaconParameters(address: .generatedStaticRandom)]))
        #expect { try advertiser.start() } throws: { "\($0)".contains("beacon 1's address static: through the management API the kernel chooses the address") }
        #expect(kernel.remainingSteps == 0)
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
        try advertiser.live.update(2, to: Self.beacons[1], parameters: BeaconParameters(intervalUnits: 320))
        #expect(kernel.remainingSteps == 0)
        #expect(advertiser.live.parameters == [.run, BeaconParameters(intervalUnits: 320)])
    }
}
