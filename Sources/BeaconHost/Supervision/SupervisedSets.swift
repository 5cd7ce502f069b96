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
    /// The advertising core's beacons, named; changes go into the books only while they are
    /// off the air (`holding`), for the restore to put on the air.
    let advertiser: SlotSets
    private let session: any AdvertisingSession
    private var supervisor: Supervisor
    /// The supervisor's reports (off the air, waiting, back on the air, a restore that failed).
    private var events: [EmitterEvent] = []
    /// More was taken in than one `serve()` acts on: the next is due at once.
    private var backlog = false
    private var closed = false
    /// The HCI session, whose link (reopened after it closed) is closed with the sets.
    private var hciSession: HCISession?

    /// HCI advertising sets on `connection`, kept as `advertise`'s beacons are: the same
    /// session (`AdvertisingLaunch.session`), so a link that closes (an H4 bridge, a serial
    /// port, a user channel, an adapter unplugged) is opened again as `advertise`'s is.
    /// - Parameters:
    ///   - userChannel: the link is the user channel (reopened as one).
    ///   - bringingUp: `--up`, applied again to a kernel adapter that goes away and comes back.
    ///   - follows: the kernel adapter's address, when it was named by it.
    /// - Parameter advertiser: the advertising core, its beacons coming and going.
    public convenience init(advertiser: Advertiser, on connection: ControllerConnection, userChannel: Bool,
                            bringingUp: Bool = false, follows: BluetoothAddress? = nil) {
        self.init(advertiser: advertiser,
                  session: AdvertisingLaunch.session(advertiser, on: connection, userChannel: userChannel,
                                                     bringingUp: bringingUp, follows: follows),
                  device: connection.device.description)
    }

    /// HCI advertising sets kept by `session` (a test's scripted link).
    convenience init(advertiser: Advertiser, session: HCISession, device: String) {
        session.log = { [weak advertiser] in advertiser?.log?($0) }
        self.init(advertiser: SlotSets(advertiser), session: session as any AdvertisingSession, device: device)
        hciSession = session
    }

    /// The kernel's advertising instances, watched as `advertise`'s are (`ManagedSession`).
    public convenience init(instances session: ManagedSession, device: String) {
        let advertiser = session.advertiser
        session.log = { [weak advertiser] in advertiser?.log?($0) }
        self.init(advertiser: SlotSets(advertiser), session: session, device: device)
    }

    private init(advertiser: SlotSets, session: any AdvertisingSession, device: String) {
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
    public var nextDeadline: ContinuousClock.Instant { backlog ? .now : supervisor.nextDeadline }

    public var isOffAir: Bool { supervisor.isOffAir }

    /// Takes in what the controller sent and does what is due: a disruption takes the sets off
    /// the air (in the books), a restore puts them back.
    /// - Throws: `HostError` for a failure no restore can mend (the link closed).
    public func serve() throws(HostError) {
        backlog = try supervisor.takeIn()
        try supervisor.tick()
    }

    /// The supervisor's reports since the last call.
    public func takeEvents() -> [EmitterEvent] {
        defer { events.removeAll() }
        return events
    }

    public func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID {
        try change { () throws(HostError) in try advertiser.add(beacon, parameters: parameters) }
    }

    public func update(_ id: BeaconID, to beacon: Beacon) throws(HostError) {
        try change { () throws(HostError) in try advertiser.update(id, to: beacon) }
    }

    public func setParameters(_ id: BeaconID, to parameters: BeaconParameters) throws(HostError) {
        try change { () throws(HostError) in try advertiser.setParameters(id, to: parameters) }
    }

    public func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress {
        try change { () throws(HostError) in try advertiser.renewAddress(id) }
    }

    public func remove(_ id: BeaconID) throws(HostError) {
        try change { () throws(HostError) in try advertiser.remove(id) }
    }

    public func removeAll() throws(HostError) {
        // Off the air (or the link gone), the books are emptied; what is left on a controller
        // that comes back is the next run's to find.
        // (An adapter that is usable, the beacons off the air for a takeover or a reset, has
        // what is still ours removed: nothing of ours stays on the air after the run.)
        guard !supervisor.isOffAir else {
            if session.availability() == .usable, (try? advertiser.removeAll()) != nil { return }
            try hold { () throws(HostError) in try advertiser.removeAll() }
            return
        }
        try advertiser.removeAll()
    }

    public var hasFreeSet: Bool { advertiser.hasFreeSet }

    public var takingTurns: [BeaconID] { advertiser.takingTurns }

    /// Closes what the session watches besides the link (the kernel's reset and takeover watchers).
    public func close() {
        (session as? ManagedSession)?.closeWatchers()
        guard !closed else { return }
        closed = true
        hciSession?.closeLink()
    }

    deinit { close() }

    /// Makes `body` on the air, or, off the air, in the books only. One that a disruption cuts
    /// short is made again in the books, and the disruption handed to the supervisor.
    private func change<T>(_ body: () throws(HostError) -> T) throws(HostError) -> T {
        if supervisor.isOffAir { return try hold(body) }
        let seen = session.disruptionsSeen.count
        do {
            return try body()
        } catch {
            guard session.interruption(since: seen, failure: error) != nil else { throw error }
            let result = try hold(body)
            try serve()
            return result
        }
    }

    private func hold<T>(_ body: () throws(HostError) -> T) throws(HostError) -> T {
        advertiser.holding = true
        defer { advertiser.holding = false }
        return try body()
    }
}
