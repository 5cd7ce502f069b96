// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// A controller's sets, faked: what is on each set, and every call. With every set in use, an
/// added beacon is named as one taking turns (from 100 on), as the core names them; the turns
/// themselves are the core's (`BeaconSlotsTests`).
final class FakeSets: BeaconSets {
    var log: ((String) -> Void)?
    let capacity: Int
    private(set) var sets: [UInt8: Beacon] = [:]
    /// Each beacon's own parameters, by id, as the core keeps them (an EID beacon with a set of
    /// its own gets a made-up address, as the core gives it one).
    private var own: [BeaconID: BeaconParameters] = [:]
    private(set) var calls: [String] = []
    private var waiting: [UInt8] = []

    init(capacity: Int) { self.capacity = capacity }

    var hasFreeSet: Bool { sets.count < capacity && waiting.isEmpty }

    var takingTurns: [BeaconID] { waiting.isEmpty ? [] : ([sets.keys.max()!] + waiting).map(Self.id) }

    /// The fake names a beacon by its set's handle (one taking turns, from 100 on).
    static func id(_ handle: UInt8) -> BeaconID { BeaconID(Int(handle)) }

    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID {
        guard let handle = (0..<UInt8(capacity)).first(where: { sets[$0] == nil }) else {
            guard !sets.isEmpty else { throw .unsupported("full") }
            let name = 100 + UInt8(waiting.count)
            waiting.append(name)
            calls.append("turns \(name) \(minor(beacon))")
            return Self.id(name)
        }
        sets[handle] = beacon
        own[Self.id(handle)] = parameters.forBeacon(beacon, makesAddresses: true, connectable: false)
        calls.append("add \(handle) \(minor(beacon))" + (parameters == .run ? "" : " (\(parameters.description))"))
        return Self.id(handle)
    }

    /// The beacons on their sets (those taking turns are not faked), as the core lists them.
    var running: [RunningBeacon] {
        sets.keys.sorted().map { handle in
            RunningBeacon(id: Self.id(handle), beacon: sets[handle]!, parameters: own[Self.id(handle)] ?? .run)
        }
    }

    func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError) {
        let handle = UInt8(id.rawValue)
        if let parameters {
            own[id] = parameters
            calls.append("parameters \(id)" + (parameters == .run ? " (the run's)" : " (\(parameters.description))"))
            return
        }
        sets[handle] = beacon
        calls.append("update \(handle) \(minor(beacon))")
    }

    func show(_ id: BeaconID, _ frame: Beacon) throws(HostError) {}

    func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress {
        calls.append("renew \(id)")
        return BluetoothAddress(UInt64(calls.count))
    }

    func remove(_ id: BeaconID) throws(HostError) {
        let handle = UInt8(id.rawValue)
        waiting.removeAll { $0 == handle }
        sets[handle] = nil
        own[id] = nil
        calls.append("remove \(handle)")
    }

    func removeAll() throws(HostError) {
        for handle in sets.keys.sorted() { try remove(Self.id(handle)) }
    }

    /// No session: nothing to watch, nothing due (the supervision is `SupervisedSetsTests`').
    var wakeDescriptors: [Int32] { [] }
    var nextDeadline: ContinuousClock.Instant? { nil }
    func serve() throws(HostError) {}
    func takeEvents() -> [EmitterEvent] { [] }

    /// The minors on the air, by set.
    var onAir: [UInt8: Int] { sets.mapValues(minor) }

    private func minor(_ beacon: Beacon) -> Int {
        if case let .iBeacon(beacon) = beacon { return Int(beacon.minor) }
        return -1
    }
}

/// A scenario's beacons by name on the advertising core: a beacon's own parameters, its
/// address renewed, TLM counters, and the turns (the core's) said and refused in the
/// scenario's words.
@Suite struct SetStageTests {
    func beacon(_ minor: UInt16) -> Beacon {
        .iBeacon(IBeacon(proximityUUID: UUID(uuidString: lobbyUUID)!, major: 1, minor: minor))
    }

