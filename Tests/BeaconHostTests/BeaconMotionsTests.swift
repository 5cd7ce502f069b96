// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A fake running emitter, named by ids: its beacons as values, and each change asked of it.
final class FakeRunning: LiveAdvertising {
    var running: [RunningBeacon]
    var changes: [String] = []
    var renewed: [BeaconID] = []
    var refuseNext = false
    var refuseUpdates = false
    /// Each frame shown on a beacon's set (`show`), in order.
    var shown: [(id: BeaconID, frame: Beacon)] = []

    init(_ beacons: [Beacon], parameters: [BeaconParameters]? = nil) {
        let parameters = parameters ?? beacons.map { _ in .run }
        running = beacons.indices.map { RunningBeacon(id: BeaconID($0 + 1), beacon: beacons[$0], parameters: parameters[$0]) }
    }

    convenience init(_ parameters: [BeaconParameters]) {
        self.init(parameters.map { _ in referenceBeacon }, parameters: parameters)
    }

    private func index(_ id: BeaconID) throws(HostError) -> Int {
        guard let index = running.firstIndex(where: { $0.id == id }) else { throw .refused(Refusal(nil, .noSuchBeacon("\(id)"))) }
        return index
    }

    func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError) {
        if refuseUpdates { throw .controllerRefused(opcode: .leSetExtendedAdvertisingData, status: .commandDisallowed, context: nil) }
        let index = try index(id)
        running[index].beacon = beacon
        if let parameters { running[index].parameters = parameters }
        changes.append("update \(id)")
    }

    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID {
        let id = BeaconID((running.map(\.id.rawValue).max() ?? 0) + 1)
        running.append(RunningBeacon(id: id, beacon: beacon, parameters: parameters))
        changes.append("add")
        return id
    }

    func remove(_ id: BeaconID) throws(HostError) {
        running.remove(at: try index(id))
        changes.append("remove \(id)")
    }

    func show(_ id: BeaconID, _ frame: Beacon) throws(HostError) {
        shown.append((id, frame))
    }

    func renewAddress(_ id: BeaconID, with content: Beacon?) throws(HostError) -> BluetoothAddress {
        if refuseNext {
            refuseNext = false
            throw .controllerRefused(opcode: .leSetAdvertisingSetRandomAddress, status: .commandDisallowed, context: nil)
        }
        let index = try index(id)
        renewed.append(id)
        if let content {
            running[index].beacon = content
            changes.append("renew \(id) with content")
        } else {
            changes.append("renew \(id)")
        }
        return BluetoothAddress(0x1000 + UInt64(id.rawValue))
    }
}

