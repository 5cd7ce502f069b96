// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking

/// Which reports to show, decided per report: a region, a beacon format, a least RSSI, the
/// advertisers' addresses.
public struct ScanFilter: Sendable {
    public enum Format: String, CaseIterable, Sendable {
        case ibeacon, altbeacon, eddystone
        /// Every beacon, and reports without one (shown raw).
        case any
    }

    public let minRssi: Int?
    public let format: Format
    public let region: BeaconRegion?
    /// Only reports from these advertisers (empty: from any).
    public let addresses: Set<BluetoothAddress>

    /// A filter that passes everything.
    public static let none = ScanFilter()

    public init(minRssi: Int? = nil, format: Format = .any, region: BeaconRegion? = nil,
                addresses: Set<BluetoothAddress> = []) {
        self.minRssi = minRssi
        self.format = format
        self.region = region
        self.addresses = addresses
    }

    /// Whether reports from `address` pass (before anything else is looked at).
    public func accepts(address: BluetoothAddress) -> Bool {
        addresses.isEmpty || addresses.contains(address)
    }

    /// Whether a report's sighting passes.
    public func accepts(_ sighting: BeaconSighting, rssi: Int8?) -> Bool {
        guard strongEnough(rssi) else { return false }
        if let region, !region.matches(sighting.beacon) { return false }
        // Its format's name: "eddystone" takes every Eddystone frame ("eddystone-uid", ...).
        let name = sighting.beacon.format.formatName.description
        return format == .any || name == format.rawValue || (format == .eddystone && name.hasPrefix("eddystone-"))
    }

    /// Whether an advertiser passes (`replay`): its address, then the first beacon in its
    /// advertising data (or, holding none, as a report without one), at its RSSI.
    public func accepts(address: BluetoothAddress, data: [UInt8], rssi: Int?) -> Bool {
        guard accepts(address: address) else { return false }
        let strength = rssi.map { Int8(clamping: $0) }
        guard let parsed = try? AdvertisingData(parsing: data), let beacon = (try? Beacon.beacons(in: parsed))?.first else {
            return acceptsNoBeacon(rssi: strength)
        }
        return accepts(BeaconSighting(beacon: beacon), rssi: strength)
    }

    /// Whether it passes everything but the addresses.
    public var choosesByAddressOnly: Bool { minRssi == nil && format == .any && region == nil }

    /// Whether a report that holds no beacon passes (only when no beacon filter is set).
    public func acceptsNoBeacon(rssi: Int8?) -> Bool {
        strongEnough(rssi) && format == .any && region == nil
    }

    /// Whether a report's RSSI reaches --min-rssi (one without RSSI does not, when it is set).
    private func strongEnough(_ rssi: Int8?) -> Bool {
        guard let minRssi else { return true }
        return (rssi.map(Int.init) ?? Int.min) >= minRssi
    }
}
