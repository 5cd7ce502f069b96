// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// A Core 5 controller with `sets` advertising sets that does what it is told: every command
/// answered with success (its reads as such a controller's), every one kept as sent.
final class SetsController: PacketTransport {
    let name = "sets"
    let sets: UInt8
    /// Each command sent: its opcode and parameters.
    private(set) var sent: [(opcode: UInt16, parameters: [UInt8])] = []
    private var answers: [[UInt8]] = []

    init(sets: UInt8) { self.sets = sets }

    func send(_ packet: H4Packet) throws(TransportError) {
        let opcode = UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8
        sent.append((opcode, Array(packet.body.dropFirst(3))))
        var returned: [UInt8] = []
        switch opcode {
        case 0x1002:
            // Supported commands: LE Set Extended Advertising Parameters, LE Read Number of Supported Advertising Sets.
            returned = [UInt8](repeating: 0, count: 64)
            returned[36] = 0x84
        case 0x2003: returned = [0x00, 0x10, 0, 0, 0, 0, 0, 0]  // LE features: extended advertising
        case 0x1009: returned = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]  // its public address
        case 0x203B: returned = [sets]
        case 0x2036: returned = [0x05]  // the TX power chosen
        default: break
        }
        answers.append([0x0E, UInt8(4 + returned.count), 0x01, packet.body[0], packet.body[1], 0x00] + returned)
    }

    func receive(timeout: Duration) throws(TransportError) -> Received<H4Packet> {
        answers.isEmpty ? .timedOut : .packet(H4Packet(type: .event, body: answers.removeFirst()))
    }

    func close() {}
    var pollDescriptor: Int32? { nil }

    /// The parameters of the commands with `opcode` for set `handle` (their first byte), in order.
    func sent(_ opcode: UInt16, set handle: UInt8) -> [[UInt8]] {
        sent.filter { $0.opcode == opcode && $0.parameters.first == handle }.map(\.parameters)
    }

    /// The advertising data last put on set `handle` (LE Set Extended Advertising Data, one fragment).
    func data(onSet handle: UInt8) -> [UInt8]? { sent(0x2037, set: handle).last.map { Array($0.dropFirst(4)) } }

    /// How many random addresses set `handle` was given (LE Set Advertising Set Random Address).
    func addresses(ofSet handle: UInt8) -> Int { sent(0x2035, set: handle).count }

    /// Set `handle`'s last parameters: its interval (0.625 ms units) and TX power asked for.
    func parameters(ofSet handle: UInt8) -> (interval: Int, txPower: Int8)? {
        sent(0x2036, set: handle).last.map { ($0[3...5].reversed().reduce(0) { $0 << 8 | Int($1) }, Int8(bitPattern: $0[19])) }
    }
}

/// A scenario's beacons by name on the advertising core, as `run` drives them: a stage over
/// the core `advertise` goes through and its run (`EmitterRun`), on a controller that answers:
/// a beacon's own parameters, its address renewed, TLM counters, EIDs, and the turns (the
/// core's rule, refused in the scenario's names), each seen in what was sent.
@Suite struct SetStageTests {
    func beacon(_ minor: UInt16) -> Beacon {
        .iBeacon(IBeacon(proximityUUID: UUID(uuidString: lobbyUUID)!, major: 1, minor: minor))
    }

