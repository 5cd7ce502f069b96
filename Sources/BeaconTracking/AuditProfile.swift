// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What an audit holds a beacon to: its format's specification (`BeaconSpecification`), which
/// the format states beside its layout; a format without one is held to what every beacon is.
public typealias AuditProfile = BeaconSpecification

extension BeaconSpecification {
    /// The profile of the beacon a report's data carries, if its format states one.
    public init?(heardIn data: [UInt8]) {
        guard let parsed = try? AdvertisingData(parsing: data), let beacon = try? Beacon.beacons(in: parsed).first,
              let specification = BeaconFormats.specification(named: beacon.format.formatName.description) else {
            return nil
        }
        self = specification
    }

    /// The profile `--profile NAME` names (a format's name, in any case).
    public init?(named name: String) {
        guard let specification = BeaconFormats.specification(named: name) else { return nil }
        self = specification
    }

    /// Every profile: the codec's formats' and the registered formats' that state one.
    public static var all: [BeaconSpecification] { BeaconFormats.specifications }
}
