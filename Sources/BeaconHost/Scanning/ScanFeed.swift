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
        // The loop's one epoll set: the signal pipe and the scanner's link.
        let wake = WakeSet()
        defer { wake.close() }
        while true {
            let now = ContinuousClock.now
            if let end, now >= end { return }
            var deadline = now + .milliseconds(200)
            if let end { deadline = min(deadline, end) }
            let next = try nextReport(until: deadline, on: wake, beside: [interrupt])
            if next.ready.contains(interrupt) { return }
            let elapsed = start.duration(to: .now).inSeconds
            if let report = next.report,
               !handle(TimedReport(elapsed: elapsed, unixTime: Date().timeIntervalSince1970, report: report)) { return }
            tick(elapsed)
        }
    }
}
