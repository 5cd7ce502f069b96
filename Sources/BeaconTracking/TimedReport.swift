// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A report with its time: seconds since the feed began (for windows and timers) and Unix
/// time (for timestamps), from a live scan or a capture.
public struct TimedReport: Sendable {
    /// Seconds since the feed began.
    public var elapsed: Double
    /// Seconds since 1970 (from the capture's timestamps on a replay).
    public var unixTime: Double
    public var report: ScanReport

    public init(elapsed: Double, unixTime: Double, report: ScanReport) {
        self.elapsed = elapsed
        self.unixTime = unixTime
        self.report = report
    }
}
