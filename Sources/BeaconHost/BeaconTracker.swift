// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The beacons in range: one entry per beacon identity, with smoothed RSSI, distance and
/// proximity. Entries age out, and the table has a fixed capacity (the least recently seen
/// entry gives way), so memory stays bounded however many beacons pass by.
public struct BeaconTracker: Sendable {
    /// One beacon in range.
    public struct Entry: Sendable {
        public var sighting: BeaconSighting
        public var window: RSSIWindow
        public var firstSeen: Double
        public var lastSeen: Double
        public var reports: Int

        /// Smoothed RSSI in dBm, when any sample carried one.
        public var smoothedRSSI: Double? { window.mean }

        /// Metres from the smoothed RSSI and the beacon's measured power; -1 when unknown.
        public var accuracy: Double {
            guard let rssi = smoothedRSSI, let power = sighting.beacon.measuredPower else { return -1 }
            return Ranging.accuracy(rssi: rssi, measuredPower: power)
        }

        public var proximity: Proximity { Proximity(accuracy: accuracy) }
    }

    public let windowLength: Double
    public let ageOut: Double
    public let capacity: Int
    public private(set) var entries: [String: Entry] = [:]

    /// - Parameters:
    ///   - windowLength: seconds of RSSI averaged (20, as AltBeacon).
    ///   - ageOut: seconds after which an unseen beacon leaves the table.
    ///   - capacity: the most beacons tracked at once.
    public init(windowLength: Double = 20, ageOut: Double = 30, capacity: Int = 4096) {
        self.windowLength = windowLength
        self.ageOut = ageOut
        self.capacity = max(1, capacity)
    }

    /// Records a sighting at `time` and returns the beacon's entry after it.
    @discardableResult
    public mutating func observe(_ sighting: BeaconSighting, at time: Double) -> Entry {
        let key = Self.identity(of: sighting)
        var entry = entries[key] ?? Entry(sighting: sighting, window: RSSIWindow(length: windowLength),
                                          firstSeen: time, lastSeen: time, reports: 0)
        entry.sighting = sighting
        entry.lastSeen = time
        entry.reports += 1
        if let rssi = sighting.rssi { entry.window.add(Int(rssi), at: time) } else { entry.window.prune(now: time) }
        if entries[key] == nil && entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            entries.removeValue(forKey: oldest.key)
        }
        entries[key] = entry
        return entry
    }

    /// Drops beacons not seen for `ageOut` seconds as of `now`.
    public mutating func prune(now: Double) {
        entries = entries.filter { now - $0.value.lastSeen < ageOut }
    }

    /// The beacons in range, closest first; those of unknown distance last.
    public var ranged: [Entry] {
        entries.values.sorted { lhs, rhs in
            let (a, b) = (lhs.accuracy, rhs.accuracy)
            if (a < 0) != (b < 0) { return b < 0 }
            if a != b { return a < b }
            return Self.identity(of: lhs.sighting) < Self.identity(of: rhs.sighting)
        }
    }

    /// What makes two sightings the same beacon: its identifiers (telemetry, which changes
    /// with every frame, by sender address).
    public static func identity(of sighting: BeaconSighting) -> String {
        switch sighting.beacon {
        case let .iBeacon(b): "ibeacon \(b.proximityUUID.uuidString) \(b.major) \(b.minor)"
        case let .altBeacon(b): "altbeacon \(b.id1.uuidString) \(b.id2) \(b.id3)"
        case let .eddystone(.uid(f)): "eddystone-uid \(HexText.format(f.namespace)) \(HexText.format(f.instance))"
        case let .eddystone(.url(f)): "eddystone-url \(f.url)"
        case .eddystone: "eddystone \(sighting.address?.description ?? "?")"
        }
    }
}
