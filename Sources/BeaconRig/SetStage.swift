// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import BeaconHost
import BeaconTracking

/// A scenario's beacons, by name, on the advertising core `advertise` goes through
/// (`BeaconSets`), on HCI advertising sets or the kernel's instances, changed in place through
/// the core's one change path. With more beacons than sets the core's one rule holds: the
/// beacons beyond share the last set, taking turns on it every `rotationPeriod` seconds (the
/// period the launch gave the core). What moves by itself (TLM counters, rotating addresses,
/// EIDs) is the core's `BeaconMotions`, on the stage's clock.
package final class SetStage: ScenarioStage {
    public let advertiser: any BeaconSets
    public let rotationPeriod: Double
    /// Called when beacons start or stop taking turns, and with each new address and EID, for
    /// the user to see.
    public var note: ((String) -> Void)?

    /// Each beacon's own parameters (absent: the run's). A beacon with its own (other than a
    /// random address) takes no turns.
    private var parameters: [String: BeaconParameters] = [:]
    /// The beacons on the air (or waiting for their turn), in the order they were added, with
    /// the id the core gave each.
    private var named: [(name: String, id: BeaconID)] = []
    /// The beacons taking turns as last noted.
    private var turns: [String] = []
    private var now = 0.0
    private let intervalUnits: UInt32
    private lazy var motions = BeaconMotions(beacons: advertiser, intervalUnits: intervalUnits,
                                             label: { [weak self] id in self?.name(of: id) ?? "beacon \(id)" }) { [weak self] _, text in
        self?.note?(text)
    }

    /// - Parameter intervalUnits: the advertising interval (0.625 ms units), for TLM PDU counts.
    public init(advertiser: any BeaconSets, rotationPeriod: Double = 1, intervalUnits: UInt32 = 160) {
        self.advertiser = advertiser
        self.rotationPeriod = rotationPeriod
        self.intervalUnits = intervalUnits
    }

    /// The beacons on the air now, and those waiting for their turn.
    public var onAir: [String] { named.map(\.name) }

    public func advertise(_ name: String, _ beacon: Beacon, parameters own: BeaconParameters = .run) throws(HostError) {
        if !advertiser.hasFreeSet, let last = named.last {
            // It would take turns on the last set, with the beacon there: refused in the
            // scenario's words before the core refuses it in its own.
            // (An address of its own each the core judges: it may be kept.)
            guard own.apartFromAddress == .run else { throw Self.noTurns(name) }
            guard (parameters[last.name] ?? .run).apartFromAddress == .run else { throw Self.noTurns(last.name, for: name) }
        }
        let id: BeaconID
        do {
            id = try advertiser.add(beacon, parameters: own)
        } catch {
            throw Self.naming(name, error)
        }
        book(name, id, own)
        noteTurns()
    }

    /// Books beacon `name`, on the air now as the core's `id`, with its own parameters.
    private func book(_ name: String, _ id: BeaconID, _ own: BeaconParameters) {
        parameters[name] = own == .run ? nil : own
        named.append((name, id))
    }

    /// Several beacons at once: one change where each can have a set of its own now (a
    /// replay's comings at one instant: readied off the air, enabled by one command); else,
    /// and where the one change is refused, one by one, each with its own answer.
    public func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) {
        guard beacons.count > 1, advertiser.hasFreeSet, Set(beacons.map(\.name)).count == beacons.count,
              !beacons.contains(where: { id($0.name) != nil }),
              let ids = try? advertiser.add(beacons.map { ($0.beacon, $0.parameters) }) else {
            for each in beacons { try advertise(each.name, each.beacon, parameters: each.parameters) }
            return
        }
        for (each, id) in zip(beacons, ids) { book(each.name, id, each.parameters) }
        noteTurns()
    }

    /// Several beacons off the air as one change.
    public func stop(_ names: [String]) throws(HostError) {
        let leaving = named.filter { names.contains($0.name) }
        guard leaving.count > 1 else {
            for name in names { try stop(name) }
            return
        }
        try advertiser.remove(leaving.map(\.id))
        named.removeAll { names.contains($0.name) }
        noteTurns()
    }

    /// Says when beacons start taking turns, and who takes turns as that changes.
    private func noteTurns() {
        let taking = advertiser.takingTurns.compactMap { id in named.first { $0.id == id }?.name }
        defer { turns = taking }
        guard taking != turns, taking.count > 1 else { return }
        note?((turns.count < 2 ? "more beacons than sets: " : "") + taking.joined(separator: ", ")
              + " take turns on one set, \(Int(rotationPeriod * 1000)) ms each")
    }

    /// The core's id for the beacon named `name`, while it is on the air.
    private func id(_ name: String) -> BeaconID? { named.first { $0.name == name }?.id }

    /// The scenario's name for the beacon with the core's id `id`.
    private func name(of id: BeaconID) -> String? { named.first { $0.id == id }?.name }

    public func update(_ name: String, to beacon: Beacon) throws(HostError) {
        // One waiting for its turn shows the new fields at its turn; one not on the air, at its next advertise.
        if let id = id(name) { try advertiser.update(id, to: beacon) }
    }

    public func setParameters(_ name: String, _ own: BeaconParameters) throws(HostError) {
        if let id = id(name) {
            guard own.apartFromAddress == .run || !turns.contains(name) else { throw Self.noTurns(name) }
            try advertiser.setParameters(id, to: own)
        }
        // Not on the air: its next advertise uses them.
        parameters[name] = own == .run ? nil : own
    }

    /// Why a beacon with parameters of its own cannot take turns on a shared set.
    private static func noTurns(_ name: String, for other: String? = nil) -> HostError {
        .unsupported((other.map { "advertise \($0): no set is free, and " } ?? "") + "'\(name)' has its own interval or TX "
                     + "power, which a set shared by beacons taking turns cannot keep: stop a beacon first, or use a "
                     + "controller with more sets")
    }

    /// Takes the beacon off the air; where beacons take turns, the core gives a set that falls
    /// free to the first of them.
    public func stop(_ name: String) throws(HostError) {
        guard let index = named.firstIndex(where: { $0.name == name }) else { return }
        try advertiser.remove(named[index].id)
        named.remove(at: index)
        noteTurns()
    }

    public func stopAll() throws(HostError) {
        named.removeAll()
        turns.removeAll()
        try advertiser.removeAll()
    }

    public var nextDeadline: Double? {
        // The supervisor's next check, restore or turn (its clock is the machine's, read now).
        let supervision = advertiser.nextDeadline.map { now + max(0, ContinuousClock.now.duration(to: $0).inSeconds) }
        return [supervision, motions.nextDue(now: now)].compactMap { $0 }.min()
    }

    public var wakeDescriptors: [Int32] { advertiser.wakeDescriptors }

    public func takeSupervisionEvents() -> [EmitterEvent] { advertiser.takeEvents() }

    public func tick(now: Double) throws(HostError) {
        self.now = now
        try advertiser.serve()
        motions.perform(now: now)
    }

    private static func naming(_ name: String, _ error: HostError) -> HostError {
        switch error {
        case let .unsupported(text): return .unsupported("advertise \(name): \(text)")
        case var .refused(refusal):
            // The scenario's name for the beacon, not the core's number.
            refusal.beacon = "'\(name)'"
            return .refused(refusal)
        default: return error
        }
    }
}
