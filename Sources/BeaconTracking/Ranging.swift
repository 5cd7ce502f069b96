// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Distance from signal strength: the curve Radius Networks fitted (used by the AltBeacon
/// library and Home Assistant), and the proximity classes apps use.
public enum Ranging {
    /// Estimated distance in metres, or nil when unknown.
    ///
    /// `r = rssi / measuredPower`; `d = r < 1 ? r^10 : 0.89976 * r^7.7095 + 0.111`. The curve
    /// holds only for a received power and a calibration both below 0 dBm: a measured power of
    /// 0 or above (anyone on the air can send one) or an RSSI of 0 or above (or not finite)
    /// gives no distance, so the result is always finite, from 0 to about 1.6e16 m.
    public static func accuracy(rssi: Double, measuredPower: Int) -> Double? {
        guard rssi.isFinite, rssi < 0, measuredPower < 0 else { return nil }
        let ratio = rssi / Double(measuredPower)
        return ratio < 1 ? pow(ratio, 10) : 0.89976 * pow(ratio, 7.7095) + 0.111
    }
}

