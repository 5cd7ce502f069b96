// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// When each of some beacons next gets a new address (`rotate-address=S`), in seconds on the
/// caller's clock (`BeaconMotions`).
package struct RenewalSchedule<Key: Hashable & Comparable> {
    private var next: [Key: Double] = [:]

    package init() {}

    /// The first time one is due; nil when none rotates.
    package var nextDue: Double? { next.values.min() }

    /// Follows `periods` (each rotating beacon's): one new to it is due a period from `now`,
    /// one no longer in it is dropped, the others keep their time.
    package mutating func follow(_ periods: [Key: Double], now: Double) {
        next = next.filter { periods[$0.key] != nil }
        for (key, period) in periods where next[key] == nil { next[key] = now + period }
    }

    /// Starts `key` anew: due a period from `now` (nil period: it no longer rotates).
    package mutating func start(_ key: Key, period: Double?, now: Double) {
        next[key] = period.map { now + $0 }
    }

    /// Keeps `key`'s time where it has one, else starts it (nil period: dropped).
    package mutating func keep(_ key: Key, period: Double?, now: Double) {
        next[key] = period.map { next[key] ?? now + $0 }
    }

    /// When `key` is next due; nil when it does not rotate.
    package func due(_ key: Key) -> Double? { next[key] }

    package mutating func remove(_ key: Key) { next[key] = nil }

    package mutating func removeAll() { next.removeAll() }

    /// The ones due at `now`, in order; each next due a period after it was (or at `now`,
    /// when far behind). One without a period in `periods` is dropped, not due.
    package mutating func takeDue(at now: Double, periods: [Key: Double]) -> [Key] {
        var due: [Key] = []
        for (key, at) in next.sorted(by: { $0.key < $1.key }) where now >= at {
            guard let period = periods[key] else {
                next[key] = nil
                continue
            }
            next[key] = max(at + period, now)
            due.append(key)
        }
        return due
    }
}
