// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import Foundation

/// Advertising reports from a live scan or a btsnoop capture, each with its time: seconds
/// since the feed began (for windows and timers) and Unix time (for timestamps).
enum ReportFeed {
    struct Timed {
        var elapsed: Double
        var unixTime: Double
        var report: ScanReport
    }

    /// Scans until `duration`, a signal, or `handle` returns false; `tick` runs at least every
    /// 200 ms with the elapsed time.
    static func live(_ scanner: AdvertisementScanner, duration: Double?, interrupt: Int32,
                     handle: (Timed) -> Bool, tick: (Double) -> Void) throws(HostError) {
        let start = ContinuousClock.now
        let end = duration.map { start + .milliseconds(Int64($0 * 1000)) }
        while true {
            let now = ContinuousClock.now
            if let end, now >= end { return }
            var wait = Duration.milliseconds(200)
            if let end { wait = min(wait, now.duration(to: end)) }
            let report = try scanner.nextReport(timeout: wait, interrupt: interrupt)
            let elapsed = seconds(start.duration(to: .now))
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
    static func replay(path: String, handle: (Timed) -> Bool, tick: (Double) -> Void) throws {
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

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

struct ReplayError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// ISO 8601 UTC with milliseconds, from Unix time.
enum Timestamp {
    /// The calendar fields of a moment, UTC (years before 1 or after 9999 are not padded).
    struct Civil {
        var year, month, day, hour, minute, second, millisecond: Int64

        init(_ unix: Double) {
            // Whole microseconds first: a time given in milliseconds, such as 1.281, is often held
            // as a double a hair below (1280.9999... when multiplied), which truncating would
            // print one millisecond early.
            let microseconds = Int64((unix * 1_000_000).rounded())
            let milliseconds = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
            let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
            let rest = milliseconds - days * 86_400_000
            // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let doe = z - era * 146_097
            let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
            let mp = (5 * doy + 2) / 153
            day = doy - (153 * mp + 2) / 5 + 1
            month = mp < 10 ? mp + 3 : mp - 9
            year = yoe + era * 400 + (month <= 2 ? 1 : 0)
            hour = rest / 3_600_000
            minute = rest / 60000 % 60
            second = rest / 1000 % 60
            millisecond = rest % 1000
        }
    }

    static func iso8601(_ unix: Double) -> String {
        var out = ByteBuffer()
        append(unix, to: &out)
        return out.string()
    }

    /// Writes the ISO 8601 form of `unix` as UTF-8.
    static func append(_ unix: Double, to out: inout ByteBuffer) {
        let time = Civil(unix)
        // Each field digit by digit with constant divisors (a division by a variable divisor
        // per digit was most of the cost).
        func two(_ value: Int64, at index: Int, in text: UnsafeMutablePointer<UInt8>) {
            text[index] = UInt8(ascii: "0") + UInt8(value / 10)
            text[index + 1] = UInt8(ascii: "0") + UInt8(value % 10)
        }
        if time.year >= 0 && time.year <= 9999 {
            out.appendReserving(4) { text in
                two(time.year / 100, at: 0, in: text)
                two(time.year % 100, at: 2, in: text)
                return 4
            }
        } else {
            out.append(utf8: String(time.year))  // unpadded
        }
        out.appendReserving(20) { text in
            text[0] = UInt8(ascii: "-")
            two(time.month, at: 1, in: text)
            text[3] = UInt8(ascii: "-")
            two(time.day, at: 4, in: text)
            text[6] = UInt8(ascii: "T")
            two(time.hour, at: 7, in: text)
            text[9] = UInt8(ascii: ":")
            two(time.minute, at: 10, in: text)
            text[12] = UInt8(ascii: ":")
            two(time.second, at: 13, in: text)
            text[15] = UInt8(ascii: ".")
            text[16] = UInt8(ascii: "0") + UInt8(time.millisecond / 100)
            two(time.millisecond % 100, at: 17, in: text)
            text[19] = UInt8(ascii: "Z")
            return 20
        }
    }
}
