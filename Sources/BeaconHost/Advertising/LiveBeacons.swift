// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// An advertiser's own books about its beacons: what a failed change puts back.
struct LiveState {
    var entries: [BeaconEntry]
    var nextID: BeaconID
    var plan: AdvertisingPlan?
    var rotationIndex: Int
}

/// An advertiser whose changes are undone in its books when they fail. A change is made
/// through its books (`BeaconSlots`) on a backend: the advertiser itself (on the air), or
/// `InBooks` (the books only, for the restore to put on the air). It sends the commands; what
/// changes and when is `LiveBeacons`' (the one implementer of `LiveAdvertising`).
protocol RevertibleAdvertiser: AnyObject, SlotBackend {
    /// The beacons as its books have them, in order.
    var running: [RunningBeacon] { get }
    /// Its books: the beacons, the plan, the turn, the leftovers (`BeaconSlots.revert`: a set
    /// or instance that a failed change had created stays the advertiser's, as a leftover that
    /// the next restore or stop removes).
    var slots: BeaconSlots { get }
    var log: ((String) -> Void)? { get set }
    /// Whether another beacon can have a slot of its own now.
    var hasFreeSet: Bool { get }
    /// Whether it gives beacons addresses of their own (HCI sets; the kernel chooses its own).
    var makesAddresses: Bool { get }
    var options: AdvertisingOptions { get }
}

/// A change to the beacons, made on `backend` (the advertiser, or `InBooks`).
typealias BeaconChange<T> = (_ backend: any SlotBackend) throws(HostError) -> T

/// What a change to running beacons becomes when a disruption cuts it short: one rule, with
/// the two answers its callers need.
enum CutShortChange {
    /// Undone in the books and thrown as `HostError.interrupted` (`LiveBeacons`: the control
    /// socket holds the request and makes it again once the beacons are back, so its client
    /// gets the controller's own answer).
    case undo
    /// Made again in the books only, for the restore to put on the air (a scenario's stage,
    /// `EmitterRun.live`: its timeline does not wait for the beacons).
    case keepInBooks
}

extension RevertibleAdvertiser {
    /// The beacons' ids, in order.
    var ids: [BeaconID] { slots.entries.map(\.id) }

    /// Runs `change`; when it throws, the books are as they were before it.
    func atomically<T>(_ change: () throws(HostError) -> T) throws(HostError) -> T {
        let before = slots.liveState
        do {
            return try change()
        } catch {
            slots.revert(to: before)
            throw error
        }
    }

    /// Makes `change` on the air, as a transaction.
    func make<T>(_ change: BeaconChange<T>) throws(HostError) -> T {
        try atomically { () throws(HostError) in try change(self) }
    }

    /// Makes `change` in the books only (`InBooks`: nothing sent), as a transaction: for
    /// beacons off the air, whose restore puts the books on the air.
    func inBooks<T>(_ change: BeaconChange<T>) throws(HostError) -> T {
        let books = InBooks(self)
        return try atomically { () throws(HostError) in try change(books) }
    }

    /// Makes `change` on the air as a transaction; one that a disruption `session` saw cuts
    /// short is undone, then thrown or kept in the books as `cutShort` says.
    /// - Returns: the change's result, and whether a disruption cut it short (kept in the books).
    func change<T>(in session: any AdvertisingSession, cutShort rule: CutShortChange,
                   _ change: BeaconChange<T>) throws(HostError) -> (result: T, cutShort: Bool) {
        let seen = session.disruptionsSeen.count
        do {
            return (try make(change), false)
        } catch {
            guard let disruption = session.interruption(since: seen, failure: error) else { throw error }
            switch rule {
            case .undo: throw .interrupted(by: disruption, error)
            case .keepInBooks: return (try inBooks(change), true)
            }
        }
    }

    // The changes, each on a backend.

    func update(_ index: Int, to beacon: Beacon, parameters: BeaconParameters?,
                on backend: some SlotBackend) throws(HostError) {
        try slots.update(index, to: beacon, parameters: parameters, on: backend)
    }

    func add(_ beacon: Beacon, parameters: BeaconParameters, on backend: some SlotBackend) throws(HostError) -> Int {
        // An EID beacon with a set of its own gets an address of its own to renew with each identifier.
        let onOwnSlot = parameters.forBeacon(beacon, makesAddresses: makesAddresses, connectable: options.connectable)
        return try slots.add(beacon, parameters: parameters, onOwnSlot: onOwnSlot == parameters ? nil : onOwnSlot, on: backend)
    }

    func remove(_ index: Int, on backend: some SlotBackend) throws(HostError) {
        try slots.remove(index, on: backend)
    }

    func renewAddress(_ index: Int, with content: Beacon?, on backend: some SlotBackend) throws(HostError) -> BluetoothAddress {
        try slots.renewAddress(index, with: content, on: backend)
    }

