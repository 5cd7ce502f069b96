// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A running emitter's beacons changed while it advertises (`advertise --control`, a
/// scenario's stage, the library), each named by its id: each change is made on the air in
/// place, or not at all (an error, and the beacons as they were).
public protocol LiveAdvertising: AnyObject {
    /// The beacons advertised now (or waiting for their turn), in order: the first ones as
    /// given, each added one after them; a beacon keeps its id while others come and go.
    var running: [RunningBeacon] { get }
    /// Changes beacon `id`'s data and its own parameters (nil: kept) together, or neither. New
    /// data goes on its running set or instance with no gap (one taking turns shows it at its
    /// turn); new parameters take a short gap for that beacon alone (HCI: its set disabled for
    /// them; the kernel: its instance added again).
    func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError)
    /// Adds a beacon with parameters of its own (`.run`: the run's): a set or instance of its
    /// own where one is free and the beacons are not taking turns; otherwise a place in the
    /// turns on the last, which a beacon with parameters of its own cannot take (refused).
    /// - Returns: the new beacon's id.
    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID
    /// Gives beacon `id`, whose address is made up (`static`, `non-resolvable`), a new one of
    /// the same kind on its set, and new content with it (`content`; nil: kept), in one step:
    /// new content goes out only from the new address, the set disabled around both (a short
    /// gap for that beacon), so that nothing heard pairs the old address with the new content
    /// or the reverse (an Eddystone-EID's next identifier); an address alone goes on in place
    /// where the controller allows it, else with the set disabled around it. Refused after the
    /// address went in, the beacon stays off the air until the next change (never out under
    /// half of its new identity). Through the kernel, which chooses addresses: refused.
    /// - Returns: the new address.
    @discardableResult
    func renewAddress(_ id: BeaconID, with content: Beacon?) throws(HostError) -> BluetoothAddress
    /// Takes beacon `id` off the air (its set or instance removed, or out of the turns; a set
    /// that falls free goes to the first beacon taking turns).
    func remove(_ id: BeaconID) throws(HostError)
    /// Puts another frame on beacon `id`'s set for now, the beacon unchanged (interleaving).
    func show(_ id: BeaconID, _ frame: Beacon) throws(HostError)
}

extension LiveAdvertising {
    /// The beacons' content, in order.
    public var beacons: [Beacon] { running.map(\.beacon) }
    /// The beacons' ids, in order.
    public var ids: [BeaconID] { running.map(\.id) }
    /// Each beacon's own parameters (`.run`: the run's), in order.
    public var parameters: [BeaconParameters] { running.map(\.parameters) }

    /// The beacon with id `id`, nil when there is none.
    public func running(_ id: BeaconID) -> RunningBeacon? { running.first { $0.id == id } }

    /// Changes beacon `id`'s own parameters (interval, TX power, address...), its data kept: a
    /// short gap on the air (HCI: the set disabled for them; the kernel: the instance added again).
    public func setParameters(_ id: BeaconID, to parameters: BeaconParameters) throws(HostError) {
        guard let now = running(id) else { throw .refused(Refusal(nil, .noSuchBeacon("\(id)"))) }
        try update(id, to: now.beacon, parameters: parameters)
    }

    /// Gives beacon `id` a new made-up address, its content kept (`renewAddress(_:with:)`).
    /// - Returns: the new address.
    @discardableResult
    public func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress {
        try renewAddress(id, with: nil)
    }

    /// Changes beacon `id`'s data in place, its parameters kept.
    public func update(_ id: BeaconID, to beacon: Beacon) throws(HostError) {
        try update(id, to: beacon, parameters: nil)
    }

    /// Adds a beacon with the run's parameters.
    /// - Returns: the new beacon's id.
    @discardableResult
    public func add(_ beacon: Beacon) throws(HostError) -> BeaconID {
        try add(beacon, parameters: .run)
    }

    /// Changes the beacons to `wanted` in place, position by position: a changed beacon gets
    /// new data on its set (and new parameters, where `parameters` gives each wanted beacon
    /// its own), more beacons are added, fewer are removed from the end.
    /// - Returns: how many were updated, added and removed.
    /// - Throws: `HostError` at the first refusal (the changes before it stay).
    @discardableResult
    public func apply(_ wanted: [Beacon], parameters wantedParameters: [BeaconParameters]? = nil) throws(HostError)
        -> (updated: Int, added: Int, removed: Int) {
        guard !wanted.isEmpty else { throw .refused(Refusal(nil, .noBeacons)) }
        let own = wantedParameters?.count == wanted.count ? wantedParameters : nil
        var counts = (updated: 0, added: 0, removed: 0)
        let current = running
        for (index, now) in current.prefix(wanted.count).enumerated()
        where now.beacon != wanted[index] || (own.map { $0[index] != now.parameters } ?? false) {
            try update(now.id, to: wanted[index], parameters: own?[index])
            counts.updated += 1
        }
        for (index, beacon) in wanted.enumerated().dropFirst(current.count) {
            _ = try add(beacon, parameters: own?[index] ?? .run)
            counts.added += 1
        }
        for gone in current.dropFirst(wanted.count).reversed() {
            try remove(gone.id)
            counts.removed += 1
        }
        return counts
    }
}
