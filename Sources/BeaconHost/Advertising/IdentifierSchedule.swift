// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// When each Eddystone-EID beacon next gets a new identifier, on the caller's clock (seconds):
/// `BeaconMotions`' schedule. A beacon's counter starts at its frame's (`--clock`) when the
/// schedule first sees it (or sees it changed) and advances with the clock from there.
package struct IdentifierSchedule<Key: Hashable & Comparable> {
    private var entries: [Key: IdentifierEntry] = [:]
    private var clock = IdentifierClock()
    /// How long after a failure the frame is tried again, in seconds.
    package static var retryPeriod: Double { 1 }

    package init() {}

    /// Follows the beacons there are now (`frames`: each EID beacon's frame as it is on the
    /// air): one new, or changed by someone else (an update), starts from its counter at `now`;
    /// one gone is dropped. One whose last frame failed to go on the air is not new.
    package mutating func follow(_ frames: [Key: EddystoneEID], now: Double) {
        entries = entries.filter { frames[$0.key] != nil }
        for (key, frame) in frames {
            if let entry = entries[key], entry.frame == frame || entry.retry != nil { continue }
            entries[key] = IdentifierEntry(origin: now, originCounter: frame.source?.counter ?? 0, frame: frame)
        }
    }

    /// The first time an identifier changes (or one that failed is tried again); nil when none will.
    package var nextDue: Double? { entries.values.compactMap(\.due).min() }

    /// The beacons whose identifier changed by `now` (or whose last one is tried again), each
    /// with its frame for the counter now, taken as on the air (`failed` says otherwise).
    package mutating func takeDue(at now: Double) -> [(key: Key, frame: EddystoneEID)] {
        var due: [(key: Key, frame: EddystoneEID)] = []
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let at = entry.due, now >= at else { continue }
            let elapsed = UInt64(max(0, (now - entry.origin).rounded(.down)))
            let counter = UInt32(min(UInt64(UInt32.max), UInt64(entry.originCounter) + elapsed))
            let frame = clock.frame(entry.frame, at: counter)
            entries[key]?.frame = frame
            entries[key]?.retry = nil
            due.append((key, frame))
        }
        return due
    }

    /// The frame `takeDue` gave for `key` did not go on the air: tried again a moment later.
    package mutating func failed(_ key: Key, now: Double) {
        entries[key]?.retry = now + Self.retryPeriod
    }

    package mutating func remove(_ key: Key) { entries[key] = nil }

    package mutating func removeAll() { entries.removeAll() }
}
