// SPDX-License-Identifier: GPL-2.0-or-later

/// The measured power at 1 m from RSSI samples taken with the scanner held 1 m from the
/// beacon, as the common beacon libraries average RSSI (the AltBeacon library's running
/// average, Apple's AirLocate calibration): sort, drop the top and bottom 10 %, take the mean
/// of the rest, rounded to the nearest dBm (halves away from zero).
public struct Calibration: Hashable, Sendable {
    /// Fewer samples than this say too little (one outlier would move the answer).
    public static let minimumSamples = 10
    /// A spread (standard deviation of the samples kept) above this, in dB, makes the answer
    /// meaningless: the scanner or the beacon moved, or reflections dominate; one standard
    /// deviation is then a factor of two in distance (path-loss exponent 2).
    public static let meaningfulSpread = 6.0

    /// Whether the samples agree enough for the answer to mean something (`meaningfulSpread`).
    public var isMeaningful: Bool { standardDeviation <= Self.meaningfulSpread }

    /// What to tell the user when the answer means little; nil when it is sound.
    public var spreadWarning: String? {
        guard !isMeaningful else { return nil }
        let deviation = (standardDeviation * 10).rounded() / 10
        return "the samples spread too much for the answer to mean anything (standard deviation \(deviation) dB, "
            + "more than \(Int(Self.meaningfulSpread)) dB): keep the scanner and the beacon still, 1 m apart, in the "
            + "open, and calibrate again"
    }

    /// The value to advertise as measured power (iBeacon, AltBeacon) at 1 m.
    public var measuredPower: Int
    /// The trimmed mean before rounding.
    public var mean: Double
    /// Samples taken, and kept after the outliers went.
    public var sampleCount: Int
    public var keptCount: Int
    /// The spread of the samples kept: standard deviation, lowest and highest.
    public var standardDeviation: Double
    public var lowest: Int
    public var highest: Int

    /// - Parameter samples: RSSI in dBm, in any order.
    /// - Throws: `CalibrationError.neverHeard` with none, `.tooFewSamples` with fewer than
    ///   `minimumSamples`.
    public init(samples: [Int]) throws(CalibrationError) {
        guard !samples.isEmpty else { throw .neverHeard }
        guard samples.count >= Self.minimumSamples else { throw .tooFewSamples(samples.count) }
        let sorted = samples.sorted()
        let drop = sorted.count / 10
        let kept = sorted[drop..<(sorted.count - drop)]
        let mean = Double(kept.reduce(0, +)) / Double(kept.count)
        let variance = kept.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(kept.count)
        self.mean = mean
        measuredPower = Int(mean.rounded(.toNearestOrAwayFromZero))
        sampleCount = samples.count
        keptCount = kept.count
        standardDeviation = variance.squareRoot()
        lowest = kept.first ?? 0
        highest = kept.last ?? 0
    }
}