/// What moves on running beacons by itself, on one schedule (`BeaconMotions`: `advertise`'s
/// loop and a scenario's stage), on a clock of the test's: addresses renewed each on its own
/// period, a refusal said and tried again a period later, a beacon that stops rotating (or
/// goes) left alone, a rotation that follows its beacon by id.
@Suite struct BeaconMotionsTests {
    /// Telemetry interleaved on the same schedule (`--interleave-tlm`): on a tenth advertising
    /// interval the TLM frame goes on the Eddystone-UID beacon's set (not the iBeacon's), its
    /// counters moved by the time since the start; the beacon goes back on the next interval;
    /// a loop late past a tenth interval skips its frame rather than show it late.
    @Test func telemetryIsInterleavedOnEveryTenthInterval() throws {
        let uid = Beacon.eddystone(.uid(try EddystoneUID(txPowerAt0m: -20, namespace: Array(repeating: 1, count: 10),
                                                         instance: Array(repeating: 2, count: 6))))
        let live = FakeRunning([uid, referenceBeacon])
        let tlm = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 0, uptimeDeciseconds: 0)))
        // 160 units: 100 ms intervals, the tenth at 1 s.
        let motions = BeaconMotions(beacons: live, intervalUnits: 160, interleaving: tlm) { _, _ in }
        func due(_ now: Double) -> Double { motions.nextDue(now: now) ?? .infinity }
        #expect(abs(due(0) - 1.0) < 1e-9)
        motions.perform(now: 0.95)
        #expect(live.shown.isEmpty)
        motions.perform(now: 1.0001)
        // One second on: 10 deciseconds of uptime, 10 advertising events of 3 PDUs (37, 38, 39).
        let moved = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 30, uptimeDeciseconds: 10)))
        #expect(live.shown.map(\.id) == [1] && live.shown.last?.frame == moved)
        #expect(abs(due(1.0001) - 1.1) < 1e-9, "the beacon back after one interval")
        motions.perform(now: 1.1001)
        #expect(live.shown.map(\.id) == [1, 1] && live.shown.last?.frame == uid)
        #expect(abs(due(1.1001) - 2.0) < 1e-9)
        motions.perform(now: 2.35)
        #expect(live.shown.count == 2, "late past the interval at 2 s: skipped")
        #expect(abs(due(2.35) - 3.0) < 1e-9)
        motions.perform(now: 3.0001)
        let later = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 90, uptimeDeciseconds: 30)))
        #expect(live.shown.count == 3 && live.shown.last?.frame == later)
        #expect(live.changes.isEmpty, "the beacons themselves unchanged")
    }

    @Test func eachRotatingBeaconIsRenewedOnItsPeriod() throws {
        let live = FakeRunning([.run, BeaconParameters(address: .generatedNonResolvable, addressRotation: 2),
                                BeaconParameters(address: .generatedStaticRandom, addressRotation: 60)])
        var said: [String] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, text in said.append(text) }
        #expect(motions.nextDue(now: 0) == 2, "the first rotating beacon's period")
        motions.perform(now: 1.9)
        #expect(live.renewed.isEmpty, "nothing is due yet")
        for second in stride(from: 2.0, through: 6.5, by: 0.5) { motions.perform(now: second) }
        #expect(live.renewed == [2, 2, 2], "beacon 2 at 2, 4 and 6 s; beacon 3 (60 s) and beacon 1 (none) not")
        #expect(said.contains("beacon 2: new address 00:00:00:00:10:02"), "\(said)")
        #expect(motions.nextDue(now: 6.5) == 8)

        // A refusal is said and tried again a period later; a rotation that stops (an update): no more.
        live.refuseNext = true
        motions.perform(now: 8)
        #expect(said.last?.hasPrefix("beacon 2: no new address: controller refused") == true, "\(said)")
        #expect(said.last?.hasSuffix("tried again in 2.0 s") == true, "\(said)")
        #expect(motions.nextDue(now: 8) == 10)
        try live.update(2, to: referenceBeacon, parameters: .run)
        try live.update(3, to: referenceBeacon, parameters: .run)
        #expect(motions.nextDue(now: 8) == nil)
    }

    /// A rotation goes with its beacon, not its place: beacon 3 rotates, beacon 1 goes (beacon 3
    /// is now second), and beacon 3 is the one renewed, by its id.
    @Test func aRotationFollowsItsBeaconWhenOneBeforeItGoes() throws {
        let live = FakeRunning([.run, .run, BeaconParameters(address: .generatedNonResolvable, addressRotation: 1)])
        var said: [String] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160, label: { "b\($0)" }) { _, text in said.append(text) }
        #expect(motions.nextDue(now: 0) == 1)
        try live.remove(1)
        motions.perform(now: 1)
        #expect(live.renewed == [3])
        #expect(said == ["b3: new address 00:00:00:00:10:03"])
    }

    /// Every TLM beacon's counters move every 5 s, in place through the change path; an EID
    /// beacon whose address is not made up (the kernel's) changes its identifier there and says
    /// once that the address stays.
    @Test func telemetryAndIdentifiersMoveThroughTheChangePath() throws {
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 7, uptimeDeciseconds: 100)
        let identity = try EddystoneEIDIdentity(identityKey: Array(0..<16), rotationExponent: 1)
        let eid = EddystoneEID(txPowerAt0m: -20, identity: identity, counter: 0, aes: BoringAES())
        let live = FakeRunning([.eddystone(.tlm(start)), .eddystone(.eid(eid))])
        var said: [(BeaconMotions.Motion, String)] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { said.append(($0, $1)) }
        #expect(motions.nextDue(now: 0) == 2, "the EID's period (2^1 s) ends before the TLM's 5 s")
        for second in 1...5 { motions.perform(now: Double(second)) }
        guard case let .eddystone(.tlm(moved)) = live.running[0].beacon else { Issue.record("not TLM"); return }
        #expect(moved.uptimeDeciseconds == 150 && moved.advertisingPDUCount == 157)
        #expect(live.running[1].beacon == .eddystone(.eid(EddystoneEID(txPowerAt0m: -20, identity: identity, counter: 4,
                                                                          aes: BoringAES()))))
        #expect(live.renewed.isEmpty, "no made-up address to renew")
        let identifiers = said.filter { $0.0 == .content("eid") }.map(\.1)
        #expect(identifiers.count == 2 && identifiers[0].contains("the address stays") && !identifiers[1].contains("stays"),
                "\(identifiers)")
    }
}

