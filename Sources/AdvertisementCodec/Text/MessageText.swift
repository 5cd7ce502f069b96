// SPDX-License-Identifier: GPL-2.0-or-later

/// An error message built from pieces as UTF-8 bytes and made a `String` once. Appending to a
/// `String` checks for a grapheme boundary at every join, which made a message several times
/// the cost of decoding the input it is about (a file of bad lines gets one message a line).
struct MessageText {
    private var utf8: [UInt8] = []

    init(reservingCapacity capacity: Int) {
        utf8.reserveCapacity(capacity)
    }

    mutating func append(_ text: String) {
        // Through a pointer: short strings (most pieces) are stored inline, and their UTF-8
        // view is otherwise walked a byte at a time.
        var text = text
        text.withUTF8 { utf8.append(contentsOf: $0) }
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { utf8.append(contentsOf: $0) }
    }

    /// An integer in decimal.
    mutating func append(_ value: Int) {
        if value < 0 { utf8.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of any Int
        withUnsafeMutableBytes(of: &digits) { raw in
            var end = raw.count
            repeat {
                end -= 1
                raw[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            utf8.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[end...]))
        }
    }

    var string: String { String(decoding: utf8, as: UTF8.self) }
}
