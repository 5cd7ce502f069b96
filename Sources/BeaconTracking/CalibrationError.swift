// SPDX-License-Identifier: GPL-2.0-or-later

/// Why no calibration came out of the samples.
public enum CalibrationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The beacon was not heard at all.
    case neverHeard
    /// Heard, but too few times to say.
    case tooFewSamples(Int)

    public var description: String {
        switch self {
        case .neverHeard:
            "the beacon was not heard: is it advertising, and the scanner 1 m from it?"
        case let .tooFewSamples(count):
            "the beacon was heard \(count) time\(count == 1 ? "" : "s"); a calibration needs at least "
                + "\(Calibration.minimumSamples) samples: scan longer (--duration) or advertise faster (--interval)"
        }
    }
}
