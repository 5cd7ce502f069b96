// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking

/// Which reports to show, decided per report: a region, a beacon format, a least RSSI, the
/// advertisers' addresses.
public struct ScanFilter: Sendable {
    /// The formats shown: every one (`any`), a format by its name (`eddystone-uid`, or a
    /// registered format's), or a family of them (`eddystone`: every name `eddystone-...`).
    /// A literal names it as it is (`ScanFilter(format: "ibeacon")`); `init?(named:)` checks the name.
    public struct Format: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let name: String

        /// Every beacon, and reports without one (shown raw).
        public static let any = Format(checked: "any")

        /// The choice of that name (in any case), or nil where no format or family has it.
        public init?(named name: String) {
            let name = name.lowercased()
            guard Self.choices.contains(name) else { return nil }
            self.name = name
        }

        private init(checked name: String) { self.name = name }

        public init(stringLiteral name: String) { self.name = name.lowercased() }

        /// The names a choice takes: every format's (`BeaconFormats.allNames`), each family
        /// before its first member, then `any`.
        public static var choices: [String] {
            var names: [String] = []
            for name in BeaconFormats.allNames {
                if let dash = name.firstIndex(of: "-"), !names.contains(String(name[..<dash])) { names.append(String(name[..<dash])) }
                names.append(name)
            }
            return names + ["any"]
        }

        /// Whether a beacon of the format of that name is shown (asked per report: nothing is
        /// allocated to answer).
        public func shows(_ formatName: String) -> Bool {
            if self == .any || formatName == name { return true }
            // A family: the name, then a dash.
            let format = formatName.utf8
            return format.starts(with: name.utf8) && format.dropFirst(name.utf8.count).first == UInt8(ascii: "-")
        }

        public var description: String { name }
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
        return format.shows(sighting.beacon.format.formatName.description)
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
