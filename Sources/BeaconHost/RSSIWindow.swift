// SPDX-License-Identifier: GPL-2.0-or-later

/// RSSI samples over a sliding time window, averaged the way the AltBeacon library does:
/// sort, drop the top and bottom 10 %, take the mean of the rest. Time is whatever clock
/// the caller uses, in seconds, so tests can drive it.
public struct RSSIWindow: Sendable {
    public let length: Double
    private var samples: [(time: Double, rssi: Int)] = []

    /// - Parameter length: the window in seconds (20 by default, as AltBeacon).
    public init(length: Double = 20) {
        self.length = length
    }

    public var count: Int { samples.count }

    /// Adds a sample taken at `time` and forgets those older than the window.
    public mutating func add(_ rssi: Int, at time: Double) {
        samples.append((time, rssi))
        prune(now: time)
    }

    /// Forgets samples older than the window as of `now`.
    public mutating func prune(now: Double) {
        let oldest = now - length
        if let keep = samples.firstIndex(where: { $0.time >= oldest }) {
            if keep > 0 { samples.removeFirst(keep) }
        } else {
            samples.removeAll()
        }
    }

    /// The trimmed mean of the samples in the window, or nil with none.
    public var mean: Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.map(\.rssi).sorted()
        let drop = sorted.count / 10
        let kept = sorted[drop..<(sorted.count - drop)]
        return Double(kept.reduce(0, +)) / Double(kept.count)
    }
}