    /// A stage as a scenario's launch makes one: the core started with no beacons on a
    /// controller of its own (reset) with `sets` sets, its run a stage's.
    func stage(sets: UInt8, intervalUnits: UInt32 = 160) throws -> (SetStage, SetsController) {
        let radio = SetsController(sets: sets)
        let advertiser = try Emitter(controller: HCIController(transport: radio), ownsController: true) { _ in }
            .start(options: AdvertisingOptions(beacons: [], intervalUnits: intervalUnits))
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil)
        return (SetStage(run: EmitterRun(stage: session, device: "test"), rotationPeriod: 1, intervalUnits: intervalUnits), radio)
    }

    /// A beacon's own parameters go with its set, change on it in place, and keep it out of
    /// turns (a shared set cannot keep them): refused by the core before anything is sent,
    /// naming, in the scenario's words, whichever beacon has them.
    @Test func aBeaconsOwnParametersStayOnItsOwnSet() throws {
        let (stage, radio) = try stage(sets: 2)
        try stage.advertise("b", beacon(2))
        try stage.advertise("a", beacon(1), parameters: BeaconParameters(intervalUnits: 800))
        #expect(radio.parameters(ofSet: 1)?.interval == 800)
        try stage.setParameters("a", BeaconParameters(intervalUnits: 320, txPower: -8))
        #expect(radio.parameters(ofSet: 1).map { $0.interval == 320 && $0.txPower == -8 } == true)
        #expect(radio.parameters(ofSet: 0)?.interval == 160, "b keeps the run's")
        let sent = radio.sent.count
        #expect {
            try stage.advertise("c", beacon(3), parameters: BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("'a''s own interval 200 ms = 320 x 0.625 ms, TX power -8 dBm: the beacons would take turns") }
        #expect {
            try stage.advertise("c", beacon(3))
        } throws: { "\($0)".contains("'a''s own interval 200 ms") }
        #expect(radio.sent.count == sent, "nothing sent for either")
        #expect(stage.onAir == ["b", "a"] && stage.run.live.beacons == [beacon(2), beacon(1)])
        // Back to the run's parameters, it may share its set: the core puts c in the turns.
        var notes: [String] = []
        stage.note = { notes.append($0) }
        try stage.setParameters("a", .run)
        try stage.advertise("c", beacon(3))
        #expect(stage.run.live.takingTurns == [2, 3])
        #expect(notes == ["more beacons than sets: a, c take turns on one set, 1000 ms each"])
        #expect(stage.onAir == ["b", "a", "c"])
        // Taking turns, neither may have parameters of its own.
        #expect {
            try stage.setParameters("c", BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("'c''s own TX power 0 dBm: the beacons would take turns") }
        #expect(stage.run.live.parameters == [.run, .run, .run], "the refused change undone")
        try stage.advertise("d", beacon(4))
        #expect(notes.last == "a, c, d take turns on one set, 1000 ms each")
        try stage.stop("c")
        #expect(notes.last == "a, d take turns on one set, 1000 ms each")
        try stage.stop("d")
        #expect(notes.count == 3, "a has its set to itself again: nothing more to say")
        try stage.setParameters("a", BeaconParameters(txPower: 0))
        #expect(radio.parameters(ofSet: 1)?.txPower == 0)
        try stage.stopAll()
        #expect(stage.run.live.running.isEmpty)
    }

    /// A beacon whose address rotates gets a new one every period on the stage's clock (due in
    /// `nextMotion`), on its running set; stopped, it gets no more.
    @Test func aRotatingAddressIsRenewedEachPeriod() throws {
        let (stage, radio) = try stage(sets: 2)
        var notes: [String] = []
        stage.note = { notes.append($0) }
        try stage.advertise("a", beacon(1), parameters: BeaconParameters(address: .generatedNonResolvable, addressRotation: 2))
        try stage.advertise("b", beacon(2))
        let first = radio.addresses(ofSet: 0)
        #expect(first == 1 && radio.addresses(ofSet: 1) == 0, "a goes out from its own address, b from the run's")
        #expect(stage.nextMotion == 2)
        for second in 1...5 { try stage.tick(now: Double(second)) }
        #expect(radio.addresses(ofSet: 0) == first + 2, "at 2 s and 4 s")
        #expect(notes.count == 2 && notes.allSatisfy { $0.hasPrefix("a: new address ") }, "\(notes)")
        #expect(stage.nextMotion == 6)
        try stage.stop("a")
        for second in 6...9 { try stage.tick(now: Double(second)) }
        #expect(radio.addresses(ofSet: 0) == first + 2)
        #expect(stage.nextMotion == nil)
    }

    /// A TLM beacon's counters move every 5 s of the stage's time: 5.0 s of uptime and 150
    /// PDUs (50 events at 100 ms, three PDUs each) per period, in place on its set.
    @Test func telemetryMovesOnTheStagesClock() throws {
        let (stage, radio) = try stage(sets: 2)
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 7, uptimeDeciseconds: 100)
        try stage.advertise("telemetry", .eddystone(.tlm(start)))
        #expect(stage.nextMotion == 5)
        func onAir(_ count: UInt32, _ uptime: UInt32) -> Bool {
            let frame = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: count, uptimeDeciseconds: uptime)
            return radio.data(onSet: 0) == Beacon.eddystone(.tlm(frame)).advertisingData.bytes
        }
        try stage.tick(now: 4.9)
        #expect(onAir(7, 100))
        try stage.tick(now: 5)
        #expect(onAir(157, 150))
        try stage.tick(now: 12)
        #expect(onAir(307, 200))
        try stage.tick(now: 21)
        #expect(onAir(607, 300))
        #expect(stage.nextMotion == 25)
    }

    /// An Eddystone-EID beacon gets its next identifier when its counter's period ends (K 2,
    /// the counter from 3: at 1 s, then every 4 s), each with a new address, in place on its set.
    @Test func anEIDChangesAtTheEndOfEachPeriodWithANewAddress() throws {
        let (stage, radio) = try stage(sets: 2)
        var notes: [String] = []
        stage.note = { notes.append($0) }
        let identity = try EddystoneEIDIdentity(identityKey: Array(0..<16), rotationExponent: 2)
        let start = EddystoneEID(txPowerAt0m: -20, identity: identity, counter: 3, aes: BoringAES())
        try stage.advertise("eid", .eddystone(.eid(start)))
        let addresses = radio.addresses(ofSet: 0)
        #expect(addresses == 1, "an address of its own")
        #expect(stage.nextMotion == 1)
        func onAir(counter: UInt32) -> Bool {
            let frame = EddystoneEID(txPowerAt0m: -20, identity: identity, counter: counter, aes: BoringAES())
            return radio.data(onSet: 0) == Beacon.eddystone(.eid(frame)).advertisingData.bytes
        }
        try stage.tick(now: 0.9)
        #expect(onAir(counter: 3))
        try stage.tick(now: 1)
        #expect(onAir(counter: 4))
        #expect(stage.nextMotion == 5)
        try stage.tick(now: 9.5)
        #expect(onAir(counter: 12), "far behind: the period it is in now")
        #expect(radio.addresses(ofSet: 0) == addresses + 2)
        #expect(notes.count == 2 && notes.allSatisfy { $0.hasPrefix("eid: EID ") && $0.contains(" from ") }, "\(notes)")
        try stage.stop("eid")
        #expect(stage.nextMotion == nil)
    }
}
