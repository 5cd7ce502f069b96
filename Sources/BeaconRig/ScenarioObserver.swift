// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// The scenario's clock and its second device: time in seconds, and the reports the second
/// device receives. Without a scanner it only waits. Tests inject one that scripts both.
public protocol ScenarioObserver: AnyObject {
    /// Seconds on a monotonic clock.
    var now: Double { get }
    /// The next report, or `.deadline` once `deadline` has come.
    func next(until deadline: Double) throws(HostError) -> Observation
    /// The reports already received and not yet read, without waiting.
    func queued() throws(HostError) -> [ScanReport]
    /// Waits beside `sources` (what a step asked of other machines, `RemoteBox`) while `busy`
    /// says so, in the observer's own wait: what it scans meanwhile is kept for `next`.
    /// - Returns: true when a signal asked the run to end.
    /// - Throws: `HostError` when the wait itself fails.
    func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool
}

extension ScenarioObserver {
    public func queued() throws(HostError) -> [ScanReport] { [] }

    /// A wait of its own, for an observer that has none (it simulates the air).
    public func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool {
        let loop = EventLoop(interrupt: nil, sources: sources, what: "the step's wait")
        defer { loop.close() }
        return try loop.run(until: nil, proceed: busy)
    }
}
