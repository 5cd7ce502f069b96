// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A set per beacon, added and removed one at a time, and changed in place (a scenario's stage
/// on the advertising core, `EmitterRun(stage:)` over `Advertiser`): the whole conversation with the
/// controller, command by command.
@Suite struct ComeAndGoTests {
    static let numberOfSets = ScriptedTransport.Step(command: hex("3B 20 00 // LE Read Number of Supported Advertising Sets"),
                                                     answers: [complete(0x203B, returning: [0x02])])
    static let preparing = [EmitterStartTests.reset, EmitterStartTests.readCommands(extended: true),
                            EmitterStartTests.readFeatures, numberOfSets]
    /// The reference beacon with minor 3 instead of 2.
    static let minor3 = Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                               major: 101, minor: 3))
    static let minor3Data = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650003C5")

    /// The core with no beacons yet, started on `transport` (a controller of our own, reset, when
    /// `resetting`; else beside the kernel), and its beacons named by their sets.
    static func core(_ transport: some PacketTransport<H4Packet>, resetting: Bool = true) throws -> (Advertiser, EmitterRun) {
        // As a scenario's launch starts it: `advertise`'s start, with no beacons.
        let advertiser = try Emitter(controller: HCIController(transport: transport), ownsController: resetting) { _ in }
            .start(options: AdvertisingOptions(beacons: [], intervalUnits: 160))
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: resetting, reconnect: nil)
        return (advertiser, EmitterRun(stage: session, device: "test"))
    }

    /// - Parameter sid: the set's advertising SID (the beacon's place among ours).
    static func adding(set: UInt8, data: [UInt8], sid: UInt8? = nil) -> [ScriptedTransport.Step] {
        [
            .init(command: hex("36 20 19") + [set] + hex("""
                10 00                                      // legacy PDU, non-connectable
                A0 00 00 A0 00 00 07                       // interval 100 ms, channels 37 38 39
                00 00 00 00 00 00 00 00 00                 // public own address; no peer; no filter
                7F 01 00 01                                // no TX power preference, 1M
                """) + [sid ?? set & 0x0F] + hex("00        // SID"),
                  answers: [complete(0x2036, returning: [0x05])]),
            .init(command: hex("37 20 22") + [set] + hex("03 01 1E") + data, answers: [complete(0x2037)]),
            .init(command: hex("39 20 06 01 01") + [set] + hex("00 00 00 // enable this set only"), answers: [complete(0x2039)]),
        ]
    }

    static func removing(set: UInt8) -> [ScriptedTransport.Step] {
        [
            .init(command: hex("39 20 06 00 01") + [set] + hex("00 00 00 // disable this set only"), answers: [complete(0x2039)]),
            .init(command: hex("3C 20 01") + [set], answers: [complete(0x203C)]),
        ]
    }

    /// A beacon's own interval and TX power go in its set's parameters (the run's interval for
    /// the others); new ones are set with the set disabled for them, its data kept.
    @Test func eachSetCarriesItsBeaconsOwnParameters() throws {
        var own = Self.adding(set: 1, data: Self.minor3Data)
        // 500 ms = 800 = 0x000320 units; TX power -8 dBm = 0xF8.
        own[0] = .init(command: hex("36 20 19 01 10 00 20 03 00 20 03 00 07 00 00 00 00 00 00 00 00 00 F8 01 00 01 01 00"),
                       answers: [complete(0x2036, returning: [0xF8])])
        let changing: [ScriptedTransport.Step] = [
            .init(command: hex("39 20 06 00 01 01 00 00 00 // disable set 1 for its new parameters"), answers: [complete(0x2039)]),
            // 200 ms = 320 = 0x000140 units; no TX power preference now.
            .init(command: hex("36 20 19 01 10 00 40 01 00 40 01 00 07 00 00 00 00 00 00 00 00 00 7F 01 00 01 01 00"),
                  answers: [complete(0x2036, returning: [0x05])]),
            .init(command: hex("39 20 06 01 01 01 00 00 00 // and enabled again"), answers: [complete(0x2039)]),
        ]
        let transport = ScriptedTransport(Self.preparing + Self.adding(set: 0, data: referenceData) + own + changing)
        let (advertiser, run) = try Self.core(transport)
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 1)
        #expect(try run.live.add(Self.minor3, parameters: BeaconParameters(intervalUnits: 800, txPower: -8)) == 2)
        try run.live.setParameters(2, to: BeaconParameters(intervalUnits: 320))
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
        #expect(advertiser.live.parameters[1] == BeaconParameters(intervalUnits: 320))
        #expect(advertiser.running.map(\.beacon)[1] == Self.minor3)
    }

    /// A beacon's own random address: its set's parameters say random, and the address is set
    /// on that set alone before it is enabled; `static` is made up once and kept when the
    /// parameters change.
    @Test func aSetAdvertisesFromItsBeaconsOwnAddress() throws {
        var own = Self.adding(set: 1, data: Self.minor3Data)
        own[0] = .init(command: hex("36 20 19 01 10 00 A0 00 00 A0 00 00 07 01 00 00 00 00 00 00 00 00 7F 01 00 01 01 00"),
                       answers: [complete(0x2036, returning: [0x05])])
        own.insert(.init(command: hex("35 20 07 01 55 44 33 22 11 C0 // set 1's random address"), answers: [complete(0x2035)]),
                   at: 1)
        let transport = ScriptedTransport(Self.preparing + Self.adding(set: 0, data: referenceData) + own)
        let (_, run) = try Self.core(transport)
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 1)
        let given = try BluetoothAddress(parsing: "C0:11:22:33:44:55")
        #expect(try run.live.add(Self.minor3, parameters: BeaconParameters(address: .random(given))) == 2)
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
    }

    @Test func aStaticAddressIsMadeOnceAndKept() throws {
        // Legacy advertising (the one random address of the controller), then every command answered.
        let preparing = ScriptedTransport([EmitterStartTests.reset, EmitterStartTests.readCommands(extended: false)])
        let (advertiser, run) = try Self.core(preparing)
        #expect(advertiser.plan?.mode == .legacy)
        let transport = ScriptedTransport(answeringEverything: true)
        try advertiser.restore(on: HCIController(transport: transport), controllerWasReset: true)
        let handle = try run.live.add(referenceBeacon, parameters: BeaconParameters(address: .generatedStaticRandom))
        guard let made = advertiser.running.map(\.ownAddress).first ?? nil else {
            Issue.record("no address made: \(advertiser.running.map(\.ownAddress))")
            return
        }
        #expect(made.value >> 46 == 0b11, "a static random address: \(made)")
        try run.live.setParameters(handle, to: BeaconParameters(intervalUnits: 320, address: .generatedStaticRandom))
        #expect(advertiser.live.parameters == [BeaconParameters(intervalUnits: 320, address: .generatedStaticRandom)])
        #expect(advertiser.running.map(\.ownAddress) == [made])
        let sent = transport.sent.map { HexText.format($0) }
        let setAddress = "052006" + HexText.format(made.littleEndianBytes)
        #expect(sent.filter { $0 == setAddress }.count == 2, "set at the add and again with the new parameters: \(sent)")
        // Legacy advertising's parameters say random (own address type 0x01) both times.
        #expect(sent.filter { $0.hasPrefix("06200F") && $0.dropFirst(6 + 2 * 5).hasPrefix("01") }.count == 2, "\(sent)")
    }

    /// A controller that answers every command with success, but refuses a set's random
    /// address once when armed (Command Disallowed, as controllers before Core 5.3 may while
    /// the set is enabled).
    final class AddressRefusingTransport: PacketTransport {
        let name = "refusing"
        private(set) var opcodes: [UInt16] = []
        var refuseNextAddress = false
        private var queued: [[UInt8]] = []

        func send(_ packet: H4Packet) throws(TransportError) {
            let opcode = UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8
            opcodes.append(opcode)
            let refuse = opcode == 0x2035 && refuseNextAddress
            if refuse { refuseNextAddress = false }
            queued.append(complete(opcode, status: refuse ? 0x0C : 0x00, returning: opcode == 0x2036 ? [0x05] : []))
        }

        func receive(timeout: Duration) throws(TransportError) -> ReceiveResult {
            queued.isEmpty ? .timedOut : .packet(H4Packet(type: .event, body: queued.removeFirst()))
        }

        func close() {}
    }

    /// A renewed address goes on the running set in place; where the controller refuses that,
    /// the set is disabled around it, that time and every time after.
    @Test func aRenewedAddressGoesOnTheRunningSetOrAroundADisable() throws {
        let (advertiser, run) = try Self.core(ScriptedTransport(Self.preparing))
        let transport = AddressRefusingTransport()
        try advertiser.restore(on: HCIController(transport: transport), controllerWasReset: true)
        let handle = try run.live.add(referenceBeacon, parameters: BeaconParameters(address: .generatedNonResolvable))
        guard let first = advertiser.running.map(\.ownAddress).first ?? nil else {
            Issue.record("no address made")
            return
        }
        #expect(first.value >> 46 == 0, "non-resolvable: \(first)")
        var sent = transport.opcodes.count
        func since() -> [UInt16] {
            defer { sent = transport.opcodes.count }
            return Array(transport.opcodes[sent...])
        }
        let second = try run.live.renewAddress(handle)
        #expect(since() == [0x2035], "in place")
        transport.refuseNextAddress = true
        let third = try run.live.renewAddress(handle)
        #expect(since() == [0x2035, 0x2039, 0x2035, 0x2039], "refused, then around a disable")
        _ = try run.live.renewAddress(handle)
        #expect(since() == [0x2039, 0x2035, 0x2039], "around a disable from then on")
        #expect(Set([first, second, third]).count == 3)
        #expect(throws: HostError.self) { try run.live.renewAddress(0x7F) }
    }

    /// Legacy advertising: a beacon's own interval, in legacy advertising's range; no TX power.
    @Test func legacyAdvertisingTakesABeaconsIntervalButNoTxPower() throws {
        let transport = ScriptedTransport([EmitterStartTests.reset, EmitterStartTests.readCommands(extended: false),
            .init(command: hex("06 20 0F 20 03 20 03 03 00 00 00 00 00 00 00 00 07 00 // 500 ms, non-connectable"),
                  answers: [complete(0x2006)]),
            .init(command: hex("08 20 20 1E") + referenceData + [0x00], answers: [complete(0x2008)]),
            .init(command: hex("0A 20 01 01 // enable"), answers: [complete(0x200A)])])
        let (_, run) = try Self.core(transport)
        #expect(throws: HostError.self) { try run.live.add(referenceBeacon, parameters: BeaconParameters(txPower: 0)) }
        #expect(throws: HostError.self) {
            try run.live.add(referenceBeacon, parameters: BeaconParameters(intervalUnits: 0x4001))
        }
        #expect(transport.sent.count == 2, "nothing sent for what the controller cannot take")
        _ = try run.live.add(referenceBeacon, parameters: BeaconParameters(intervalUnits: 800))
        #expect(transport.remainingSteps == 0,
                "the parameters command carried 500 ms: \(transport.sent.map { HexText.format($0, separator: " ") })")
    }

    /// Sets come and go one at a time and change in place; a beacon beyond the sets takes turns
    /// on the last one, and gets the set that falls free (one rule with `advertise`'s).
    @Test func setsComeAndGoOneAtATimeAndChangeInPlace() throws {
        let data = { (set: UInt8, bytes: [UInt8]) in
            ScriptedTransport.Step(command: hex("37 20 22") + [set] + hex("03 01 1E") + bytes, answers: [complete(0x2037)])
        }
        let transport = ScriptedTransport(Self.preparing + Self.adding(set: 0, data: referenceData)
            + Self.adding(set: 1, data: Self.minor3Data)
            // The update: new data on the running set, nothing else (no disable, no enable).
            + [data(0, Self.minor3Data)]
            // Set 0 falls free: minor 3 (first in the turns, on turn) moves to it, and the
            // reference beacon (next in the turns) goes on set 1.
            + [data(0, Self.minor3Data), data(1, referenceData)]
            + Self.removing(set: 1) + Self.removing(set: 0))
        let (advertiser, run) = try Self.core(transport)
        #expect(advertiser.plan?.mode == .extended && run.live.hasFreeSet)
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 1)
        #expect(try run.live.add(Self.minor3, parameters: .run) == 2)
        #expect(!run.live.hasFreeSet)
        let sent = transport.sent.count
        // Every set in use: it takes turns on set 1 with minor 3, nothing sent until its turn.
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 3)
        #expect(transport.sent.count == sent)
        #expect(run.live.takingTurns == [2, 3])
        try run.live.update(1, to: Self.minor3)
        try run.live.remove(1)
        #expect(run.live.takingTurns.isEmpty && !run.live.hasFreeSet)
        try run.live.removeAll()
        #expect(advertiser.running.map(\.beacon).isEmpty)
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
    }

    /// A set that falls free and carries a new beacon keeps its own advertising SID (not the
    /// new beacon's place, which another set's beacon may have had).
    @Test func eachSetKeepsItsOwnSIDWhileBeaconsComeAndGo() throws {
        let transport = ScriptedTransport(Self.preparing + Self.adding(set: 0, data: referenceData)
            + Self.adding(set: 1, data: Self.minor3Data) + Self.removing(set: 0)
            + Self.adding(set: 0, data: referenceData, sid: 0))
        let (_, run) = try Self.core(transport)
        _ = try run.live.add(referenceBeacon, parameters: .run)
        _ = try run.live.add(Self.minor3, parameters: .run)
        try run.live.remove(1)
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 3, "ids are not reused")
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
    }

    @Test func aRefusedStepLeavesNoSetBehind() throws {
        let parameters = Self.adding(set: 0, data: referenceData)[0]
        let transport = ScriptedTransport(Self.preparing + [parameters,
            .init(command: hex("37 20 22 00 03 01 1E") + referenceData, answers: [complete(0x2037, status: 0x12)])]
            + Self.removing(set: 0))
        let (advertiser, run) = try Self.core(transport)
        #expect(throws: HostError.self) { try run.live.add(referenceBeacon, parameters: .run) }
        #expect(advertiser.running.map(\.beacon).isEmpty && advertiser.leftovers.isEmpty)
        #expect(transport.remainingSteps == 0)
    }

    /// Beside the kernel, sets are numbered down from 0xEF (the kernel numbers its own up from 0).
    @Test func besideTheKernelSetsCountDown() throws {
        let transport = ScriptedTransport([EmitterStartTests.readCommands(extended: true), EmitterStartTests.readFeatures,
                                           Self.numberOfSets] + Self.adding(set: 0xEF, data: referenceData, sid: 0))
        let (_, run) = try Self.core(transport, resetting: false)
        #expect(try run.live.add(referenceBeacon, parameters: .run) == 1)
        #expect(transport.remainingSteps == 0)
    }

    @Test func legacyAdvertisingTakesTurnsOnItsOneSetAndChangesDataInPlace() throws {
        let transport = ScriptedTransport([EmitterStartTests.reset, EmitterStartTests.readCommands(extended: false)]
            + legacySteps[1...]
            + [.init(command: hex("08 20 20 1E") + Self.minor3Data + [0x00], answers: [complete(0x2008)]), legacyStop])
        let (advertiser, run) = try Self.core(transport)
        #expect(advertiser.plan?.mode == .legacy)
        _ = try run.live.add(referenceBeacon, parameters: .run)
        #expect(!run.live.hasFreeSet)
        // Legacy advertising's one set: a second beacon takes turns on it, nothing sent until its turn.
        let sent = transport.sent.count
        #expect(try run.live.add(Self.minor3, parameters: .run) == 2)
        #expect(transport.sent.count == sent && run.live.takingTurns == [1, 2])
        try run.live.update(1, to: Self.minor3)
        try run.live.removeAll()
        #expect(transport.remainingSteps == 0)
    }
}

