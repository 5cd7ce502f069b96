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
    /// The sum of `ordered`, so the trimmed mean subtracts the few values it drops.
    private var total = 0

    /// - Parameter length: the window in seconds (20 by default, as AltBeacon).
    public init(length: Double = 20) {
        self.length = length
    }

    public var count: Int { samples.count - first }

    /// Adds a sample taken at `time` and forgets those older than the window.
    public mutating func add(_ rssi: Int, at time: Double) {
        samples.append((time, rssi))
        // Found by a binary search and moved into place with one memory move: a beacon that
        // advertises 50 times a second keeps a thousand samples in a 20 s window.
        ordered.append(rssi)
        total &+= rssi
        ordered.withUnsafeMutableBufferPointer { values in
            let last = values.count - 1
            let index = Self.firstIndex(notBelow: rssi, in: UnsafeBufferPointer(rebasing: values[..<last]))
            if index < last {
                UnsafeMutableRawPointer(values.baseAddress! + index + 1)
                    .copyMemory(from: values.baseAddress! + index, byteCount: (last - index) * MemoryLayout<Int>.stride)
                values[index] = rssi
            }
        }
        prune(now: time)
    }

    /// Forgets samples older than the window as of `now`.
    public mutating func prune(now: Double) {
        let oldest = now - length
        guard first < samples.count, samples[first].time < oldest else { return }
        repeat {
            let rssi = samples[first].rssi
            ordered.withUnsafeMutableBufferPointer { values in
                let index = Self.firstIndex(notBelow: rssi, in: UnsafeBufferPointer(values))
                let after = values.count - 1 - index
                if after > 0 {
                    UnsafeMutableRawPointer(values.baseAddress! + index)
                        .copyMemory(from: values.baseAddress! + index + 1, byteCount: after * MemoryLayout<Int>.stride)
                }
            }
            ordered.removeLast()
            total &-= rssi
            first += 1
        } while first < samples.count && samples[first].time < oldest
        if first == samples.count {
            samples.removeAll(keepingCapacity: true)
            first = 0
        } else if first >= 16, first * 2 >= samples.count {
            samples.removeFirst(first)
            first = 0
        }
    }

    /// The trimmed mean of the samples in the window, or nil with none: the running sum less
    /// the tenth dropped at each end.
    public var mean: Double? {
        guard !ordered.isEmpty else { return nil }
        let drop = ordered.count / 10
        let sum = ordered.withUnsafeBufferPointer { values in
            var sum = total
            for index in 0..<drop { sum &-= values[index] &+ values[values.count - 1 - index] }
            return sum
        }
        return Double(sum) / Double(ordered.count - 2 * drop)
    }

    /// Where `value` goes in `sorted` (before any equal values): a binary search.
    private static func firstIndex(notBelow value: Int, in sorted: UnsafeBufferPointer<Int>) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
