// SPDX-License-Identifier: GPL-2.0-or-later

/// The control protocol's framing, written once for the server, its clients and the boxes'
/// sessions: one JSON object per line, ended by a line feed (a carriage return before it is
/// dropped), at most `maximumLine` bytes. Bytes go in as they arrive; complete lines come out.
package struct JSONLines {
    /// The longest line taken; more without a line end is `overflowed`.
    public static let maximumLine = 1 << 16

    private var pending: [UInt8] = []

    public init() {}

    /// Takes `bytes` in and returns the lines they complete, in order, without their line ends.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [String] {
        pending.append(contentsOf: bytes)
        var lines: [String] = []
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var end = newline
            if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            lines.append(String(decoding: pending[start..<end], as: UTF8.self))
            start = newline + 1
        }
        pending.removeSubrange(..<start)
        return lines
    }

    /// Whether more than `maximumLine` bytes wait without a line end (the peer is to be dropped).
    public var overflowed: Bool { pending.count > Self.maximumLine }

    /// Whether bytes of an unfinished line wait.
    public var hasPartialLine: Bool { !pending.isEmpty }

    /// `line` as sent: its bytes and the line end.
    public static func frame(_ line: String) -> [UInt8] {
        Array(line.utf8) + [UInt8(ascii: "\n")]
    }
}