/// What identifies a beacon changes in one step (`LiveAdvertising.renewAddress(_:with:)`): an
/// Eddystone-EID's next identifier goes out with its new address, never by an update and then a
/// renewal; a TLM beacon whose address rotates at the moment its counters move gets both at
/// once, whichever of the two comes first within `together`.
@Suite struct OneStepIdentityTests {
    let identity = try! EddystoneEIDIdentity(identityKey: Array(repeating: 7, count: 16), rotationExponent: 1)

    func frame(_ counter: UInt32) -> Beacon {
        .eddystone(.eid(EddystoneEID(txPowerAt0m: -20, identity: identity, counter: counter, aes: BoringAES())))
    }

    @Test func anEIDsNextIdentifierGoesOutWithItsNewAddressInOneStep() throws {
        let live = FakeRunning([frame(0)], parameters: [BeaconParameters(address: .generatedNonResolvable)])
        var said: [String] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, text in said.append(text) }
        for second in stride(from: 0.5, through: 6.5, by: 0.5) { motions.perform(now: second) }
        #expect(live.changes == ["renew 1 with content", "renew 1 with content", "renew 1 with content"],
                "one step per identifier, at 2, 4 and 6 s; never an update then a renewal: \(live.changes)")
        #expect(live.running[0].beacon == frame(6))
        #expect(said.last?.hasSuffix("from 00:00:00:00:10:01") == true, "\(said)")
    }

    @Test func aRefusedStepIsTriedAgainAsOneStep() throws {
        let live = FakeRunning([frame(0)], parameters: [BeaconParameters(address: .generatedNonResolvable)])
        var said: [String] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, text in said.append(text) }
        motions.perform(now: 0)
        live.refuseNext = true
        motions.perform(now: 2)
        #expect(live.running[0].beacon == frame(0), "nothing changed: \(live.changes)")
        #expect(said.last?.contains("not put on the air") == true && said.last?.hasSuffix("tried again in 1 s") == true, "\(said)")
        motions.perform(now: 3)
        #expect(live.changes == ["renew 1 with content"], "the retry is the one step again: \(live.changes)")
        #expect(live.running[0].beacon == frame(3))
    }

    @Test(arguments: [9.8, 10.0, 10.3])
    func telemetryAndARotationAtTheSameMomentAreOneStep(rotation: Double) throws {
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 7, uptimeDeciseconds: 100)
        let live = FakeRunning([.eddystone(.tlm(start))],
                               parameters: [BeaconParameters(address: .generatedNonResolvable, addressRotation: rotation)])
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, _ in }
        var now = 0.0
        while now <= 10.5 {
            motions.perform(now: now)
            now = max(now + 0.01, motions.nextDue(now: now) ?? 11)
        }
        // The counters move at 5 and 10 s; the address is due at 9.8, 10 or 10.3 s: with the move at 10.
        #expect(live.changes == ["update 1", "renew 1 with content"], "\(live.changes)")
    }

    @Test func aRotationFarFromAMoveIsAnAddressAlone() throws {
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 7, uptimeDeciseconds: 100)
        let live = FakeRunning([.eddystone(.tlm(start))],
                               parameters: [BeaconParameters(address: .generatedNonResolvable, addressRotation: 7)])
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, _ in }
        var now = 0.0
        while now <= 10.5 {
            motions.perform(now: now)
            now = max(now + 0.01, motions.nextDue(now: now) ?? 11)
        }
        #expect(live.changes == ["update 1", "renew 1", "update 1"], "\(live.changes)")
    }
}

