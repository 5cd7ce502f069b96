// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Whether an emitter's own beacons are really on the air, judged from what a scanner on
/// another device hears (`advertise --canary`): a controller can accept every command and
/// radiate nothing.
///
/// Each beacon is known by its identifiers (`BeaconTracker.identity`; an Eddystone-TLM frame
/// by its kind, its counters move; other data by its bytes). A beacon not heard for `after`
/// while the emitter believes it on the air starts an episode: the first judgement hands back
/// `.notHeard` (the emitter reprograms the beacons once, through its restore), later ones
/// `.stillNotHeard` every `after` until it is heard (`.heardAgain`). While the emitter knows
/// its beacons are off the air (a reset, the adapter down), nothing is judged; once they are
/// back, each beacon has `after` again to be heard. Pure: the caller gives the time.
public struct CanaryWatch: Sendable {
    public enum Outcome: Hashable, Sendable {
        /// Beacons (their indices) that were not heard for `for` (the longest of them): to be
        /// reprogrammed, once per episode.
        case notHeard(beacons: [Int], for: Duration)
        /// A beacon still not heard, `for` since it was last heard (or watched).
        case stillNotHeard(beacon: Int, for: Duration)
        /// A beacon heard again after an episode: how long it had not been heard.
        case heardAgain(beacon: Int, after: Duration)
    }

    /// One beacon as the canary knows it.
    public struct BeaconState: Hashable, Sendable {
        /// How long ago it was last heard; nil: never since the watch began.
        public var lastHeard: Duration?
        /// Whether it is in a not-heard episode.
        public var unheard: Bool

        public init(lastHeard: Duration?, unheard: Bool) {
            self.lastHeard = lastHeard
            self.unheard = unheard
        }
    }

    private struct Entry {
        /// Since when the beacon has had its chance: the watch's start, the emitter's return.
        var watchedSince: ContinuousClock.Instant
        var lastHeard: ContinuousClock.Instant?
        var episode: Episode?
    }

    private struct Episode {
        /// Since when it has not been heard (its last hearing, or the watch's start).
        var since: ContinuousClock.Instant
        var nextReport: ContinuousClock.Instant
    }

    /// How long a beacon may go unheard while on the air.
    public let after: Duration
    private var keys: [BeaconIdentity] = []
    private var beacons: [Beacon] = []
    /// The layouts of the layout beacons among them, which a report is read with too.
    private var layouts: [(name: String, layout: BeaconLayout)] = []
    private var entries: [BeaconIdentity: Entry] = [:]
    /// Since when the emitter says its beacons are off the air (nil: on it).
    private var offAirSince: ContinuousClock.Instant?
    /// Reports heard, and of those, reports of our beacons.
    public private(set) var reportsHeard = 0
    public private(set) var ownReportsHeard = 0

    public init(beacons: [Beacon], after: Duration, now: ContinuousClock.Instant) {
        self.after = after
        track(beacons, now: now)
    }

    /// The default bound: a few intervals, at least 5 s; with beacons taking turns, one whole
    /// round of turns more (each beacon is on the air only for its turn).
    public static func defaultAfter(interval: Duration, rotating: Bool, beacons: Int, rotation: Duration) -> Duration {
        max(.seconds(5), interval * 10) + (rotating ? rotation * beacons : .zero)
    }

    /// The beacons advertised now (after a change through control or a reload): a new beacon
    /// has `after` from now to be heard; one that stays keeps its record.
    public mutating func track(_ beacons: [Beacon], now: ContinuousClock.Instant) {
        guard beacons != self.beacons else { return }
        self.beacons = beacons
        layouts = LayoutBeacon.layouts(of: beacons)
        keys = beacons.map(Self.key(of:))
        var kept: [BeaconIdentity: Entry] = [:]
        for key in keys { kept[key] = entries[key] ?? Entry(watchedSince: now) }
        entries = kept
    }

