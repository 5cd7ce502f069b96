// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import BeaconHost
import BeaconTracking

/// A scenario's beacons, by name, on the advertising core `advertise` goes through, on HCI
/// advertising sets or the kernel's instances: changed in place through the core's one change
/// path (`LiveBeacons`) and kept on the air by the same kind of run as `advertise`'s
/// (`EmitterRun`, its supervisor the one for both). With more beacons than sets the core's one
/// rule holds: the beacons beyond share the last set, taking turns on it every
/// `rotationPeriod` seconds (the period the launch gave the core), and a beacon with
/// parameters of its own takes no turns (the core refuses it; the stage names the beacons).
/// What moves by itself (TLM counters, rotating addresses, EIDs) is the core's
/// `BeaconMotions`, on the stage's clock.
package final class SetStage: ScenarioStage {
    /// The beacons' run: their supervisor, and the changes made under it.
    package let run: EmitterRun
    public let rotationPeriod: Double
    /// Called when beacons start or stop taking turns, and with each new address and EID, for
    /// the user to see.
    public var note: ((String) -> Void)?

    /// Each beacon's own parameters (absent: the run's), kept for one not on the air now.
    private var parameters: [String: BeaconParameters] = [:]
    /// The beacons on the air (or waiting for their turn), in the order they were added, with
    /// the id the core gave each.
    private var named: [(name: String, id: BeaconID)] = []
    /// The beacons taking turns as last noted.
    private var turns: [String] = []
    private var now = 0.0
    private let intervalUnits: UInt32
    private var beacons: LiveBeacons { run.live }
    private lazy var motions = BeaconMotions(beacons: beacons, intervalUnits: intervalUnits,
                                             label: { [weak self] id in self?.name(of: id) ?? "beacon \(id)" }) { [weak self] motion, text in
        self?.note?((motion == .withheld ? "withheld: " : "") + text)
    }

    /// - Parameter intervalUnits: the advertising interval (0.625 ms units), for TLM PDU counts.
    package init(run: EmitterRun, rotationPeriod: Double = 1, intervalUnits: UInt32 = 160) {
        self.run = run
        self.rotationPeriod = rotationPeriod
        self.intervalUnits = intervalUnits
    }

    /// The beacons on the air now, and those waiting for their turn.
    public var onAir: [String] { named.map(\.name) }

    public func advertise(_ name: String, _ beacon: Beacon, parameters own: BeaconParameters = .run) throws(HostError) {
        let id: BeaconID
        do {
            id = try beacons.add(beacon, parameters: own)
        } catch {
            throw naming(name, error)
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
    public func advertise(_ coming: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) {
        guard coming.count > 1, beacons.hasFreeSet, Set(coming.map(\.name)).count == coming.count,
              !coming.contains(where: { id($0.name) != nil }),
              let ids = try? beacons.add(coming.map { ($0.beacon, $0.parameters) }) else {
            for each in coming { try advertise(each.name, each.beacon, parameters: each.parameters) }
            return
        }
        for (each, id) in zip(coming, ids) { book(each.name, id, each.parameters) }
        noteTurns()
    }

    /// Several beacons off the air as one change.
    public func stop(_ names: [String]) throws(HostError) {
        let leaving = named.filter { names.contains($0.name) }
        guard leaving.count > 1 else {
            for name in names { try stop(name) }
            return
        }
        try beacons.remove(leaving.map(\.id))
        named.removeAll { names.contains($0.name) }
        noteTurns()
    }

    /// Says when beacons start taking turns, and who takes turns as that changes.
    private func noteTurns() {
        let taking = beacons.takingTurns.compactMap { id in named.first { $0.id == id }?.name }
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
        if let id = id(name) { try beacons.update(id, to: beacon) }
    }

    public func setParameters(_ name: String, _ own: BeaconParameters) throws(HostError) {
        if let id = id(name) {
            do {
                try beacons.setParameters(id, to: own)
            } catch {
                throw naming(name, error, doing: "parameters")
            }
        }
        // Not on the air: its next advertise uses them.
        parameters[name] = own == .run ? nil : own
    }

    /// Takes the beacon off the air; where beacons take turns, the core gives a set that falls
    /// free to the first of them.
    public func stop(_ name: String) throws(HostError) {
        guard let index = named.firstIndex(where: { $0.name == name }) else { return }
        try beacons.remove(named[index].id)
        named.remove(at: index)
        noteTurns()
    }

    public func stopAll() throws(HostError) {
        named.removeAll()
        turns.removeAll()
        try beacons.removeAll()
    }

    public var nextDeadline: Double? {
        // The supervisor's next check, restore or turn (its clock is the machine's, read now).
        let supervision = now + max(0, ContinuousClock.now.duration(to: run.deadline).inSeconds)
        return [supervision, nextMotion].compactMap { $0 }.min()
    }

    /// When something of the beacons' own moves next (a TLM frame's counters, an address, an
    /// EID), on the stage's clock; nil when nothing does.
    package var nextMotion: Double? { motions.nextDue(now: now) }

    public var wakeDescriptors: [Int32] { run.descriptors }

    public func takeSupervisionEvents() -> [EmitterEvent] { run.takeEvents() }

    public func tick(now: Double) throws(HostError) {
        self.now = now
        try run.turn()
        motions.perform(now: now)
    }

    /// A refusal in the scenario's words: its names for the beacons, not the core's numbers
    /// (the one it names, where it is on the stage; else `name`, the one asked about).
    private func naming(_ name: String, _ error: HostError, doing step: String = "advertise") -> HostError {
        switch error {
        case let .unsupported(text): return .unsupported("\(step) \(name): \(text)")
        case var .refused(refusal):
            refusal.beaconName = self.named.first { $0.id == refusal.beacon }?.name ?? name
            return .refused(refusal)
        default: return error
        }
    }
}
