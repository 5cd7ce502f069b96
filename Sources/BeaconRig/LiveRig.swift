// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import BeaconHost
import BeaconTracking
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A scenario's beacons, by name, each on a set (or kernel instance) of its own, changed in
/// place: the advertising core `advertise` goes through (`BeaconSets`), on HCI advertising sets
/// or the kernel's instances.
/// With more beacons than sets, the last set is shared: the beacons beyond take turns on it,
/// each for `rotationPeriod` seconds, their data changed in place.
package final class SetStage: ScenarioStage {
    public let advertiser: any BeaconSets
    public let rotationPeriod: Double
    /// Called when beacons start or stop taking turns, for the user to see.
    public var note: ((String) -> Void)?

    private var beacons: [String: Beacon] = [:]
    /// Each beacon's own parameters (absent: the run's). A beacon with its own takes no turns.
    private var parameters: [String: BeaconParameters] = [:]
    /// When each beacon whose address rotates (`rotateAddress`) next gets a new one.
    private var renewals: [String: Double] = [:]
    /// Beacons with a set of their own, in the order they were added.
    private var dedicated: [(name: String, handle: UInt8)] = []
    /// The set beacons take turns on: who, whose turn, since when.
    private var shared: (handle: UInt8, members: [String], turn: Int, since: Double)?
    private var now = 0.0

    /// Eddystone-TLM beacons' counters move (`MovingTelemetry`), set anew every this many seconds.
    public static let telemetryPeriod = 5.0
    private let telemetry: MovingTelemetry
    private var nextTelemetry = SetStage.telemetryPeriod

    /// - Parameter intervalUnits: the advertising interval (0.625 ms units), for TLM PDU counts.
    public init(advertiser: any BeaconSets, rotationPeriod: Double = 1, intervalUnits: UInt32 = 160) {
        self.advertiser = advertiser
        self.rotationPeriod = rotationPeriod
        telemetry = MovingTelemetry(intervalUnits: intervalUnits)
    }

    /// The beacons on the air now, and those waiting for their turn.
    public var onAir: [String] {
        dedicated.map(\.name) + (shared.map { [$0.members[$0.turn]] } ?? [])
    }

    public func advertise(_ name: String, _ beacon: Beacon, parameters own: BeaconParameters = .run) throws(HostError) {
        beacons[name] = beacon
        parameters[name] = own == .run ? nil : own
        if var turns = shared {
            guard own == .run else { throw Self.noTurns(name) }
            turns.members.append(name)
            shared = turns
            note?("\(name) takes turns with \(turns.members.dropLast().joined(separator: ", ")) on set \(turns.handle)")
            return
        }
        if advertiser.hasFreeSet {
            do {
                dedicated.append((name, try advertiser.add(beacon, parameters: own)))
                renewals[name] = own.addressRotation.map { now + $0 }
                return
            } catch {
                // Taken by someone else since: share instead, if there is a set to share.
                guard !dedicated.isEmpty, case .unsupported = error else { throw Self.naming(name, error) }
            }
        }
        guard let last = dedicated.last else { throw .unsupported("advertise \(name): no advertising set is free") }
        guard own == .run else { throw Self.noTurns(name) }
        guard parameters[last.name] == nil else { throw Self.noTurns(last.name, for: name) }
        dedicated.removeLast()
        try advertiser.update(last.handle, to: beacon)
        shared = (last.handle, [last.name, name], 1, now)
        note?("more beacons than sets: \(last.name) and \(name) take turns on set \(last.handle), "
              + "\(Int(rotationPeriod * 1000)) ms each")
    }

    public func update(_ name: String, to beacon: Beacon) throws(HostError) {
        beacons[name] = beacon
        if let handle = dedicated.first(where: { $0.name == name })?.handle {
            try advertiser.update(handle, to: beacon)
        } else if let turns = shared, turns.members[turns.turn] == name {
            try advertiser.update(turns.handle, to: beacon)
        }
        // Not on the air, or waiting for its turn: its next advertise or turn uses the new fields.
    }

    public func setParameters(_ name: String, _ own: BeaconParameters) throws(HostError) {
        let handle = dedicated.first(where: { $0.name == name })?.handle
        if let handle {
            try advertiser.setParameters(handle, to: own)
        } else if shared?.members.contains(name) == true {
            guard own == .run else { throw Self.noTurns(name) }
        }
        // Not on the air: its next advertise uses them.
        parameters[name] = own == .run ? nil : own
        if handle != nil {
            renewals[name] = own.addressRotation.map { renewals[name] ?? now + $0 }
        }
    }

    /// Why a beacon with parameters of its own cannot take turns on a shared set.
    private static func noTurns(_ name: String, for other: String? = nil) -> HostError {
        .unsupported((other.map { "advertise \($0): no set is free, and " } ?? "") + "'\(name)' has its own interval or TX "
                     + "power, which a set shared by beacons taking turns cannot keep: stop a beacon first, or use a "
                     + "controller with more sets")
    }

    public func stop(_ name: String) throws(HostError) {
        renewals[name] = nil
        if let index = dedicated.firstIndex(where: { $0.name == name }) {
            let handle = dedicated.remove(at: index).handle
            if var turns = shared {
                // A set fell free: the beacon whose turn it is moves onto it.
                let moving = turns.members.remove(at: turns.turn)
                try advertiser.update(handle, to: beacons[moving]!)
                // The set that fell free had the stopped beacon's parameters; the run's again.
                if parameters[name] != nil { try advertiser.setParameters(handle, to: .run) }
                dedicated.append((moving, handle))
                // The shared set goes on with the next beacon in turn.
                turns.turn %= turns.members.count
                try advertiser.update(turns.handle, to: beacons[turns.members[turns.turn]]!)
                turns.since = now
                try settle(turns)
            } else {
                try advertiser.remove(handle)
            }
        } else if var turns = shared, let index = turns.members.firstIndex(of: name) {
            let current = index == turns.turn
            turns.members.remove(at: index)
            if index < turns.turn { turns.turn -= 1 }
            turns.turn %= max(1, turns.members.count)
            if current && !turns.members.isEmpty {
                try advertiser.update(turns.handle, to: beacons[turns.members[turns.turn]]!)
                turns.since = now
            }
            try settle(turns)
        }
    }

    /// A shared set with one beacon left is that beacon's own again.
    private func settle(_ turns: (handle: UInt8, members: [String], turn: Int, since: Double)) throws(HostError) {
        switch turns.members.count {
        case 0:
            shared = nil
            try advertiser.remove(turns.handle)
        case 1:
            shared = nil
            dedicated.append((turns.members[0], turns.handle))
        default:
            shared = turns
        }
    }

    public func stopAll() throws(HostError) {
        renewals.removeAll()
        dedicated.removeAll()
        shared = nil
        try advertiser.removeAll()
    }

    public var nextDeadline: Double? {
        let turn = shared.map { $0.since + rotationPeriod }
        let moving = beacons.values.contains { if case .eddystone(.tlm) = $0 { true } else { false } } ? nextTelemetry : nil
        // The supervisor's next check or restore (its clock is the machine's, read now).
        let supervision = supervised.map { now + max(0, ContinuousClock.now.duration(to: $0.nextDeadline).inSeconds) }
        return [turn, moving, supervision, renewals.values.min()].compactMap { $0 }.min()
    }

    /// The sets as `advertise`'s beacons are kept: watched, and put back after a disruption.
    private var supervised: SupervisedSets? { advertiser as? SupervisedSets }

    public var wakeDescriptors: [Int32] { supervised?.wakeDescriptors ?? [] }

    public func takeSupervisionEvents() -> [EmitterEvent] { supervised?.takeEvents() ?? [] }

    /// The beacon `name` is now (a TLM beacon's counters move).
    public func beacon(named name: String) -> Beacon? { beacons[name] }

    public func tick(now: Double) throws(HostError) {
        self.now = now
        try supervised?.serve()
        try moveTelemetry(now: now)
        try renewAddresses(now: now)
        guard var turns = shared, now >= turns.since + rotationPeriod else { return }
        turns.turn = (turns.turn + 1) % turns.members.count
        turns.since = now
        shared = turns
        try advertiser.update(turns.handle, to: beacons[turns.members[turns.turn]]!)
    }

    /// Gives each beacon whose address rotates and whose time has come a new address, on its
    /// running set, and says so.
    private func renewAddresses(now: Double) throws(HostError) {
        for (name, due) in renewals.sorted(by: { $0.key < $1.key }) where now >= due {
            guard let handle = dedicated.first(where: { $0.name == name })?.handle,
                  let period = parameters[name]?.addressRotation else {
                renewals[name] = nil
                continue
            }
            // The next one a period after this one was due (or now, when far behind).
            renewals[name] = max(due + period, now)
            let address = try advertiser.renewAddress(handle)
            note?("\(name): new address \(address)")
        }
    }

    /// Advances every TLM beacon's counters by the whole periods passed, on the air in place.
    private func moveTelemetry(now: Double) throws(HostError) {
        var periods = 0.0
        while now >= nextTelemetry {
            periods += 1
            nextTelemetry += Self.telemetryPeriod
        }
        guard periods > 0 else { return }
        for (name, beacon) in beacons.sorted(by: { $0.key < $1.key }) {
            guard case let .eddystone(.tlm(frame)) = beacon else { continue }
            let moved = Beacon.eddystone(.tlm(telemetry.advance(frame, by: periods * Self.telemetryPeriod)))
            if dedicated.contains(where: { $0.name == name }) || shared.map({ $0.members[$0.turn] == name }) == true {
                try update(name, to: moved)
            } else {
                beacons[name] = moved
            }
        }
    }

    private static func naming(_ name: String, _ error: HostError) -> HostError {
        if case let .unsupported(text) = error { return .unsupported("advertise \(name): \(text)") }
        return error
    }
}

