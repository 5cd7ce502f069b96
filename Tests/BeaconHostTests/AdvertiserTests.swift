// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

let referenceData = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
let referenceBeacon = Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                             major: 101, minor: 2))

func capabilities(extended: Bool, sets: Int = 16) -> AdvertisingCapabilities {
    AdvertisingCapabilities(supportsExtendedAdvertising: extended, numberOfAdvertisingSets: extended ? sets : nil)
}

/// The legacy flow, command by command, with btmon-style notes.
let legacySteps: [ScriptedTransport.Step] = [
    .init(command: hex("0A 20 01 00              // LE Set Advertising Enable: disabled"), answers: [complete(0x200A)]),
    .init(command: hex("""
        06 20 0F                                   // LE Set Advertising Parameters
        A0 00 A0 00                                // interval 100 ms
        03                                         // ADV_NONCONN_IND
        00 00 00 00 00 00 00 00                    // public own address; no peer
        07 00                                      // channels 37 38 39, no filter
        """), answers: [complete(0x2006)]),
    .init(command: hex("08 20 20 1E") + referenceData + [0x00], answers: [complete(0x2008)]),
    .init(command: hex("0A 20 01 01              // LE Set Advertising Enable: enabled"), answers: [complete(0x200A)]),
]
let legacyStop = ScriptedTransport.Step(command: hex("0A 20 01 00"), answers: [complete(0x200A)])

let extendedSteps: [ScriptedTransport.Step] = [
    .init(command: hex("39 20 06 00 01 00 00 00 00 // LE Set Extended Advertising Enable: disable set 0 (ours; never all)"),
          answers: [complete(0x2039)]),
    .init(command: hex("""
        36 20 19 00                                // LE Set Extended Advertising Parameters, set 0
        10 00                                      // legacy PDU, non-connectable
        A0 00 00 A0 00 00 07                       // interval 100 ms, channels 37 38 39
        00 00 00 00 00 00 00 00 00                 // public own address; no peer; no filter
        7F 01 00 01 00 00                          // no TX power preference, 1M, SID 0
        """), answers: [complete(0x2036, returning: [0x05])]),
    .init(command: hex("37 20 22 00 03 01 1E") + referenceData, answers: [complete(0x2037)]),
    .init(command: hex("39 20 06 01 01 00 00 00 00 // enable set 0"), answers: [complete(0x2039)]),
]
let extendedStop: [ScriptedTransport.Step] = [
    .init(command: hex("39 20 06 00 01 00 00 00 00 // disable set 0"), answers: [complete(0x2039)]),
    .init(command: hex("3C 20 01 00               // remove set 0"), answers: [complete(0x203C)]),
]

@Suite struct AdvertiserTests {
    @Test func legacyFlowInOrder() throws {
        let transport = ScriptedTransport(legacySteps + [legacyStop])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        let plan = try advertiser.start(capabilities: capabilities(extended: false))
        #expect(plan.mode == .legacy)
        #expect(!plan.rotating)
        try advertiser.stop()
        #expect(transport.remainingSteps == 0)
    }

    @Test func extendedFlowInOrderWhenSupported() throws {
        let transport = ScriptedTransport(extendedSteps + extendedStop)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        let plan = try advertiser.start(capabilities: capabilities(extended: true))
        #expect(plan.mode == .extended)
        #expect(plan.handles == [0])
        try advertiser.stop()
        #expect(transport.remainingSteps == 0)
    }

