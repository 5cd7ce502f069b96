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
    /// The options with each beacon whose motion renews its address (Eddystone-EID) given a
    /// non-resolvable address of its own where it names none (`BeaconParameters.forBeacon`), on
    /// HCI advertising sets: one with a set of its own (`sets` of them there; legacy
    /// advertising: one, for a single beacon), and one taking turns on the last where every
    /// beacon in the turns then goes out from a random address (the turns' rule,
    /// `BeaconParameters.firstUnableToTakeTurns`), put on the set with its data at its turn.
    /// Otherwise one taking turns goes out from the set's address, and says so as it moves.
    package func givingRotatingIdentifiersAddresses(sets: Int) -> AdvertisingOptions {
        guard beacons.contains(where: \.renewsAddressAsItMoves) else { return self }
        var options = self
        var own = beaconParameters.count == beacons.count ? beaconParameters : beacons.map { _ in .run }
        let ownSets = mode == .legacy || sets <= 1 ? (beacons.count == 1 ? 1 : 0) : sets
        for index in own.indices where index < ownSets {
            own[index] = own[index].forBeacon(beacons[index], makesAddresses: true, connectable: connectable)
        }
        // The beacons beyond the sets share the last (all of them, with one set or legacy advertising).
        let firstTurn = ownSets == 0 ? 0 : ownSets - 1
        if beacons.count > max(ownSets, 1), firstTurn < own.count {
            var turns = own
            for index in own.indices where index >= firstTurn {
                turns[index] = own[index].forBeacon(beacons[index], makesAddresses: true, connectable: connectable)
            }
            if BeaconParameters.firstUnableToTakeTurns(Array(turns[firstTurn...]), runAddressIsRandom: address != .publicAddress) == nil {
                own = turns
            }
        }
        options.beaconParameters = own
        return options
    }
}
