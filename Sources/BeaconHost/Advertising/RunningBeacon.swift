// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One beacon of a running emitter, as one value: the id the core gave it, its content, its
/// own parameters (`.run`: the run's) and the random address of its own its set advertises
/// from (nil: none of its own).
public struct RunningBeacon: Sendable, Hashable {
    public var id: BeaconID
    public var beacon: Beacon
    public var parameters: BeaconParameters
    public var ownAddress: BluetoothAddress?

    public init(id: BeaconID, beacon: Beacon, parameters: BeaconParameters = .run, ownAddress: BluetoothAddress? = nil) {
        self.id = id
        self.beacon = beacon
        self.parameters = parameters
        self.ownAddress = ownAddress
    }
}
