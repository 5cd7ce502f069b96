// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

extension Beacon {
    /// Whether its content moves with a new address at each step (`ContentMotion.renewsAddress`:
    /// Eddystone-EID's identifiers, where this host computes them).
    package var renewsAddressAsItMoves: Bool { motion?.renewsAddress ?? false }
}

extension BeaconParameters {
    /// A beacon's own parameters as it goes on the air: a beacon whose motion renews its address
    /// (Eddystone-EID) given no address gets a non-resolvable one of its own, renewed at each
    /// step, where the backend makes addresses (HCI advertising sets) and the advertising is
    /// not connectable.
    package func forBeacon(_ beacon: Beacon, makesAddresses: Bool, connectable: Bool) -> BeaconParameters {
        guard makesAddresses, address == nil, beacon.renewsAddressAsItMoves, !(self.connectable ?? connectable) else { return self }
        var own = self
        own.address = .generatedNonResolvable
        return own
    }
}

extension AdvertisingOptions {
    /// The options with each beacon whose motion renews its address (Eddystone-EID) that gets a
    /// set of its own (`sets` of them there; legacy advertising: one, for a single beacon) given
    /// a non-resolvable address of its own where it names none (`BeaconParameters.forBeacon`):
    /// HCI advertising sets.
    package func givingRotatingIdentifiersAddresses(sets: Int) -> AdvertisingOptions {
        guard beacons.contains(where: \.renewsAddressAsItMoves) else { return self }
        var options = self
        var own = beaconParameters.count == beacons.count ? beaconParameters : beacons.map { _ in .run }
        let ownSets = mode == .legacy || sets <= 1 ? (beacons.count == 1 ? 1 : 0) : sets
        for index in own.indices where index < ownSets {
            own[index] = own[index].forBeacon(beacons[index], makesAddresses: true, connectable: connectable)
        }
        options.beaconParameters = own
        return options
    }
}