/// A stepped motion on `BeaconMotions`' schedule (Eddystone-EID, K = 3: a new identifier every
/// 8 s), on a clock of the test's: the counter advances from its start with the clock, each
/// step's end gives that step's identifier, an update by someone else starts anew from its own
/// counter, a step that did not go on the air is tried a second later for the counter then.
@Suite struct SteppedMotionTests {
    let identity = try! EddystoneEIDIdentity(identityKey: Array(repeating: 7, count: 16), rotationExponent: 3)

    func frame(_ counter: UInt32) -> Beacon {
        .eddystone(.eid(EddystoneEID(txPowerAt0m: -20, identity: identity, counter: counter, aes: BoringAES())))
    }

    @Test func eachStepsEndGivesItsIdentifier() throws {
        let live = FakeRunning([frame(5)])
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, _ in }
        #expect(motions.nextDue(now: 100) == 103, "the period of 8 s that holds 5 ends at 8, 3 s on")
        motions.perform(now: 102.9)
        #expect(live.changes.isEmpty)
        motions.perform(now: 103.2)
        #expect(live.running[0].beacon == frame(8))
        #expect(motions.nextDue(now: 103.2) == 111)
        // Someone else put another frame on (an update): it starts from its counter now.
        try live.update(1, to: frame(0), parameters: nil)
        #expect(motions.nextDue(now: 104) == 112)
        try live.remove(1)
        #expect(motions.nextDue(now: 105) == nil, "a beacon gone is dropped")
    }

    @Test func aFailedStepIsTriedAgainAndTheLastPeriodNeverEnds() {
        let live = FakeRunning([frame(0)])
        var said: [String] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { _, text in said.append(text) }
        #expect(motions.nextDue(now: 0) == 8)
        live.refuseUpdates = true
        motions.perform(now: 8)
        #expect(said.last?.hasSuffix("tried again in 1 s") == true, "\(said)")
        #expect(motions.nextDue(now: 8.5) == 9, "tried again a second later, the old frame still on the air")
        live.refuseUpdates = false
        motions.perform(now: 9)
        #expect(live.running[0].beacon == frame(9), "for the counter then, not restarted")
        #expect(motions.nextDue(now: 9.1) == 16)

        let last = FakeRunning([frame(UInt32.max - 3)])
        #expect(BeaconMotions(beacons: last, intervalUnits: 160) { _, _ in }.nextDue(now: 0) == nil)
    }

    /// The remembered AES answers as BoringSSL does, asked again or not.
    @Test func rememberingAESAnswersAsAESDoes() {
        let aes = RememberingAES()
        let key = Array(repeating: UInt8(7), count: 16)
        for block in [Array(repeating: UInt8(1), count: 16), Array(repeating: UInt8(1), count: 16), Array(0..<16).map(UInt8.init)] {
            #expect(aes.encrypt(block: block, key: key) == BoringAES().encrypt(block: block, key: key))
        }
    }
}

/// A made-up format whose level climbs a step every 3 s, defined here and nowhere in the
/// sources: its motion is its own (`ContentMotion`), and the one schedule moves it.
struct Climber: RegisteredBeaconFormat, ContentMotion {
    var level: UInt8

