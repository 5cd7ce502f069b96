// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A running emitter's beacons changed while it advertises (`advertise --control`, a
/// scenario's stage, the library), each named by its id: each change is made on the air in
/// place, or not at all (an error, and the beacons as they were).
public protocol LiveAdvertising: AnyObject {
    /// The beacons advertised now (or waiting for their turn), in order: the first ones as
    /// given, each added one after them; a beacon keeps its id while others come and go.
    var running: [RunningBeacon] { get }
    /// Changes beacon `id`'s data and its own parameters (nil: kept) together, or neither.
    func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError)
    /// Adds a beacon with parameters of its own (`.run`: the run's).
    /// - Returns: the new beacon's id.
    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID
    /// Gives beacon `id`, whose address is made up, a new one of the same kind on its set.
    /// - Returns: the new address.
    @discardableResult
    func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress
    func remove(_ id: BeaconID) throws(HostError)
    /// Puts another frame on beacon `id`'s set for now, the beacon unchanged (interleaving).
    func show(_ id: BeaconID, _ frame: Beacon) throws(HostError)
}
