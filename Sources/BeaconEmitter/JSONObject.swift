// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One flat JSON object written as a single line, keys in insertion order (so output reads
/// the same way every time: `type` first). Values are strings, integers, decimals, booleans or
/// null. It writes UTF-8 bytes, and can continue a buffer it is handed (`decode` and `scan`
/// write straight into their output that way).
struct JSONObject {
    private(set) var bytes: [UInt8]
    private var empty = true

    init() {
        bytes = [UInt8(ascii: "{")]
    }

    /// Starts an object at the end of `buffer`, taking its storage (no copy); `finish()` gives it back.
    init(continuing buffer: inout [UInt8]) {
        bytes = []
        swap(&bytes, &buffer)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Closes the object and returns the buffer it was written into.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        var out: [UInt8] = []
        swap(&out, &bytes)
        return out
    }

    /// The object as one line of text.
    var line: String {
        var copy = self
        return String(decoding: copy.finish(), as: UTF8.self)
    }

    mutating func add(_ key: StaticString, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &bytes)
    }

    /// A string value known at compile time to need no escaping (a type name, a state).
    mutating func add(_ key: StaticString, literal value: StaticString) {
        appendKey(key)
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func add<T: BinaryInteger>(_ key: StaticString, _ value: T) {
        appendKey(key)
        Self.appendDecimal(negative: value < 0, magnitude: UInt64(truncatingIfNeeded: value.magnitude), to: &bytes)
    }

    mutating func add(_ key: StaticString, _ value: Bool) {
        appendKey(key)
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    /// A number already formatted as a JSON number (callers guarantee the form).
    mutating func add(_ key: StaticString, number: String) {
        appendKey(key)
        bytes.append(contentsOf: number.utf8)
    }

    /// A UUID in its usual upper-case 8-4-4-4-12 form, written without building a string.
    mutating func add(_ key: StaticString, uuid: UUID) {
        appendKey(key)
        // The 38 characters (quotes included) are made in scratch space and appended at once.
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            withUnsafeBytes(of: uuid.uuid) { raw in
                out[0] = UInt8(ascii: "\"")
                var position = 1
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = HexText.digit(raw[index] >> 4)
                    out[position + 1] = HexText.digit(raw[index] & 0x0F)
                    position += 2
                }
                out[position] = UInt8(ascii: "\"")
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: out[0...position]))
            }
        }
    }

    /// Bytes as one upper-case hex string, written without building a string.
    mutating func add(_ key: StaticString, hex: some Sequence<UInt8>) {
        appendKey(key)
        bytes.append(UInt8(ascii: "\""))
        HexText.append(hex, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A Bluetooth address as `AA:BB:CC:DD:EE:FF`, written without building a string.
    mutating func add(_ key: StaticString, address: BluetoothAddress) {
        appendKey(key)
        bytes.append(UInt8(ascii: "\""))
        let mostSignificantFirst = stride(from: 40, through: 0, by: -8).lazy.map {
            UInt8(truncatingIfNeeded: address.value >> UInt64($0))
        }
        HexText.append(mostSignificantFirst, separator: ":", to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Unix time as ISO 8601 UTC with milliseconds (`Timestamp.iso8601`), written without building a string.
    mutating func add(_ key: StaticString, timestamp unix: Double) {
        appendKey(key)
        bytes.append(UInt8(ascii: "\""))
        Timestamp.append(unix, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func addNull(_ key: StaticString) {
        appendKey(key)
        bytes.append(contentsOf: "null".utf8)
    }

    private mutating func appendKey(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }  // keys are plain ASCII names
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }


    /// Writes an integer in decimal.
    static func appendDecimal(negative: Bool, magnitude: UInt64, to out: inout [UInt8]) {
        if negative { out.append(UInt8(ascii: "-")) }
        var magnitude = magnitude
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, more than 20 digits; filled from the end
        withUnsafeMutableBytes(of: &scratch) { digits in
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: digits[index...])
        }
    }

    /// Quotes a string, escaping what RFC 8259 section 7 requires.
    static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(byte)
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case UInt8(ascii: "\n"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(HexText.digit(byte >> 4))
                out.append(HexText.digit(byte & 0x0F))
            default: out.append(byte)  // UTF-8 of everything else passes as it is
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
