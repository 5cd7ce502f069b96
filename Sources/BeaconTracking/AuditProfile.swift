// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What an audit holds a beacon to: a format's specification, or the common practice for it.
public enum AuditProfile: String, CaseIterable, Sendable {
    case ibeacon
    case altbeacon
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneTLM = "eddystone-tlm"

    /// The profile of the beacon a report's data carries, if any.
    public init?(heardIn data: [UInt8]) {
        guard let parsed = try? AdvertisingData(parsing: data), let beacon = try? Beacon.beacons(in: parsed).first else {
            return nil
        }
        // The profile named as its format is (none for a format without rules: Eddystone-EID).
        self.init(rawValue: beacon.format.formatName.description)
    }

    public var name: String {
        switch self {
        case .ibeacon: "iBeacon"
        case .altbeacon: "AltBeacon"
        case .eddystoneUID: "Eddystone-UID"
        case .eddystoneURL: "Eddystone-URL"
        case .eddystoneTLM: "Eddystone-TLM"
        }
    }

    var isEddystone: Bool { self == .eddystoneUID || self == .eddystoneURL || self == .eddystoneTLM }
}
