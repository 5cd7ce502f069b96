// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import Foundation

/// Advertising reports from a live scan or a btsnoop capture, each with its time: seconds
/// since the feed began (for windows and timers) and Unix time (for timestamps).
public enum ReportFeed {
    public struct Timed {
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

    /// Scans until `duration`, a signal, or `handle` returns false; `tick` runs at least every
    /// 200 ms with the elapsed time.
    public static func live(_ scanner: AdvertisementScanner, duration: Double?, interrupt: Int32,
                     handle: (Timed) -> Bool, tick: (Double) -> Void) throws(HostError) {
        let start = ContinuousClock.now
        let end = duration.map { start + .milliseconds(Int64($0 * 1000)) }
        while true {
            let now = ContinuousClock.now
            if let end, now >= end { return }
            var wait = Duration.milliseconds(200)
            if let end { wait = min(wait, now.duration(to: end)) }
            let report = try scanner.nextReport(timeout: wait, interrupt: interrupt)
            let elapsed = start.duration(to: .now).inSeconds
            if let report {
                if !handle(Timed(elapsed: elapsed, unixTime: Date().timeIntervalSince1970, report: report)) { return }
            } else if PollProbe.readable(interrupt) {
                return
            }
            tick(elapsed)
        }
    }

    /// Replays a btsnoop capture (read in chunks, constant memory) through `handle`. The
    /// capture is read and parsed on a thread of its own, a few batches ahead.
    /// - Throws: `CodecError` for a malformed capture, with its file offset.
    public static func replay(path: String, handle: (Timed) -> Bool, tick: (Double) -> Void) throws {
        let reader = try CaptureReader(path: path, decode: false)
        defer { reader.cancel() }
        while true {
            let batch = reader.next()
            for event in batch.events {
                for index in event.reports {
                    var fields = batch.reports[index]
                    fields.data = batch.bytes[batch.dataRanges[index]]
                    if !handle(Timed(elapsed: event.elapsed, unixTime: event.unixTime, report: ScanReport(fields))) {
                        return
                    }
                }
                tick(event.elapsed)
            }
            if let failure = batch.failure { throw failure }
            if batch.isLast { return }
        }
    }
}