    func show(_ index: Int, _ frame: Beacon, on backend: some SlotBackend) throws(HostError) {
        try slots.show(index, frame, on: backend)
    }
}

/// A running session's beacons, changed as transactions (`advertise --control`, a reload, the
/// moving telemetry, a scenario's stage, the library): the list and the air change together or
/// not at all. The one way a running beacon is changed.
///
/// A change that the controller or kernel refuses leaves the beacons as they were: each
/// advertiser undoes its books, and its changes are made so that a refused command has
/// changed nothing on the air (`Advertiser`, `ManagedAdvertiser`). A change that a disruption
/// interrupts (a Hardware Error, a reset, the link lost while it ran, a set the controller no
/// longer knows) is undone in the books too and, as `Stage` says, thrown as
/// `HostError.interrupted` (the supervisor is putting the beacons back as the books have them,
/// after which the same change can be made again) or made in the books for the restore.
package final class LiveBeacons: LiveAdvertising {
    /// How changes go on a scenario's stage, whose timeline does not wait for the beacons
    /// (`EmitterRun.live`): beside the supervision every run has, the books come first.
    package struct Stage {
        /// Whether the beacons are off the air now: changes then go into the books only.
        var isOffAir: () -> Bool
        /// Called after a change that a disruption cut short (kept in the books), for the
        /// supervisor to take the disruption in.
        var cutShort: () throws(HostError) -> Void

        package init(isOffAir: @escaping () -> Bool, cutShort: @escaping () throws(HostError) -> Void) {
            self.isOffAir = isOffAir
            self.cutShort = cutShort
        }
    }

    private let advertiser: any RevertibleAdvertiser
    private let session: any AdvertisingSession
    /// nil: `advertise`'s and the library's rule (a change cut short is undone and thrown; the
    /// last beacon stays). Set: a scenario's stage (changes kept in the books; the last one may go).
    private let stage: Stage?

    init(advertiser: any RevertibleAdvertiser, session: any AdvertisingSession, stage: Stage? = nil) {
        self.advertiser = advertiser
        self.session = session
        self.stage = stage
    }

    public var running: [RunningBeacon] { advertiser.running }

    public func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError) {
        try change { backend throws(HostError) in
            try advertiser.update(try advertiser.slots.index(id), to: beacon, parameters: parameters, on: backend)
        }
    }

    public func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID {
        try change { backend throws(HostError) in
            let index = try advertiser.add(beacon, parameters: parameters, on: backend)
            return advertiser.slots.entries[index].id
        }
    }

    @discardableResult
    public func renewAddress(_ id: BeaconID, with content: Beacon?) throws(HostError) -> BluetoothAddress {
        try change { backend throws(HostError) in
            try advertiser.renewAddress(try advertiser.slots.index(id), with: content, on: backend)
        }
    }

    /// Takes beacon `id` off the air; not the last one (stopping is how advertising stops),
    /// except on a scenario's stage, whose beacons come and go (one already gone: nothing).
    public func remove(_ id: BeaconID) throws(HostError) {
        guard stage == nil else {
            guard advertiser.slots.entries.contains(where: { $0.id == id }) else { return }
            return try change { backend throws(HostError) in try advertiser.remove(try advertiser.slots.index(id), on: backend) }
        }
        _ = try advertiser.slots.index(id)
        try BeaconRemoval.check(id, of: advertiser.slots.entries.count)
        try change { backend throws(HostError) in try advertiser.remove(try advertiser.slots.index(id), on: backend) }
    }

    public func show(_ id: BeaconID, _ frame: Beacon) throws(HostError) {
        try change { backend throws(HostError) in try advertiser.show(try advertiser.slots.index(id), frame, on: backend) }
    }

    /// Adds `beacons` as one change, all or none: on HCI advertising sets, each readied off
    /// the air and all enabled by one command (`Advertiser.batched`).
    /// - Returns: the new beacons' ids, in order.
    public func add(_ beacons: [(beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) -> [BeaconID] {
        try change { backend throws(HostError) in
            try backend.batched { () throws(HostError) in
                var ids: [BeaconID] = []
                for (beacon, parameters) in beacons {
                    let index = try advertiser.add(beacon, parameters: parameters, on: backend)
                    ids.append(advertiser.slots.entries[index].id)
                }
                return ids
            }
        }
    }

    /// Takes `ids` off the air as one change, all or none (HCI sets: disabled by one command);
    /// as `remove(_:)` says of the last one and of one already gone.
    public func remove(_ ids: [BeaconID]) throws(HostError) {
        if stage == nil {
            for id in ids { _ = try advertiser.slots.index(id) }
            if let first = ids.first, Set(ids).count >= advertiser.slots.entries.count { try BeaconRemoval.check(first, of: 1) }
        }
        let present = ids.filter { id in advertiser.slots.entries.contains { $0.id == id } }
        guard !present.isEmpty else { return }
        try change { backend throws(HostError) in
            try backend.batched { () throws(HostError) in
                for id in present { try advertiser.remove(try advertiser.slots.index(id), on: backend) }
            }
        }
    }

    /// Takes every beacon off the air, the last one too (a scenario's end), trying each (the
    /// first error is thrown), then what no beacon uses. Off the air (or the link gone) the
    /// books are emptied: what is left on a controller that comes back is the next run's to
    /// find; an adapter usable again while the beacons are still off the air (a takeover, a
    /// reset) has what is still ours removed, so that nothing of ours stays on the air.
    public func removeAll() throws(HostError) {
        let onAir = { [advertiser] (change: BeaconChange<Void>) throws(HostError) in try advertiser.make(change) }
        guard stage?.isOffAir() == true else { return try removeEach(through: onAir) }
        if session.availability() == .usable, (try? removeEach(through: onAir)) != nil { return }
        try removeEach { [advertiser] (change: BeaconChange<Void>) throws(HostError) in try advertiser.inBooks(change) }
    }

    /// Removes every beacon, each a change `make` makes (on the air, or in the books), trying
    /// each; then what no beacon uses.
    private func removeEach(through make: (BeaconChange<Void>) throws(HostError) -> Void) throws(HostError) {
        var first: HostError?
        for id in advertiser.ids.reversed() {
            do {
                try make { [advertiser] backend throws(HostError) in
                    guard let index = try? advertiser.slots.index(id) else { return }
                    try advertiser.remove(index, on: backend)
                }
            } catch {
                first = first ?? error
            }
        }
        try? make { backend in backend.removeLeftovers() }
        if let first { throw first }
    }

    /// Removes the sets a batch left idle for a beacon added next, once they have waited.
    func releaseIdleSets() { advertiser.releaseIdleSets() }

    /// Whether another beacon can have a set of its own now (else an added one takes turns).
    public var hasFreeSet: Bool { advertiser.hasFreeSet }

    /// The beacons that take turns on the last set now, in their order; empty where every
    /// beacon has a set of its own.
    public var takingTurns: [BeaconID] {
        let ids = advertiser.ids
        guard let first = advertiser.slots.plan?.firstTurn, first < ids.count else { return [] }
        return Array(ids[first...])
    }

    /// Makes `body` on the air as a transaction. On a stage, off the air it goes into the books
    /// only, and one that a disruption cuts short is kept in the books.
    func change<T>(_ body: BeaconChange<T>) throws(HostError) -> T {
        guard let stage else { return try advertiser.change(in: session, cutShort: .undo, body).result }
        if stage.isOffAir() { return try advertiser.inBooks(body) }
        let (result, cutShort) = try advertiser.change(in: session, cutShort: .keepInBooks, body)
        if cutShort { try stage.cutShort() }
        return result
    }
}

extension AdvertisingSession {
    /// The disruption that cut a change or a rotation short, nil for a plain refusal: one the
    /// session saw since its `disruptionsSeen.count` was `seen`, or one the failure itself
    /// shows (a Hardware Error, a lost link, a set the controller no longer knows).
    func interruption(since seen: Int, failure: HostError) -> Disruption? {
        if disruptionsSeen.count == seen { catchUp(after: failure) }
        if disruptionsSeen.count != seen, let last = disruptionsSeen.last { return last }
        switch failure {
        case let .hardwareError(code): return .hardwareError(code: code)
        case let .transport(_, device): return .linkClosed(device)
        default: return nil
        }
    }
}

/// A session's advertiser as the session protocol names it (`AdvertisingSession.changer`):
/// what its beacons' changes go through.
package struct BeaconChanger {
    let advertiser: any RevertibleAdvertiser

    init(_ advertiser: any RevertibleAdvertiser) { self.advertiser = advertiser }
}

extension AdvertisingSession {
    /// The beacons, changed as transactions.
    package var live: LiveBeacons { beacons(onStage: nil) }

    /// Its beacons, changed as transactions: as `advertise` and the library change them (nil),
    /// or on a scenario's stage (`EmitterRun.live`).
    package func beacons(onStage stage: LiveBeacons.Stage?) -> LiveBeacons {
        LiveBeacons(advertiser: changer.advertiser, session: self, stage: stage)
    }
}

extension HCISession {
    package var changer: BeaconChanger { BeaconChanger(advertiser) }

    package func closeOwn() { closeLink() }
}

extension ManagedSession {
    package var changer: BeaconChanger { BeaconChanger(advertiser) }

    package func closeOwn() { closeWatchers() }
}
