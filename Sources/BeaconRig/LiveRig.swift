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

/// A scenario's beacons, by name, on the advertising core `advertise` goes through
/// (`BeaconSets`), on HCI advertising sets or the kernel's instances, changed in place. With
/// more beacons than sets the core's one rule holds: the beacons beyond share the last set,
/// taking turns on it every `rotationPeriod` seconds (the period the launch gave the core).
package final class SetStage: ScenarioStage {
    public let advertiser: any BeaconSets
    public let rotationPeriod: Double
    /// Called when beacons start or stop taking turns, for the user to see.
    public var note: ((String) -> Void)?

    private var beacons: [String: Beacon] = [:]
    /// Each beacon's own parameters (absent: the run's). A beacon with its own takes no turns.
    private var parameters: [String: BeaconParameters] = [:]
    /// When each beacon whose address rotates (`rotateAddress`) next gets a new one.
    private var renewals = RenewalSchedule<String>()
    /// The beacons on the air (or waiting for their turn), in the order they were added, with
    /// the id the core gave each.
    private var named: [(name: String, id: BeaconID)] = []
    /// The beacons taking turns as last noted.
    private var turns: [String] = []
    private var now = 0.0

    /// Eddystone-TLM beacons' counters move (`MovingTelemetry`), set anew every this many seconds.
    public static let telemetryPeriod = 5.0
    private let telemetry: MovingTelemetry
    /// The telemetry's periods on the stage's clock.
    private var telemetryPeriods = PeriodCount(period: SetStage.telemetryPeriod)
    /// When each Eddystone-EID beacon on the air next gets a new identifier.
    private var identifiers = IdentifierSchedule<String>()
    /// The EID beacons told that their address stays with each identifier, to say it once.
    private var addressKept: Set<String> = []

    /// - Parameter intervalUnits: the advertising interval (0.625 ms units), for TLM PDU counts.
    public init(advertiser: any BeaconSets, rotationPeriod: Double = 1, intervalUnits: UInt32 = 160) {
        self.advertiser = advertiser
        self.rotationPeriod = rotationPeriod
        telemetry = MovingTelemetry(intervalUnits: intervalUnits)
    }

    /// The beacons on the air now, and those waiting for their turn.
    public var onAir: [String] { named.map(\.name) }

    public func advertise(_ name: String, _ beacon: Beacon, parameters own: BeaconParameters = .run) throws(HostError) {
        if !advertiser.hasFreeSet, let last = named.last {
            // It would take turns on the last set, with the beacon there: refused in the
            // scenario's words before the core refuses it in its own.
            guard own == .run else { throw Self.noTurns(name) }
            guard parameters[last.name] == nil else { throw Self.noTurns(last.name, for: name) }
        }
        let id: BeaconID
        do {
            id = try advertiser.add(beacon, parameters: own)
        } catch {
            throw Self.naming(name, error)
        }
        beacons[name] = beacon
        parameters[name] = own == .run ? nil : own
        named.append((name, id))
        renewals.start(name, period: own.addressRotation, now: now)
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

    public func update(_ name: String, to beacon: Beacon) throws(HostError) {
        beacons[name] = beacon
        // One waiting for its turn shows the new fields at its turn; one not on the air, at its next advertise.
        if let id = id(name) { try advertiser.update(id, to: beacon) }
    }

    public func setParameters(_ name: String, _ own: BeaconParameters) throws(HostError) {
        let id = id(name)
        if let id {
            guard own == .run || !turns.contains(name) else { throw Self.noTurns(name) }
            try advertiser.setParameters(id, to: own)
        }
        // Not on the air: its next advertise uses them.
        parameters[name] = own == .run ? nil : own
        if id != nil {
            renewals.keep(name, period: own.addressRotation, now: now)
        }
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
        renewals.remove(name)
        guard let index = named.firstIndex(where: { $0.name == name }) else { return }
        try advertiser.remove(named[index].id)
        named.remove(at: index)
        noteTurns()
    }

    public func stopAll() throws(HostError) {
        renewals.removeAll()
        named.removeAll()
        turns.removeAll()
        try advertiser.removeAll()
    }

    public var nextDeadline: Double? {
        let moving = beacons.values.contains { if case .eddystone(.tlm) = $0 { true } else { false } } ? telemetryPeriods.next : nil
        // The supervisor's next check, restore or turn (its clock is the machine's, read now).
        let supervision = advertiser.nextDeadline.map { now + max(0, ContinuousClock.now.duration(to: $0).inSeconds) }
        identifiers.follow(identifierFrames, now: now)
        return [moving, supervision, renewals.nextDue, identifiers.nextDue].compactMap { $0 }.min()
    }

    public var wakeDescriptors: [Int32] { advertiser.wakeDescriptors }

    public func takeSupervisionEvents() -> [EmitterEvent] { advertiser.takeEvents() }

    /// The beacon `name` is now (a TLM beacon's counters move).
    public func beacon(named name: String) -> Beacon? { beacons[name] }

    public func tick(now: Double) throws(HostError) {
        self.now = now
        try advertiser.serve()
        try moveTelemetry(now: now)
        try renewAddresses(now: now)
        try rotateIdentifiers(now: now)
    }

    /// Each Eddystone-EID beacon's frame, for those on the air.
    private var identifierFrames: [String: EddystoneEID] {
        var frames: [String: EddystoneEID] = [:]
        for entry in named {
            if let frame = beacons[entry.name]?.rotatingIdentifier { frames[entry.name] = frame }
        }
        return frames
    }

    /// Gives each Eddystone-EID beacon whose period ended its next identifier, and a new
    /// address with it where the core made one up for it (HCI sets; through the kernel the
    /// kernel's address stays, said once).
    private func rotateIdentifiers(now: Double) throws(HostError) {
        identifiers.follow(identifierFrames, now: now)
        for (name, frame) in identifiers.takeDue(at: now) {
            try update(name, to: .eddystone(.eid(frame)))
            let eid = HexText.format(frame.eid)
            guard let id = id(name) else { continue }
            do {
                let address = try advertiser.renewAddress(id)
                note?("\(name): EID \(eid) from \(address)")
            } catch .refused {
                if addressKept.insert(name).inserted {
                    note?("\(name): EID \(eid); the address stays the one it has (a new one with each EID needs "
                          + "HCI advertising sets and a set of its own)")
                }
            }
        }
    }

    /// Gives each beacon whose address rotates and whose time has come a new address, on its
    /// running set, and says so.
    private func renewAddresses(now: Double) throws(HostError) {
        let periods = Dictionary(named.compactMap { entry in
            parameters[entry.name]?.addressRotation.map { (entry.name, $0) }
        }) { first, _ in first }
        for name in renewals.takeDue(at: now, periods: periods) {
            guard let id = id(name) else { continue }
            let address = try advertiser.renewAddress(id)
            note?("\(name): new address \(address)")
        }
    }

    /// Advances every TLM beacon's counters by the whole periods passed, on the air in place.
    private func moveTelemetry(now: Double) throws(HostError) {
        let periods = telemetryPeriods.passed(at: now)
        guard periods > 0 else { return }
        for (name, beacon) in beacons.sorted(by: { $0.key < $1.key }) {
            guard let moved = telemetry.moved(beacon, by: Double(periods) * Self.telemetryPeriod) else { continue }
            try update(name, to: moved)
        }
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

/// The real clock, and the reports of a second device scanning (or none: it only waits).
/// The wait is the one loop type's (`EventLoop`): `interrupt` (a signal's) ends it, the
/// scanner's link brings reports (a `ScanSource`), and one of `wake` (the stage's controller
/// link and watchers, as they are at each wait) ends it as a deadline come early.
public final class LiveObserver: ScenarioObserver {
    private let scan: ScanSource?
    private let loop: EventLoop
    /// Whether one of the stage's descriptors was readable in the last wait.
    private let stage: StageSource
    /// Reports read and not yet observed (the scan's handler adds to them).
    private let arrived = Arrivals()
    private let origin = ContinuousClock.now

    public init(scanner: AdvertisementScanner?, interrupt: Int32?, wake: @escaping () -> [Int32] = { [] }) {
        let stage = StageSource(descriptors: wake)
        self.stage = stage
        scan = scanner.map { [arrived] scanner in
            ScanSource(scanner: scanner) { report in
                arrived.reports.append(report)
                return true
            }
        }
        loop = EventLoop(interrupt: interrupt, sources: [stage] + [scan].compactMap { $0 }, what: "the scenario's wait")
    }

    deinit { loop.close() }

    public var now: Double {
        origin.duration(to: .now).inSeconds
    }

    public func queued() throws(HostError) -> [ScanReport] {
        var reports = arrived.reports
        arrived.reports = []
        while let scanner = scan?.scanner, reports.count < 10_000, let report = try scanner.nextReport(timeout: .zero) {
            reports.append(report)
        }
        return reports
    }

    public func next(until deadline: Double) throws(HostError) -> Observation {
        if !arrived.reports.isEmpty { return .report(arrived.reports.removeFirst()) }
        let end = origin + .microseconds(Int64((deadline * 1_000_000).rounded()))
        stage.woke = false
        let interrupted = try loop.run(until: end) { [self] in arrived.reports.isEmpty && !stage.woke && scan?.ended != true }
        if let failure = scan?.failure { throw failure }
        if interrupted { return .interrupted }
        if !arrived.reports.isEmpty { return .report(arrived.reports.removeFirst()) }
        return .deadline
    }

    /// The reports read and not yet taken (`next`, `queued`).
    package var unread: Int { arrived.reports.count }

    public func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool {
        for source in sources { loop.add(source) }
        // They leave the loop whatever ends the wait.
        defer { loop.remove(sources) }
        let interrupted = try loop.run(until: nil) { [scan] in busy() && scan?.ended != true }
        if let failure = scan?.failure { throw failure }
        return interrupted
    }
}

/// The reports a scan's handler has read and the observer not yet taken.
private final class Arrivals {
    var reports: [ScanReport] = []
}

/// The stage's descriptors in the observer's loop: readable, the wait ends (the stage has
/// something to take in); the stage reads them itself.
private final class StageSource: RunLoopSource {
    private let current: () -> [Int32]
    var woke = false

    init(descriptors: @escaping () -> [Int32]) {
        current = descriptors
    }

    var descriptors: [Int32] { current() }
    func serve() { woke = true }
}
