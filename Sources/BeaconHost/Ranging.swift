// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Distance from signal strength: the curve Radius Networks fitted (used by the AltBeacon
/// library and Home Assistant), and the proximity classes apps use.
public enum Ranging {
    /// Estimated distance in metres, or -1 when unknown (no RSSI, or no calibration).
    ///
    /// `r = rssi / measuredPower`; `d = r < 1 ? r^10 : 0.89976 * r^7.7095 + 0.111`.
    public static func accuracy(rssi: Double, measuredPower: Int8) -> Double {
        guard rssi != 0, measuredPower != 0, rssi.isFinite else { return -1 }
        let ratio = rssi / Double(measuredPower)
        return ratio < 1 ? pow(ratio, 10) : 0.89976 * pow(ratio, 7.7095) + 0.111
    }
}

/// Proximity class, by the common convention: under 0.5 m immediate, up to 4 m near, else far.
public enum Proximity: String, Sendable, Hashable {
    case immediate, near, far, unknown

    public init(accuracy: Double) {
        switch accuracy {
        case ..<0: self = .unknown
        case ..<0.5: self = .immediate
        case ...4: self = .near
        default: self = .far
        }
    }
}
