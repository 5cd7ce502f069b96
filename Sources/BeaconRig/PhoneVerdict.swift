// SPDX-License-Identifier: GPL-2.0-or-later

/// What a phone's expectation found: the phone and region, the app's line that met it (or
/// broke a `noEvent`), and the latency from the rig's own change (the region's beacons coming
/// on the air for an enter, the last going off it for an exit) to the line's receipt.
public struct PhoneVerdict: Sendable, Equatable {
    public var phone: String
    public var region: String
    public var logLine: String?
    /// Seconds; nil where no line met it, or the rig made no such change before it.
    public var latency: Double?

    public init(phone: String, region: String, logLine: String? = nil, latency: Double? = nil) {
        self.phone = phone
        self.region = region
        self.logLine = logLine
        self.latency = latency
    }
}
