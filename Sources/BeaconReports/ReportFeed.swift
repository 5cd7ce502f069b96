// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation

/// Advertising reports from a capture, each with its time: seconds since the feed began (for
/// windows and timers) and Unix time (for timestamps). A live scan's feed is
/// `AdvertisementScanner.feed` (BeaconHost).
public enum ReportFeed {
    /// A report with its time (`TimedReport`).
    public typealias Timed = TimedReport

    /// Replays a btsnoop capture (read in chunks, constant memory) through `handle`. The
    /// capture is read and parsed on a thread of its own, a few batches ahead.
    /// - Parameter includeBadCRC: link-layer PDUs whose CRC failed are handed out too.
    /// - Returns: how many link-layer PDUs were left out for a bad CRC.
    /// - Throws: `CodecError` for a malformed capture, with its file offset.
    @discardableResult
    public static func replay(path: String, includeBadCRC: Bool = false, handle: (Timed) -> Bool,
                              tick: (Double) -> Void) throws -> Int {
        let reader = try CaptureReader(path: path, decode: false, includeBadCRC: includeBadCRC)
        defer { reader.cancel() }
        while true {
            let batch = reader.next()
            for event in batch.events {
                for index in event.reports {
                    var fields = batch.reports[index]
                    fields.data = batch.bytes[batch.dataRanges[index]]
                    if !handle(Timed(elapsed: event.elapsed, unixTime: event.unixTime, report: ScanReport(fields))) {
                        return 0
                    }
                }
                tick(event.elapsed)
            }
            if let failure = batch.failure { throw failure }
            if batch.isLast { return batch.badCRCPackets }
        }
    }
}