    static let name = "climber"
    static let descriptionKeys = ["level"]
    static func decode(_ structure: ADStructure) throws(CodecError) -> Climber? { nil }
    init(level: UInt8) { self.level = level }
    init(description fields: [String: String]) throws(FormatDescriptionError) { level = UInt8(fields["level"] ?? "0") ?? 0 }
    var advertisingData: AdvertisingData {
        AdvertisingData([ADStructure(type: .manufacturerSpecificData, data: [0xFF, 0xFF, 0xC1, level])])
    }
    var formatName: StaticString { "climber" }
    var displayName: StaticString { "Climber" }
    var measuredPowerAt1m: Int? { nil }
    var descriptionFields: [String: String] { ["type": "climber", "level": "\(level)"] }
    func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) { writer.integer("level", level) }
    var contentMoves: Bool { true }
    var motion: (any ContentMotion)? { self }

    var motionName: String { "climb" }
    var pace: MotionPace { .stepped(seconds: 3) }
    func advanced(by seconds: Double, _ context: MotionContext) -> Beacon {
        .registered(RegisteredBeacon(Climber(level: level &+ UInt8(min(255, seconds / 3)))))
    }
    var renewsAddress: Bool { false }
    var stateText: String? { "level \(level)" }
    func isMovedOn(_ heard: Beacon) -> Bool { heard.format.formatName.description == "climber" }
}

@Suite struct OwnMotionTests {
    /// A format of the tests' own moves on the schedule every format's motion shares, through
    /// the change path, said as its motion names its state: no source file knows it.
    @Test func aFormatsOwnMotionIsMovedByTheOneSchedule() {
        let live = FakeRunning([.registered(RegisteredBeacon(Climber(level: 1)))])
        var said: [(BeaconMotions.Motion, String)] = []
        let motions = BeaconMotions(beacons: live, intervalUnits: 160) { said.append(($0, $1)) }
        #expect(motions.nextDue(now: 0) == 3)
        motions.perform(now: 2)
        #expect(live.changes.isEmpty)
        motions.perform(now: 3)
        #expect(live.running[0].beacon == .registered(RegisteredBeacon(Climber(level: 2))))
        #expect(said.count == 1 && said.first?.0 == .content("climb") && said.first?.1 == "beacon 1: level 2", "\(said)")
        #expect(motions.nextDue(now: 3) == 6)
        motions.perform(now: 9.5)
        #expect(live.running[0].beacon == .registered(RegisteredBeacon(Climber(level: 4))), "from its start: 9 s, three steps")
    }
}

/// The one renewal schedule `advertise` and a scenario's stage keep (`RenewalSchedule`), on a
/// clock of the test's: due a period after the start, then a period after each time it was
/// due (at `now` when far behind); a beacon that stops rotating is dropped.
@Suite struct RenewalScheduleTests {
    @Test func eachIsDueAPeriodAfterTheLast() {
        var schedule = RenewalSchedule<String>()
        #expect(schedule.nextDue == nil)
        schedule.follow(["a": 2, "b": 5], now: 0)
        #expect(schedule.nextDue == 2)
        #expect(schedule.takeDue(at: 1.9, periods: ["a": 2, "b": 5]).isEmpty)
        #expect(schedule.takeDue(at: 2.1, periods: ["a": 2, "b": 5]) == ["a"])
        #expect(schedule.nextDue == 4, "a period after it was due, not after it was served")
        #expect(schedule.takeDue(at: 20, periods: ["a": 2, "b": 5]) == ["a", "b"], "in order")
        #expect(schedule.nextDue == 20, "far behind: at once, not a burst of the missed ones")
        schedule.keep("a", period: 2, now: 21)
        #expect(schedule.nextDue == 20, "kept: its time stays")
        schedule.start("a", period: 3, now: 21)
        schedule.follow(["a": 3], now: 21)
        #expect(schedule.nextDue == 24, "b no longer rotates: dropped; a started anew")
        #expect(schedule.takeDue(at: 30, periods: [:]).isEmpty && schedule.nextDue == nil, "without a period: dropped")
    }
}
