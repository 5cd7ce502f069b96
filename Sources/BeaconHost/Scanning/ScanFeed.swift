// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import LinuxSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AdvertisementScanner {
    /// Scans until `duration`, a signal, or `handle` returns false; `tick` runs at least every
    /// 200 ms with the elapsed time. Each report comes with the seconds since the scan began
    /// and the Unix time it arrived.
    public func feed(duration: Double?, interrupt: Int32, handle: (TimedReport) -> Bool,
                     tick: (Double) -> Void) throws(HostError) {
        let start = ContinuousClock.now
        let end = duration.map { start + .milliseconds(Int64($0 * 1000)) }
        let elapsed = { start.duration(to: .now).inSeconds }
        // The loop: the scanner's link and a tick every 200 ms, beside the signal pipe. The
        // sources live no longer than this call.
        try withoutActuallyEscaping(handle) { (handle) throws(HostError) in
            try withoutActuallyEscaping(tick) { (tick) throws(HostError) in
                let scan = ScanSource(scanner: self) { report in
                    guard handle(TimedReport(elapsed: elapsed(), unixTime: Date().timeIntervalSince1970, report: report))
                    else { return false }
                    tick(elapsed())
                    return true
                }
                let ticks = TickSource(every: .milliseconds(200)) { tick(elapsed()) }
                _ = try scan.run(until: end, interrupt: interrupt, beside: [ticks], what: "the scan")
            }
        }
    }

    /// The first report whose advertising data is one of `data`, or nil when none came within
    /// `timeout`.
    public func firstReport(withData data: [[UInt8]], within timeout: Duration) throws(HostError) -> ScanReport? {
        var found: ScanReport?
        let scan = ScanSource(scanner: self) { report in
            guard data.contains(report.data) else { return true }
            found = report
            return false
        }
        _ = try scan.run(until: .now + timeout, interrupt: nil, what: "the scan")
        return found
    }
}
