// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// An advertiser's own books about its beacons: what a failed change puts back.
struct LiveState {
    var entries: [BeaconEntry]
    var nextID: BeaconID
    var plan: AdvertisingPlan?
    var rotationIndex: Int
}

/// An advertiser whose changes (`LiveAdvertising`) are undone in its books when they fail. A
/// change is made through its books (`BeaconSlots`) on a backend: the advertiser itself (on
/// the air), or `InBooks` (the books only, for the restore to put on the air).
protocol RevertibleAdvertiser: LiveAdvertising, SlotBackend {
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
    /// `SupervisedSets`: its timeline does not wait for the beacons).
    case keepInBooks
}

extension RevertibleAdvertiser {
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

    func renewAddress(_ index: Int, on backend: some SlotBackend) throws(HostError) -> BluetoothAddress {
        try slots.renewAddress(index, on: backend)
    }

    func show(_ index: Int, _ frame: Beacon, on backend: some SlotBackend) throws(HostError) {
        try slots.show(index, frame, on: backend)
    }
}

/// A running session's beacons, changed as transactions (`advertise --control`, a reload, the
/// moving telemetry): the list and the air change together or not at all.
///
/// A change that the controller or kernel refuses leaves the beacons as they were: each
/// advertiser undoes its books, and its changes are made so that a refused command has
/// changed nothing on the air (`Advertiser`, `ManagedAdvertiser`). A change that a disruption
/// interrupts (a Hardware Error, a reset, the link lost while it ran, a set the controller no
/// longer knows) is undone in the books
/// too and thrown as `HostError.interrupted`: the supervisor is putting the beacons back as
/// the books have them, after which the same change can be made again.
public final class LiveBeacons: LiveAdvertising {
    private let advertiser: any RevertibleAdvertiser
    private let session: any AdvertisingSession

    init(advertiser: any RevertibleAdvertiser, session: any AdvertisingSession) {
        self.advertiser = advertiser
        self.session = session
    }

    public var beacons: [Beacon] { advertiser.beacons }
    public var parameters: [BeaconParameters] { advertiser.parameters }
    public var ids: [BeaconID] { advertiser.ids }
    public var ownAddresses: [BluetoothAddress?] { advertiser.ownAddresses }

    public func update(_ index: Int, to beacon: Beacon) throws(HostError) {
        try update(index, to: beacon, parameters: nil)
    }

    public func update(_ index: Int, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError) {
        try change { backend throws(HostError) in try advertiser.update(index, to: beacon, parameters: parameters, on: backend) }
    }

    public func add(_ beacon: Beacon) throws(HostError) -> Int {
        try add(beacon, parameters: .run)
    }

    public func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> Int {
        try change { backend throws(HostError) in try advertiser.add(beacon, parameters: parameters, on: backend) }
    }

    @discardableResult
    public func renewAddress(_ index: Int) throws(HostError) -> BluetoothAddress {
        try change { backend throws(HostError) in try advertiser.renewAddress(index, on: backend) }
    }

    /// Takes beacon `index` off the air; not the last one (stopping is how advertising stops).
    public func remove(_ index: Int) throws(HostError) {
        try BeaconRemoval.check(index, of: advertiser.beacons.count)
        try change { backend throws(HostError) in try advertiser.remove(index, on: backend) }
    }

    public func show(_ index: Int, _ frame: Beacon) throws(HostError) {
        try change { backend throws(HostError) in try advertiser.show(index, frame, on: backend) }
    }

    private func change<T>(_ body: BeaconChange<T>) throws(HostError) -> T {
        try advertiser.change(in: session, cutShort: .undo, body).result
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

extension HCISession {
    /// The beacons, changed as transactions.
    public var live: LiveBeacons { LiveBeacons(advertiser: advertiser, session: self) }
}

extension ManagedSession {
    /// The beacons, changed as transactions.
    public var live: LiveBeacons { LiveBeacons(advertiser: advertiser, session: self) }
}