    @Test func legacyOptionOverridesExtendedSupport() throws {
        let transport = ScriptedTransport(legacySteps)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy))
        #expect(try advertiser.start(capabilities: capabilities(extended: true)).mode == .legacy)
    }

    @Test func extendedOptionOnALegacyControllerIsRefusedBeforeSendingAnything() {
        let transport = ScriptedTransport([])
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], mode: .extended))
        #expect(throws: HostError.self) { try advertiser.start(capabilities: capabilities(extended: false)) }
        #expect(transport.sent.isEmpty)
    }

    /// `--phy coded`: extended PDUs (properties 0x0000, the data not a legacy PDU's) with the
    /// primary and secondary PHY fields both LE Coded (0x03), from the Core spec's layout.
    @Test func codedPHYSendsExtendedPDUsOnTheCodedPHY() throws {
        var steps = extendedSteps
        steps[1] = .init(command: hex("""
            36 20 19 00                                // LE Set Extended Advertising Parameters, set 0
            00 00                                      // extended PDU, non-connectable, non-scannable
            A0 00 00 A0 00 00 07                       // interval 100 ms, channels 37 38 39
            00 00 00 00 00 00 00 00 00                 // public own address; no peer; no filter
            7F 03 00 03 00 00                          // no TX power preference, primary Coded, secondary Coded, SID 0
            """), answers: [complete(0x2036, returning: [0x05])])
        let transport = ScriptedTransport(steps + extendedStop)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], phy: .coded))
        var coded = capabilities(extended: true)
        coded.supportsCodedPHY = true
        #expect(try advertiser.start(capabilities: coded).mode == .extended)
        try advertiser.stop()
        #expect(transport.remainingSteps == 0)
    }

    /// Without the Coded PHY among the LE features, or with legacy advertising, `--phy coded`
    /// is refused before anything is sent, saying why.
    @Test func codedPHYIsRefusedWhereTheControllerLacksIt() {
        for (mode, extended, expected) in [(AdvertisingOptions.Mode.automatic, true, "does not have the LE Coded PHY"),
                                           (.automatic, false, "this controller lacks"),
                                           (.legacy, true, "which legacy commands (asked for) do not have")] {
            let transport = ScriptedTransport([])
            let advertiser = Advertiser(controller: HCIController(transport: transport),
                                        options: AdvertisingOptions(beacons: [referenceBeacon], mode: mode, phy: .coded))
            do {
                try advertiser.start(capabilities: capabilities(extended: extended))
                Issue.record("not refused: \(mode) \(extended)")
            } catch {
                #expect(error.description.contains(expected), "\(error)")
            }
            #expect(transport.sent.isEmpty)
        }
    }

    @Test func txPowerNeedsExtended() {
        let advertiser = Advertiser(controller: HCIController(transport: ScriptedTransport([])),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], txPower: -4, mode: .legacy))
        #expect(throws: HostError.self) { try advertiser.start(capabilities: capabilities(extended: true)) }
    }

    /// Each step of the legacy flow refused in turn: the error names that step's command,
    /// and advertising is disabled again before the error reaches the caller.
    @Test(arguments: 0..<4)
    func legacyStepRefusedLeavesAdvertisingOff(failing index: Int) throws {
        var steps = Array(legacySteps[..<index])
        let failing = legacySteps[index]
        let opcode = UInt16(failing.command![0]) | UInt16(failing.command![1]) << 8
        steps.append(.init(command: failing.command, answers: [complete(opcode, status: 0x12)]))
        steps.append(legacyStop)
        let transport = ScriptedTransport(steps)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        do {
            try advertiser.start(capabilities: capabilities(extended: false))
            Issue.record("no error")
        } catch let HostError.controllerRefused(refused, status, _) {
            #expect(refused.rawValue == opcode)
            #expect(status == .invalidCommandParameters)
        } catch {
            Issue.record("wrong error \(error)")
        }
        #expect(transport.sent.last == hex("0A 20 01 00"))
        #expect(transport.remainingSteps == 0)
    }

    @Test func aSetThatDoesNotExistYetIsNoReasonToStop() throws {
        // The first disable covers a set left on by an earlier --keep; usually there is none.
        var steps = extendedSteps
        steps[0] = .init(command: steps[0].command, answers: [complete(0x2039, status: 0x42)])
        let transport = ScriptedTransport(steps)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        #expect(try advertiser.start(capabilities: capabilities(extended: true)).handles == [0])
        #expect(transport.remainingSteps == 0)
    }

    @Test(arguments: 1..<4)
    func extendedStepRefusedLeavesAdvertisingOff(failing index: Int) throws {
        var steps = Array(extendedSteps[..<index])
        let failing = extendedSteps[index]
        let opcode = UInt16(failing.command![0]) | UInt16(failing.command![1]) << 8
        steps.append(.init(command: failing.command, answers: [complete(opcode, status: 0x0C)]))
        steps += extendedStop
        let transport = ScriptedTransport(steps)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon]))
        #expect(throws: HostError.self) { try advertiser.start(capabilities: capabilities(extended: true)) }
        #expect(transport.sent.suffix(2) == [hex("39 20 06 00 01 00 00 00 00"), hex("3C 20 01 00")])
    }

    @Test func staticRandomAddressIsSetBeforeParameters() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [referenceBeacon], address: .generatedStaticRandom))
        // The address is random, so check the commands' shape rather than a script.
        try advertiser.start(capabilities: capabilities(extended: false))
        #expect(transport.sent.count >= 3)
        #expect(transport.sent[1].prefix(3) == [0x05, 0x20, 0x06])
        #expect(transport.sent[2][8] == 0x01, "own address type random in the parameters")
        let address = BluetoothAddress(littleEndian: transport.sent[1].dropFirst(3))
        #expect(address.isStaticRandom)
    }

    @Test func threeBeaconsGetThreeSets() throws {
        let beacons = (1...3).map { Beacon.iBeacon(IBeacon(proximityUUID: UUID(), major: 1, minor: UInt16($0))) }
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport), options: AdvertisingOptions(beacons: beacons))
        try advertiser.start(capabilities: capabilities(extended: true, sets: 16))
        // disable all; then per set: parameters, data; then one enable of sets 0, 1, 2.
        #expect(transport.sent.map { $0[0] } == [0x39, 0x36, 0x37, 0x36, 0x37, 0x36, 0x37, 0x39])
        #expect(transport.sent.last == hex("39 20 0E 01 03  00 0000 00  01 0000 00  02 0000 00"))
    }

    /// More beacons than sets: a set each while there are sets, the beacons beyond take turns
    /// on the last one (one rule with a scenario's).
    @Test func moreBeaconsThanSetsTakeTurnsOnTheLastSet() throws {
        let beacons = (1...4).map { Beacon.iBeacon(IBeacon(proximityUUID: UUID(), major: 1, minor: UInt16($0))) }
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport), options: AdvertisingOptions(beacons: beacons))
        try advertiser.start(capabilities: capabilities(extended: true, sets: 2))
        // disable; per set: parameters, data (beacon 1 on set 0, beacon 2 on set 1); one enable of both.
        #expect(transport.sent.map { $0[0] } == [0x39, 0x36, 0x37, 0x36, 0x37, 0x39])
        #expect(transport.sent[4] == [0x37, 0x20, 0x22, 0x01, 0x03, 0x01, 0x1E] + beacons[1].advertisingData.bytes)
        #expect(advertiser.plan?.rotating == true && advertiser.plan?.handles == [0, 1] && advertiser.plan?.firstTurn == 1)
        try advertiser.rotate()
        // The rotation puts beacon 3's data on set 1; set 0 keeps beacon 1.
        #expect(transport.sent.last == [0x37, 0x20, 0x22, 0x01, 0x03, 0x01, 0x1E] + beacons[2].advertisingData.bytes)
        try advertiser.rotate()
        #expect(transport.sent.last == [0x37, 0x20, 0x22, 0x01, 0x03, 0x01, 0x1E] + beacons[3].advertisingData.bytes)
        try advertiser.rotate()
        #expect(transport.sent.last == [0x37, 0x20, 0x22, 0x01, 0x03, 0x01, 0x1E] + beacons[1].advertisingData.bytes)
        #expect(!transport.sent.dropFirst(6).contains { $0[4] == 0x00 }, "nothing more for set 0")
    }
}