/// A scenario's sets kept on the air as `advertise` keeps its beacons (`EmitterRun(stage:)`): the
/// session and the supervisor are the same, the sets go back as the books have them.
@Suite struct SupervisedSetsTests {
    /// A Hardware Error answers an update: the update stays in the books, the sets are off the
    /// air; a remove while they are off sends nothing; the restore resets the controller it
    /// owns and puts back what the books hold (set 0 with the new data, not the removed set 1).
    @Test func aDisruptionCostsOneGapAndTheBooksGoBack() throws {
        let hardwareError = hex("10 01 2A  // Hardware Error 0x2A")
        var steps: [ScriptedTransport.Step] = ComeAndGoTests.preparing
        steps += ComeAndGoTests.adding(set: 0, data: referenceData)
        steps += ComeAndGoTests.adding(set: 1, data: ComeAndGoTests.minor3Data)
        let update: [UInt8] = hex("37 20 22 00 03 01 1E") + ComeAndGoTests.minor3Data
        steps.append(ScriptedTransport.Step(command: update, answers: [hardwareError]))
        steps.append(EmitterStartTests.reset)
        steps += ComeAndGoTests.adding(set: 0, data: ComeAndGoTests.minor3Data)
        steps += ComeAndGoTests.removing(set: 0)
        let transport = ScriptedTransport(steps)
        let (advertiser, run) = try ComeAndGoTests.core(transport)
        let first = try run.live.add(referenceBeacon, parameters: .run)
        let second = try run.live.add(ComeAndGoTests.minor3, parameters: .run)
        #expect(first == 1 && second == 2)
        try run.live.update(1, to: ComeAndGoTests.minor3)
        #expect(run.isOffAir)
        #expect(advertiser.running.map(\.beacon) == [ComeAndGoTests.minor3, ComeAndGoTests.minor3])
        let sent = transport.sent.count
        try run.live.remove(2)
        #expect(transport.sent.count == sent, "a change off the air goes into the books only")
        Thread.sleep(forTimeInterval: 0.15)  // Emitter.settleTime
        try run.turn()
        #expect(!run.isOffAir)
        let events = run.takeEvents()
        guard events.count == 2, case let .offAir(cause) = events[0], case let .restored(again, _, _) = events[1] else {
            Issue.record("events \(events)")
            return
        }
        #expect(cause == .hardwareError(code: 0x2A) && again == cause)
        try run.live.removeAll()
        #expect(transport.remainingSteps == 0)
    }
}
