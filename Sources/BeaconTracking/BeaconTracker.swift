// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The beacons in range: one entry per beacon identity, with smoothed RSSI, distance and
/// proximity. Entries age out, and the table has a fixed capacity (the least recently seen
/// entries give way, an eighth of the table at a time), so memory stays bounded however many
/// beacons pass by.
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

        /// Metres from the smoothed RSSI and the beacon's measured power; nil when unknown.
        public var accuracy: Double? {
            guard let rssi = smoothedRSSI, let power = sighting.beacon.measuredPower else { return nil }
            return Ranging.accuracy(rssi: rssi, measuredPower: power)
        }

        public var proximity: Proximity { Proximity(accuracy: accuracy) }

        /// Records a sighting and returns the distance after it.
        mutating func update(_ sighting: BeaconSighting, at time: Double) -> Double? {
            self.sighting = sighting
            lastSeen = time
            reports += 1
            if let rssi = sighting.rssi { window.add(Int(rssi), at: time) } else { window.prune(now: time) }
            return accuracy
        }
    }

    public let windowLength: Double
    public let ageOut: Double
    public let capacity: Int
    public private(set) var entries: [BeaconIdentity: Entry] = [:]
    /// No entry was last seen before this (entries only grow newer), so `prune` need not look
    /// at the table until `now - ageOut` passes it.
    private var oldestBound = Double.infinity

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
        entries.values[record(sighting, at: time).index]
    }

    /// Records a sighting at `time` and returns the beacon's distance after it (`Entry.accuracy`),
    /// without copying the entry out.
    public mutating func observeAccuracy(_ sighting: BeaconSighting, at time: Double) -> Double? {
        record(sighting, at: time).accuracy
    }

    /// Records a sighting, changing a known beacon's entry where it is stored, and returns
    /// where the entry is and its distance after it.
    private mutating func record(_ sighting: BeaconSighting,
                                 at time: Double) -> (index: Dictionary<BeaconIdentity, Entry>.Index, accuracy: Double?) {
        let key = Self.identity(of: sighting)
        if let index = entries.index(forKey: key) {
            return (index, entries.values[index].update(sighting, at: time))
        }
        // A full table gives up its least recently seen eighth at once, so that a stream of
        // new beacons costs a sort per capacity / 8 of them rather than a scan each.
        if entries.count >= capacity {
            let evict = max(1, capacity / 8)
            let oldest = entries.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(evict)
            for (key, _) in oldest { entries.removeValue(forKey: key) }
        }
        oldestBound = min(oldestBound, time)
        var entry = Entry(sighting: sighting, window: RSSIWindow(length: windowLength),
                          firstSeen: time, lastSeen: time, reports: 0)
        let accuracy = entry.update(sighting, at: time)
        entries[key] = entry
        return (entries.index(forKey: key)!, accuracy)
    }

    /// Drops beacons not seen for `ageOut` seconds as of `now`. Cheap when none can have aged out.
    public mutating func prune(now: Double) {
        guard now - oldestBound >= ageOut else { return }
        entries = entries.filter { now - $0.value.lastSeen < ageOut }
        oldestBound = entries.values.lazy.map(\.lastSeen).min() ?? .infinity
    }

    /// The beacons in range, closest first; those of unknown distance last.
    public var ranged: [Entry] {
        entries.values.sorted { lhs, rhs in
            switch (lhs.accuracy, rhs.accuracy) {
            case let (a?, b?) where a != b: return a < b
            case (_?, nil): return true
            case (nil, _?): return false
            default: break
            }
            return Self.identity(of: lhs.sighting).description < Self.identity(of: rhs.sighting).description
        }
    }

    /// What makes two sightings the same beacon: its identifiers (telemetry, which changes
    /// with every frame, by sender address).
    public static func identity(of sighting: BeaconSighting) -> BeaconIdentity {
        if let key = sighting.beacon.trackingKey { return .key(key) }
        // Advertised, never decoded from the air.
        if case let .custom(custom) = sighting.beacon { return .data(custom.data.bytes) }
        // Any other format (telemetry, EID, a frame the codec does not decode, a registered
        // format) by what it states: the fields it marks as identifying, else (none, or its
        // content moves) its sender.
        return byItsFormat(sighting)
    }

    /// A beacon by its format's identifying fields, or by its format and sender where it marks
    /// none or its content moves (`BeaconFormat.identifiers`, `contentMoves`).
    static func byItsFormat(_ sighting: BeaconSighting) -> BeaconIdentity {
        let format = sighting.beacon.format
        let identifiers = format.contentMoves ? [] : format.identifiers
        return identifiers.isEmpty ? .sender(format.formatName.description, sighting.address)
            : .fields(format.formatName.description, identifiers)
    }
}