    /// A beacon's own parameters go with its set, change on it in place, and keep it out of
    /// turns (a shared set cannot keep them): refused, saying so, whichever beacon has them.
    @Test func aBeaconsOwnParametersStayOnItsOwnSet() throws {
        let sets = FakeSets(capacity: 2)
        let stage = SetStage(advertiser: sets, rotationPeriod: 1)
        try stage.advertise("b", beacon(2))
        try stage.advertise("a", beacon(1), parameters: BeaconParameters(intervalUnits: 800))
        try stage.setParameters("a", BeaconParameters(intervalUnits: 320, txPower: -8))
        #expect(sets.calls == ["add 0 2", "add 1 1 (interval 500 ms = 800 x 0.625 ms)",
                               "parameters 1 (interval 200 ms = 320 x 0.625 ms, TX power -8 dBm)"])
        #expect {
            try stage.advertise("c", beacon(3), parameters: BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("'c' has its own interval or TX power") }
        #expect {
            try stage.advertise("c", beacon(3))
        } throws: { "\($0)".contains("advertise c: no set is free, and 'a' has its own interval or TX power") }
        #expect(sets.onAir == [0: 2, 1: 1], "nothing changed on the air")
        #expect(stage.onAir == ["b", "a"])
        // Back to the run's parameters, it may share its set: the core puts c in the turns.
        var notes: [String] = []
        stage.note = { notes.append($0) }
        try stage.setParameters("a", .run)
        try stage.advertise("c", beacon(3))
        #expect(sets.calls.last == "turns 100 3")
        #expect(notes == ["more beacons than sets: a, c take turns on one set, 1000 ms each"])
        #expect(stage.onAir == ["b", "a", "c"])
        // Taking turns, neither may have parameters of its own.
        #expect {
            try stage.setParameters("c", BeaconParameters(txPower: 0))
        } throws: { "\($0)".contains("'c' has its own interval or TX power") }
        try stage.advertise("d", beacon(4))
        #expect(notes.last == "a, c, d take turns on one set, 1000 ms each")
        try stage.stop("c")
        #expect(notes.last == "a, d take turns on one set, 1000 ms each")
        try stage.stop("d")
        #expect(notes.count == 3, "a has its set to itself again: nothing more to say")
        try stage.setParameters("a", BeaconParameters(txPower: 0))
    }

    /// A beacon whose address rotates gets a new one every period on the stage's clock (due in
    /// `nextDeadline`), on its running set; stopped, it gets no more.
    @Test func aRotatingAddressIsRenewedEachPeriod() throws {
        let sets = FakeSets(capacity: 2)
        let stage = SetStage(advertiser: sets, rotationPeriod: 1)
        var notes: [String] = []
        stage.note = { notes.append($0) }
        try stage.advertise("a", beacon(1), parameters: BeaconParameters(address: .generatedNonResolvable, addressRotation: 2))
        try stage.advertise("b", beacon(2))
        #expect(stage.nextDeadline == 2)
        for second in 1...5 { try stage.tick(now: Double(second)) }
        #expect(sets.calls.filter { $0.hasPrefix("renew") } == ["renew 0", "renew 0"], "at 2 s and 4 s: \(sets.calls)")
        #expect(notes.count == 2 && notes.allSatisfy { $0.hasPrefix("a: new address ") }, "\(notes)")
        #expect(stage.nextDeadline == 6)
        try stage.stop("a")
        for second in 6...9 { try stage.tick(now: Double(second)) }
        #expect(sets.calls.filter { $0.hasPrefix("renew") }.count == 2)
        #expect(stage.nextDeadline == nil)
    }

    /// A TLM beacon's counters move every 5 s of the stage's time: 5.0 s of uptime and 150
    /// PDUs (50 events at 100 ms, three PDUs each) per period, in place on its set.
    @Test func telemetryMovesOnTheStagesClock() throws {
        let sets = FakeSets(capacity: 2)
        let stage = SetStage(advertiser: sets, intervalUnits: 160)
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 7, uptimeDeciseconds: 100)
        try stage.advertise("telemetry", .eddystone(.tlm(start)))
        #expect(stage.nextDeadline == 5)
        func counters() -> String {
            guard case let .eddystone(.tlm(frame))? = sets.sets[0] else { return "none" }
            return "\(frame.advertisingPDUCount)/\(frame.uptimeDeciseconds)"
        }
        try stage.tick(now: 4.9)
        #expect(counters() == "7/100")
        try stage.tick(now: 5)
        #expect(counters() == "157/150")
        try stage.tick(now: 12)
        #expect(counters() == "307/200")
        try stage.tick(now: 21)
        #expect(counters() == "607/300")
        #expect(stage.nextDeadline == 25)
    }

    /// An Eddystone-EID beacon gets its next identifier when its counter's period ends (K 2,
    /// the counter from 3: at 1 s, then every 4 s), each with a new address, in place on its set.
    @Test func anEIDChangesAtTheEndOfEachPeriodWithANewAddress() throws {
        let sets = FakeSets(capacity: 2)
        let stage = SetStage(advertiser: sets)
        var notes: [String] = []
        stage.note = { notes.append($0) }
        let identity = try EddystoneEIDIdentity(identityKey: Array(0..<16), rotationExponent: 2)
        let start = EddystoneEID(txPowerAt0m: -20, identity: identity, counter: 3, aes: BoringAES())
        try stage.advertise("eid", .eddystone(.eid(start)))
        #expect(stage.nextDeadline == 1)
        func onAir() -> [UInt8]? {
            guard case let .eddystone(.eid(frame))? = sets.sets[0] else { return nil }
            return frame.eid
        }
        try stage.tick(now: 0.9)
        #expect(onAir() == start.eid)
        try stage.tick(now: 1)
        #expect(onAir() == identity.ephemeralIdentifier(counter: 4, aes: BoringAES()))
        #expect(stage.nextDeadline == 5)
        try stage.tick(now: 9.5)
        #expect(onAir() == identity.ephemeralIdentifier(counter: 12, aes: BoringAES()), "far behind: the period it is in now")
        #expect(sets.calls.filter { $0.hasPrefix("renew") }.count == 2, "\(sets.calls)")
        #expect(notes.count == 2 && notes.allSatisfy { $0.hasPrefix("eid: EID ") && $0.contains(" from ") }, "\(notes)")
        try stage.stop("eid")
        #expect(stage.nextDeadline == nil)
    }
}