/// The real clock, and the reports of a second device scanning (or none: it only waits),
/// ending a wait early when `interrupt` (a signal's descriptor) is readable, and, as a deadline
/// come early, when one of `wake` (the stage's controller link and watchers, as they are at
/// each wait) is.
public final class LiveObserver: ScenarioObserver {
    private let scanner: AdvertisementScanner?
    private let interrupt: Int32?
    private let wake: () -> [Int32]
    /// The interrupt and the stage's descriptors in one epoll set, kept to them at each wait.
    private let both = WakeSet()
    private let origin = ContinuousClock.now

    public init(scanner: AdvertisementScanner?, interrupt: Int32?, wake: @escaping () -> [Int32] = { [] }) {
        self.scanner = scanner
        self.interrupt = interrupt
        self.wake = wake
    }

    deinit { both.close() }

    public var now: Double {
        origin.duration(to: .now).inSeconds
    }

    public func queued() throws(HostError) -> [ScanReport] {
        var reports: [ScanReport] = []
        while let scanner, reports.count < 10_000, let report = try scanner.nextReport(timeout: .zero) { reports.append(report) }
        return reports
    }

    public func next(until deadline: Double) throws(HostError) -> Observation {
        let remaining = deadline - now
        guard remaining > 0 else { return .deadline }
        let timeout = Duration.microseconds(Int64(remaining * 1_000_000))
        let stage = wake()
        let waitOn: Int32?
        if stage.isEmpty {
            waitOn = interrupt
        } else {
            both.watch(Set([interrupt].compactMap { $0 } + stage))
            waitOn = both.descriptor
        }
        if let scanner {
            if let report = try scanner.nextReport(timeout: timeout, interrupt: waitOn) { return .report(report) }
        } else {
            // Nothing to read: sleep until the deadline, the signal or the stage's input.
            _ = Poll.pause(timeout, interrupt: waitOn)
        }
        if let interrupt, Descriptor(interrupt).isReadable { return .interrupted }
        return .deadline
    }
}
