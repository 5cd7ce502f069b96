// SPDX-License-Identifier: GPL-2.0-or-later

/// ISO 8601 UTC with milliseconds, from Unix time.
public enum Timestamp {
    /// The calendar fields of a moment, UTC (years before 1 or after 9999 are not padded).
    struct Civil {
        var year, month, day, hour, minute, second, millisecond: Int64

        /// The fields of `milliseconds` since 1970-01-01T00:00:00Z.
        init(milliseconds: Int64) {
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

    /// The farthest time from 1970 written as itself, in seconds.
    static let farthest = 9.2e12

    public static func iso8601(_ unix: Double) -> String {
        var out = ByteBuffer()
        append(unix, to: &out)
        return out.string()
    }

    /// Writes the ISO 8601 form of `unix` as UTF-8.
    static func append(_ unix: Double, to out: inout ByteBuffer) {
        var cache = Cache()
        append(unix, to: &out, cache: &cache)
    }

    /// The text of the last whole second written, `YYYY-MM-DDTHH:MM:SS.`: the lines of a scan
    /// come many to a second, and only the milliseconds change among them.
    struct Cache {
        /// Milliseconds since 1970 at the start of the second the text is of; none yet at first.
        fileprivate var secondStart = Int64.min
        fileprivate var text: (UInt64, UInt64, UInt32) = (0, 0, 0)
    }

    /// Writes the ISO 8601 form of `unix` as UTF-8, the date and time to the second from
    /// `cache` when it holds the same second.
    static func append(_ unix: Double, to out: inout ByteBuffer, cache: inout Cache) {
        // Whole microseconds first: a time given in milliseconds, such as 1.281, is often held
        // as a double a hair below (1280.9999... when multiplied), which truncating would
        // print one millisecond early.
        // A capture's clock can say anything: beyond what 64 bits of microseconds hold (about
        // 292,000 years either way) a time is written as at that end, and NaN as 1970.
        let bounded = unix.isNaN ? 0 : min(max(unix, -Self.farthest), Self.farthest)
        let microseconds = Int64((bounded * 1_000_000).rounded())
        let milliseconds = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
        let millisecond = milliseconds >= 0 ? milliseconds % 1000 : (milliseconds % 1000 + 1000) % 1000
        if milliseconds - millisecond != cache.secondStart {
            let time = Civil(milliseconds: milliseconds)
            guard time.year >= 0 && time.year <= 9999 else {
                out.append(utf8: String(time.year))  // unpadded, and not kept
                writeAfterYear(time, to: &out)
                return
            }
            cache.secondStart = milliseconds - millisecond
            withUnsafeMutableBytes(of: &cache.text) { raw in
                let text = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                two(time.year / 100, at: 0, in: text)
                two(time.year % 100, at: 2, in: text)
                fields(time, at: 4, in: text)
            }
        }
        out.appendReserving(24) { text in
            withUnsafeBytes(of: cache.text) { raw in
                text.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 20)
            }
            text[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
            two(millisecond % 100, at: 21, in: text)
            text[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// Writes what follows the year, `-MM-DDTHH:MM:SS.mmmZ`.
    private static func writeAfterYear(_ time: Civil, to out: inout ByteBuffer) {
        out.appendReserving(20) { text in
            fields(time, at: 0, in: text)
            text[16] = UInt8(ascii: "0") + UInt8(time.millisecond / 100)
            two(time.millisecond % 100, at: 17, in: text)
            text[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// Writes `-MM-DDTHH:MM:SS.` (16 bytes) at `index`.
    @inline(__always)
    private static func fields(_ time: Civil, at index: Int, in text: UnsafeMutablePointer<UInt8>) {
        text[index] = UInt8(ascii: "-")
        two(time.month, at: index + 1, in: text)
        text[index + 3] = UInt8(ascii: "-")
        two(time.day, at: index + 4, in: text)
        text[index + 6] = UInt8(ascii: "T")
        two(time.hour, at: index + 7, in: text)
        text[index + 9] = UInt8(ascii: ":")
        two(time.minute, at: index + 10, in: text)
        text[index + 12] = UInt8(ascii: ":")
        two(time.second, at: index + 13, in: text)
        text[index + 15] = UInt8(ascii: ".")
    }

    /// Two decimal digits with constant divisors (a division by a variable divisor per digit
    /// was most of the cost).
    @inline(__always)
    private static func two(_ value: Int64, at index: Int, in text: UnsafeMutablePointer<UInt8>) {
        text[index] = UInt8(ascii: "0") + UInt8(value / 10)
        text[index + 1] = UInt8(ascii: "0") + UInt8(value % 10)
    }
}
