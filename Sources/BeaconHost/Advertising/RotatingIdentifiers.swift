// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

extension Beacon {
    /// The Eddystone-EID frame this host computes and moves (one with an identity), nil for any
    /// other beacon.
    package var rotatingIdentifier: EddystoneEID? {
        if case let .eddystone(.eid(frame)) = self, frame.source != nil { frame } else { nil }
    }
}

/// One Eddystone-EID beacon in an `IdentifierSchedule`.
struct IdentifierEntry {
    /// When, on the caller's clock, the counter read `originCounter`.
    var origin: Double
    var originCounter: UInt32
    /// The frame last given to the caller to put on the air.
    var frame: EddystoneEID
    /// When to try again to put `frame` on the air, after a failure.
    var retry: Double?

    /// When it is next due: its identifier changes, or its failed frame is tried again.
    var due: Double? {
        guard let source = frame.source, let next = source.identity.nextRotation(after: source.counter) else {
            return retry
        }
        let rotation = origin + Double(next - originCounter)
        return retry.map { min($0, rotation) } ?? rotation
    }
}

extension BeaconParameters {
    /// A beacon's own parameters as it goes on the air: an Eddystone-EID beacon given no address
    /// gets a non-resolvable one of its own, renewed with each identifier, where the backend
    /// makes addresses (HCI advertising sets) and the advertising is not connectable.
    package func forBeacon(_ beacon: Beacon, makesAddresses: Bool, connectable: Bool) -> BeaconParameters {
        guard makesAddresses, address == nil, beacon.rotatingIdentifier != nil, !(self.connectable ?? connectable) else { return self }
        var own = self
        own.address = .generatedNonResolvable
        return own
    }
}

extension AdvertisingOptions {
    /// The options with each Eddystone-EID beacon that gets a set of its own (`sets` of them
    /// there; legacy advertising: one, for a single beacon) given a non-resolvable address of
    /// its own where it names none (`BeaconParameters.forBeacon`): HCI advertising sets.
    package func givingRotatingIdentifiersAddresses(sets: Int) -> AdvertisingOptions {
        guard beacons.contains(where: { $0.rotatingIdentifier != nil }) else { return self }
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
