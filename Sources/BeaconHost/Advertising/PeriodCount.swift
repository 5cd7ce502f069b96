// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// The whole periods that end on a clock (seconds, or a timer's ticks), counted once each: when
/// TLM counters move (`BeaconMotions`).
package struct PeriodCount: Sendable {
    package let period: Double
    /// When the next period ends.
    package private(set) var next: Double

    package init(period: Double, from start: Double = 0) {
        self.period = period
        next = start + period
    }

    /// How many periods ended by `now` since the last call (several when far behind).
    package mutating func passed(at now: Double) -> Int {
        var count = 0
        while now >= next {
            count += 1
            next += period
        }
        return count
    }
}
