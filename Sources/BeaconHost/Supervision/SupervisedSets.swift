// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// A scenario's beacons kept on the air the way `advertise` keeps its beacons: the same
/// session watches the controller or the kernel (another program's reset, a Hardware Error, a
/// set the controller no longer knows, an instance removed or taken over, the adapter powered
/// off or unplugged, a link that closes) and the same supervisor puts the beacons back, as the
/// books have them, `Emitter.settleTime` after the adapter is usable again. Changes made while
/// they are off the air go into the books; a change that a disruption cuts short is kept in
/// the books too, and goes on the air with the restore.
///
/// The caller's loop wakes on `wakeDescriptors` (the session's sockets have input) and at
/// `nextDeadline`, and calls `serve()` then.
package final class SupervisedSets: BeaconSets {
    /// The advertising core; changes go into its books only (`InBooks`) while the beacons are
    /// off the air, for the restore to put on the air.
    let advertiser: any RevertibleAdvertiser
    private let session: any AdvertisingSession
    private var supervisor: Supervisor
    /// The supervisor's reports (off the air, waiting, back on the air, a restore that failed).
    private var events: [EmitterEvent] = []
    /// More was taken in than one `serve()` acts on: the next is due at once.
    private var backlog = false
    private var closed = false
    /// The HCI session, whose link (reopened after it closed) is closed with the sets.
    private var hciSession: HCISession?

    /// HCI advertising sets kept by `session` (the one `BeaconAdvertisement.start` opened, or a
    /// test's scripted link).
    convenience init(advertiser: Advertiser, session: HCISession, device: String) {
        session.log = { [weak advertiser] in advertiser?.log?($0) }
        self.init(advertiser: advertiser, session: session as any AdvertisingSession, device: device)
        hciSession = session
    }

    /// The kernel's advertising instances, watched as `advertise`'s are (`ManagedSession`).
    public convenience init(instances session: ManagedSession, device: String) {
        let advertiser = session.advertiser
        session.log = { [weak advertiser] in advertiser?.log?($0) }
        self.init(advertiser: advertiser, session: session, device: device)
    }

    private init(advertiser: any RevertibleAdvertiser, session: any AdvertisingSession, device: String) {
        self.advertiser = advertiser
        self.session = session
        var collected: (EmitterEvent) -> Void = { _ in }
        supervisor = Supervisor(session: session, failFast: false, device: device, report: { collected($0) })
        collected = { [weak self] in self?.events.append($0) }
    }

    public var log: ((String) -> Void)? {
        get { advertiser.log }
        set { advertiser.log = newValue }
    }

    /// The session's sockets now (the link, the kernel's watchers; new ones after a restore):
    /// readable when they have something for `serve()`. The caller's loop watches them beside its own.
    public var wakeDescriptors: [Int32] { closed ? [] : session.pollDescriptors }

    /// When `serve()` is next due without input: the adapter's next check, a restore, a turn
    /// (at once where more was taken in than it acted on).
    public var nextDeadline: ContinuousClock.Instant? { backlog ? .now : supervisor.nextDeadline }

    public var isOffAir: Bool { supervisor.isOffAir }

    /// Takes in what the controller sent and does what is due: a disruption takes the sets off
    /// the air (in the books), a restore puts them back.
    /// - Throws: `HostError` for a failure no restore can mend (the link closed).
    public func serve() throws(HostError) {
        backlog = try supervisor.takeIn()
        try supervisor.tick()
        if !supervisor.isOffAir { advertiser.releaseIdleSets() }
    }

    /// The supervisor's reports since the last call.
    public func takeEvents() -> [EmitterEvent] {
        defer { events.removeAll() }
        return events
    }

    /// The beacons, changed through the one path (`LiveBeacons`) under this supervision.
    private lazy var live = LiveBeacons(advertiser: advertiser, session: session, supervised: .init(
        isOffAir: { [weak self] in self?.supervisor.isOffAir ?? false },
        cutShort: { [weak self] () throws(HostError) in try self?.serve() }))

    public var running: [RunningBeacon] { advertiser.running }

    public func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID {
        try live.add(beacon, parameters: parameters)
    }

    public func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError) {
        try live.update(id, to: beacon, parameters: parameters)
    }

    public func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress {
        try live.renewAddress(id)
    }

    /// Takes the beacon off the air (the last one too: a scenario's beacons come and go).
    public func remove(_ id: BeaconID) throws(HostError) {
        try live.remove(id)
    }

    public func show(_ id: BeaconID, _ frame: Beacon) throws(HostError) {
        try live.show(id, frame)
    }

    public func add(_ beacons: [(beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) -> [BeaconID] {
        try live.add(beacons)
    }

    public func remove(_ ids: [BeaconID]) throws(HostError) {
        try live.remove(ids)
    }

    /// Removes every beacon, each a change `make` makes (on the air, or in the books), trying
    /// each; then what no beacon uses.
    private func removeEach(through make: (BeaconChange<Void>) throws(HostError) -> Void) throws(HostError) {
        var first: HostError?
        for id in advertiser.ids.reversed() {
            do {
                try make { backend throws(HostError) in
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

    public func removeAll() throws(HostError) {
        let onAir = { [advertiser] (change: BeaconChange<Void>) throws(HostError) in try advertiser.make(change) }
        // Off the air (or the link gone), the books are emptied; what is left on a controller
        // that comes back is the next run's to find.
        // (An adapter that is usable, the beacons off the air for a takeover or a reset, has
        // what is still ours removed: nothing of ours stays on the air after the run.)
        guard !supervisor.isOffAir else {
            if session.availability() == .usable, (try? removeEach(through: onAir)) != nil { return }
            try removeEach { (change: BeaconChange<Void>) throws(HostError) in try advertiser.inBooks(change) }
            return
        }
        try removeEach(through: onAir)
    }

    public var hasFreeSet: Bool { advertiser.hasFreeSet }

    public var takingTurns: [BeaconID] {
        let ids = advertiser.ids
        guard let first = advertiser.slots.plan?.firstTurn, first < ids.count else { return [] }
        return Array(ids[first...])
    }

    /// Closes what the session watches besides the link (the kernel's reset and takeover watchers).
    public func close() {
        (session as? ManagedSession)?.closeWatchers()
        guard !closed else { return }
        closed = true
        hciSession?.closeLink()
    }

    deinit { close() }
}