    /// A report heard by the canary's scanner. - Returns: `.heardAgain` for the beacons it ends an episode of.
    public mutating func heard(_ report: ScanReport, now: ContinuousClock.Instant) -> [Outcome] {
        reportsHeard += 1
        guard !report.isScanResponse else { return [] }
        var heardKeys: [BeaconIdentity] = []
        if entries[.data(report.data)] != nil { heardKeys.append(.data(report.data)) }
        if let sightings = try? report.sightings(reading: layouts) {
            for sighting in sightings {
                let key = Self.key(of: sighting)
                if entries[key] != nil, !heardKeys.contains(key) { heardKeys.append(key) }
            }
        }
        guard !heardKeys.isEmpty else { return [] }
        ownReportsHeard += 1
        var outcomes: [Outcome] = []
        for key in heardKeys {
            guard var entry = entries[key] else { continue }
            if let episode = entry.episode, let index = keys.firstIndex(of: key) {
                outcomes.append(.heardAgain(beacon: index, after: episode.since.duration(to: now)))
            }
            entry.episode = nil
            entry.lastHeard = now
            entries[key] = entry
        }
        return outcomes
    }

    /// The emitter reports its beacons off the air: nothing is judged until they are back.
    public mutating func offAir(now: ContinuousClock.Instant) {
        if offAirSince == nil { offAirSince = now }
    }

    /// The emitter reports its beacons back (restored, or reprogrammed): each has `after` from
    /// now to be heard; a beacon in an episode is next reported `after` from now.
    public mutating func back(now: ContinuousClock.Instant) {
        offAirSince = nil
        for (key, var entry) in entries {
            entry.watchedSince = now
            if let next = entry.episode?.nextReport { entry.episode?.nextReport = max(next, now + after) }
            entries[key] = entry
        }
    }

    /// What is due at `now`: beacons unheard for `after` start an episode (one `.notHeard` for
    /// all of them), beacons in an episode are reported again every `after`.
    public mutating func check(now: ContinuousClock.Instant) -> [Outcome] {
        guard offAirSince == nil else { return [] }
        var newlyUnheard: [Int] = []
        var longest = Duration.zero
        var outcomes: [Outcome] = []
        for (index, key) in keys.enumerated() {
            guard var entry = entries[key], !keys[..<index].contains(key) else { continue }
            if let episode = entry.episode {
                if now >= episode.nextReport {
                    outcomes.append(.stillNotHeard(beacon: index, for: episode.since.duration(to: now)))
                    entry.episode?.nextReport = now + after
                }
            } else {
                let since = max(entry.lastHeard ?? entry.watchedSince, entry.watchedSince)
                if since.duration(to: now) >= after {
                    let unheardSince = entry.lastHeard ?? entry.watchedSince
                    entry.episode = Episode(since: unheardSince, nextReport: now + after)
                    newlyUnheard.append(index)
                    longest = max(longest, unheardSince.duration(to: now))
                }
            }
            entries[key] = entry
        }
        if !newlyUnheard.isEmpty { outcomes.insert(.notHeard(beacons: newlyUnheard, for: longest), at: 0) }
        return outcomes
    }

    /// When `check` next has something to do (nil while off the air).
    public var nextCheck: ContinuousClock.Instant? {
        guard offAirSince == nil else { return nil }
        return entries.values.map { entry in
            entry.episode?.nextReport ?? (max(entry.lastHeard ?? entry.watchedSince, entry.watchedSince) + after)
        }.min()
    }

    /// Each beacon, in order, as heard at `now`.
    public func states(now: ContinuousClock.Instant) -> [BeaconState] {
        keys.map { key in
            let entry = entries[key]
            return BeaconState(lastHeard: entry?.lastHeard.map { $0.duration(to: now) }, unheard: entry?.episode != nil)
        }
    }

    /// A beacon's key: its identifiers; any frame of its format for a beacon whose content moves
    /// (Eddystone-TLM's counters, Eddystone-EID's identifier and address).
    static func key(of beacon: Beacon) -> BeaconIdentity {
        key(of: BeaconSighting(beacon: beacon))
    }

    static func key(of sighting: BeaconSighting) -> BeaconIdentity {
        let format = sighting.beacon.format
        if format.contentMoves { return .format(format.formatName.description) }
        return BeaconTracker.identity(of: sighting)
    }
}
