// SPDX-License-Identifier: GPL-2.0-or-later

/// When an advertiser is there: one rule for a replay's plan, its scenario step and an audit.
/// A silence is a going (the advertiser left and came back: out of range, switched off) only
/// when it is longer than `gap` (at least a second or so) and than `silenceIntervals` of the
/// advertiser's own intervals; a shorter one is events a scanner missed.
public enum Presence {
    /// The shortest silence that may be a going, in seconds, unless a `gap` says otherwise.
    public static let defaultGap = 2.0
    /// A silence is a going only when longer than this many of the advertiser's own intervals
    /// too (a scanner misses a few events in a row now and then).
    public static let silenceIntervals = 5.0
    /// The `gap`s a user may give (`replay --gap`, a scenario's `replay: {gap: S}`), in seconds.
    public static let gaps: ClosedRange<Double> = 0.1...3600

    /// Whether a silence of `seconds` is a going, for an advertiser at `interval` ms (nil: not
    /// known) with `gap` seconds.
    public static func isGoing(_ seconds: Double, interval: Double?, gap: Double = defaultGap) -> Bool {
        seconds > max(gap, silenceIntervals * (interval ?? 0) / 1000)
    }

    /// Sorted times (seconds) as stays: from the first time of each to its last, a new one after
    /// every silence `isGoing` calls a going.
    public static func stays(_ times: [Double], interval: Double?, gap: Double = defaultGap) -> [ClosedRange<Double>] {
        stays(joining: times.map { $0...$0 }, interval: interval, gap: gap)
    }

    /// Spans in order (seconds) as stays: each joined to the one before it unless the silence
    /// between them is a going.
    public static func stays(joining spans: [ClosedRange<Double>], interval: Double?,
                             gap: Double = defaultGap) -> [ClosedRange<Double>] {
        var stays: [ClosedRange<Double>] = []
        for span in spans {
            if let last = stays.last, !isGoing(span.lowerBound - last.upperBound, interval: interval, gap: gap) {
                stays[stays.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else {
                stays.append(span)
            }
        }
        return stays
    }
}
