// SPDX-License-Identifier: GPL-2.0-or-later

/// RSSI samples over a sliding time window, averaged the way the AltBeacon library does:
/// sort, drop the top and bottom 10 %, take the mean of the rest. Time is whatever clock
/// the caller uses, in seconds, so tests can drive it.
public struct RSSIWindow: Sendable {
    public let length: Double
    /// Samples in the order they came; those before `first` have left the window (they are
    /// dropped in bulk, so a report does not shift the array).
    private var samples: [(time: Double, rssi: Int)] = []
    private var first = 0
    /// The same RSSI values kept in order, so the trimmed mean needs no sort per report.
    private var ordered: [Int] = []

    /// - Parameter length: the window in seconds (20 by default, as AltBeacon).
    public init(length: Double = 20) {
        self.length = length
    }

    public var count: Int { samples.count - first }

    /// Adds a sample taken at `time` and forgets those older than the window.
    public mutating func add(_ rssi: Int, at time: Double) {
        samples.append((time, rssi))
        ordered.insert(rssi, at: Self.firstIndex(notBelow: rssi, in: ordered))
        prune(now: time)
    }

    /// Forgets samples older than the window as of `now`.
    public mutating func prune(now: Double) {
        let oldest = now - length
        while first < samples.count, samples[first].time < oldest {
            ordered.remove(at: Self.firstIndex(notBelow: samples[first].rssi, in: ordered))
            first += 1
        }
        if first == samples.count {
            samples.removeAll(keepingCapacity: true)
            first = 0
        } else if first >= 16, first * 2 >= samples.count {
            samples.removeFirst(first)
            first = 0
        }
    }

    /// The trimmed mean of the samples in the window, or nil with none.
    public var mean: Double? {
        guard !ordered.isEmpty else { return nil }
        let drop = ordered.count / 10
        var sum = 0
        for index in drop..<(ordered.count - drop) { sum += ordered[index] }
        return Double(sum) / Double(ordered.count - 2 * drop)
    }

    /// Where `value` goes in `sorted` (before any equal values): a binary search.
    private static func firstIndex(notBelow value: Int, in sorted: [Int]) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
