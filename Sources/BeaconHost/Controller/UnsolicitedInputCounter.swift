// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Counts unsolicited input by kind and says when a count is worth reporting.
package struct UnsolicitedInputCounter: Sendable {
    /// The most events kept for the caller while a command waits.
    public static let queueLimit = 4096

    public private(set) var counts: [UnsolicitedInput: Int] = [:]

    public init() {}

    /// All ignored input, whatever its kind.
    public var total: Int { counts.values.reduce(0, +) }

    /// Counts one; returns the report when the count is 1, 10, 100, ...: a first warning,
    /// then a running count that a flood cannot turn into a flood of lines.
    public mutating func count(_ kind: UnsolicitedInput, detail: @autoclosure () -> String) -> UnsolicitedInputReport? {
        let count = counts[kind, default: 0] + 1
        counts[kind] = count
        var power = 1
        while power < count { power *= 10 }
        return power == count ? UnsolicitedInputReport(kind: kind, count: count, detail: detail()) : nil
    }

    /// What was counted after `earlier` (a copy of this counter taken then).
    public func since(_ earlier: UnsolicitedInputCounter) -> UnsolicitedInputCounter {
        var later = UnsolicitedInputCounter()
        for (kind, count) in counts where count > earlier.counts[kind, default: 0] {
            later.counts[kind] = count - earlier.counts[kind, default: 0]
        }
        return later
    }

    /// "3 events that do not parse, 1 data packet (...)", or nil when nothing was ignored.
    public var summary: String? {
        guard !counts.isEmpty else { return nil }
        return counts.sorted { $0.key.code < $1.key.code }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}