/// Emitter.start asks the controller only what the flow needs (the issue's "no round trip
/// beyond what the flow needs"): each script is the whole conversation, read commands included.
@Suite struct EmitterStartTests {
    static let reset = ScriptedTransport.Step(command: hex("03 0C 00"), answers: [complete(0x0C03)])
    /// Read Local Supported Commands answering a bitmap with (or without) extended advertising.
    static func readCommands(extended: Bool) -> ScriptedTransport.Step {
        var bitmap = [UInt8](repeating: 0, count: 64)
        if extended { bitmap[36] = 0x84 } // Set Extended Advertising Parameters; Read Number of Sets
        return .init(command: hex("02 10 00"), answers: [complete(0x1002, returning: bitmap)])
    }
    static let readFeatures = ScriptedTransport.Step(
        command: hex("03 20 00"), answers: [complete(0x2003, returning: [0x00, 0x10, 0, 0, 0, 0, 0, 0])]) // bit 12
    static let readAddress = ScriptedTransport.Step(
        command: hex("09 10 00"), answers: [complete(0x1009, returning: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])])

    /// Runs Emitter.start over `steps` and returns the reported plan and round trips.
    func start(_ steps: [ScriptedTransport.Step], owns: Bool, options: AdvertisingOptions) throws
        -> (plan: AdvertisingPlan?, roundTrips: Int?, transport: ScriptedTransport) {
        let transport = ScriptedTransport(steps)
        var reported: (AdvertisingPlan, Int)? = nil
        let emitter = Emitter(controller: HCIController(transport: transport), ownsController: owns) { event in
            if case let .advertising(plan, _, roundTrips, _) = event { reported = (plan, roundTrips) }
        }
        _ = try emitter.start(options: options)
        #expect(transport.remainingSteps == 0, "the whole script was used")
        return (reported?.0, reported?.1, transport)
    }

    @Test func ownedExtendedControllerOneBeacon() throws {
        // Reset, the two reads that choose the mode, parameters, data, enable; the address after.
        let steps = [Self.reset, Self.readCommands(extended: true), Self.readFeatures]
            + extendedSteps.dropFirst() + [Self.readAddress]
        let result = try start(steps, owns: true, options: AdvertisingOptions(beacons: [referenceBeacon]))
        #expect(result.plan?.mode == .extended)
        #expect(result.roundTrips == 6, "round trips counted up to the enable")
        #expect(result.plan?.address == BluetoothAddress(0x1122_3344_5566))
        #expect(result.plan?.addressIsRandom == false)
    }

    @Test func ownedControllerWithLegacyAsksNothing() throws {
        let steps = [Self.reset] + legacySteps.dropFirst() + [Self.readAddress]
        let result = try start(steps, owns: true, options: AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy))
        #expect(result.plan?.mode == .legacy)
        #expect(result.roundTrips == 4)
    }

    @Test func legacyOnlyCommandsSkipTheFeatureRead() throws {
        let steps = [Self.reset, Self.readCommands(extended: false)] + legacySteps.dropFirst() + [Self.readAddress]
        let result = try start(steps, owns: true, options: AdvertisingOptions(beacons: [referenceBeacon]))
        #expect(result.plan?.mode == .legacy)
        #expect(result.roundTrips == 5)
    }

    @Test func kernelAdapterGetsTheTopSetDisabledFirstAndIsNotReset() throws {
        // The kernel numbers its sets up from 0: beacon-emit takes 0xEF (the highest handle) down,
        // and disables only that set first, never "all".
        let kernelSteps: [ScriptedTransport.Step] = [
            .init(command: hex("39 20 06 00 01 EF 00 00 00 // disable set 0xEF (ours) if on"), answers: [complete(0x2039)]),
            .init(command: hex("""
                36 20 19 EF                                // LE Set Extended Advertising Parameters, set 0xEF
                10 00  A0 00 00 A0 00 00 07                // legacy PDU non-connectable, 100 ms, 37 38 39
                00 00 00 00 00 00 00 00 00  7F 01 00 01    // public, no peer, no filter, no TX preference, 1M
                00 00                                      // SID 0, no scan request notification
                """), answers: [complete(0x2036, returning: [0x05])]),
            .init(command: hex("37 20 22 EF 03 01 1E") + referenceData, answers: [complete(0x2037)]),
            .init(command: hex("39 20 06 01 01 EF 00 00 00 // enable set 0xEF"), answers: [complete(0x2039)]),
        ]
        let steps = [Self.readCommands(extended: true), Self.readFeatures] + kernelSteps + [Self.readAddress]
        let result = try start(steps, owns: false, options: AdvertisingOptions(beacons: [referenceBeacon]))
        #expect(result.roundTrips == 6)
        #expect(result.plan?.handles == [0xEF])
    }

    @Test func randomAddressNeedsNoAddressRead() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let emitter = Emitter(controller: HCIController(transport: transport), ownsController: true) { _ in }
        _ = try emitter.start(options: AdvertisingOptions(beacons: [referenceBeacon], address: .generatedStaticRandom,
                                                          mode: .legacy))
        // Reset, random address, parameters, data, enable: no Read BD_ADDR (0x1009) anywhere.
        #expect(transport.sent.map { UInt16($0[0]) | UInt16($0[1]) << 8 } == [0x0C03, 0x2005, 0x2006, 0x2008, 0x200A])
    }

    @Test func setsAreReadOnlyForSeveralBeacons() throws {
        let beacons = (1...3).map { Beacon.iBeacon(IBeacon(proximityUUID: UUID(), major: 1, minor: UInt16($0))) }
        let transport = ScriptedTransport(answeringEverything: true)
        let emitter = Emitter(controller: HCIController(transport: transport), ownsController: true) { _ in }
        _ = try? emitter.start(options: AdvertisingOptions(beacons: beacons))
        // The zeroed answers say "no extended advertising", so the flow stops at the commands.
        #expect(transport.sent.prefix(2).map { UInt16($0[0]) | UInt16($0[1]) << 8 } == [0x0C03, 0x1002])
        let capabilities = try AdvertisingCapabilities.read(
            from: HCIController(transport: ScriptedTransport([Self.readCommands(extended: true), Self.readFeatures,
                .init(command: hex("3B 20 00"), answers: [complete(0x203B, returning: [0x04])])])),
            for: AdvertisingOptions(beacons: beacons))
        #expect(capabilities == AdvertisingCapabilities(supportsExtendedAdvertising: true, numberOfAdvertisingSets: 4))
    }
}
