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
/// write straight into their output that way). Each value reserves room for the most it can
/// take, once, and is then written through a pointer.
public struct JSONObject: ~Copyable {
    private var out: ByteBuffer
    private var empty = true
    /// The last second a timestamp was written in (kept by a buffer's owner from line to line).
    private var timestamps: Timestamp.Cache

    public init() {
        timestamps = Timestamp.Cache()
        out = ByteBuffer(capacity: 256)
        out.append(UInt8(ascii: "{"))
    }

    /// Starts an object at the end of `buffer`, taking its storage (no copy); `finish(into:)` gives it back.
    init(continuing buffer: inout ByteBuffer, timestamps: Timestamp.Cache = Timestamp.Cache()) {
        self.timestamps = timestamps
        out = ByteBuffer()
        swap(&out, &buffer)
        out.append(UInt8(ascii: "{"))
    }

    /// Closes the object and hands the buffer it was written into back to `buffer`.
    mutating func finish(into buffer: inout ByteBuffer) {
        out.append(UInt8(ascii: "}"))
        swap(&out, &buffer)
    }

    /// Closes the object, hands the buffer back, and the timestamp cache for the next line.
    mutating func finish(into buffer: inout ByteBuffer, timestamps: inout Timestamp.Cache) {
        finish(into: &buffer)
        timestamps = self.timestamps
    }

    /// The object as one line of text.
    public var line: String {
        out.string() + "}"
    }

    public mutating func add(_ key: StaticString, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &out)
    }

    /// A string value known at compile time to need no escaping (a type name, a state).
    public mutating func add(_ key: StaticString, literal value: StaticString) {
        appendKey(key, reserving: value.utf8CodeUnitCount + 2)
        out.appendReserved(UInt8(ascii: "\""))
        out.appendReserved(value)
        out.appendReserved(UInt8(ascii: "\""))
    }

    public mutating func add<T: BinaryInteger>(_ key: StaticString, _ value: T) {
        appendKey(key, reserving: ByteBuffer.decimalMost)
        out.appendDecimalReserved(negative: value < 0, magnitude: UInt64(truncatingIfNeeded: value.magnitude))
    }

    public mutating func add(_ key: StaticString, _ value: Bool) {
        add(key, raw: value ? "true" : "false")
    }

    /// An array of integers: [1,2].
    public mutating func add(_ key: StaticString, integers: [some BinaryInteger]) {
        appendKey(key)
        out.append(utf8: "[" + integers.map { String($0) }.joined(separator: ",") + "]")
    }

    /// Ranges as pairs of numbers rounded to thousandths: `[[0.1,7.9],[15.9,23.9]]` (finite
    /// bounds; a bound that is not is written as null).
    public mutating func add(_ key: StaticString, ranges: [ClosedRange<Double>]) {
        appendKey(key)
        func number(_ value: Double) -> String {
            let rounded = (value * 1000).rounded() / 1000
            return rounded.isFinite ? "\(rounded)" : "null"
        }
        out.append(utf8: "[" + ranges.map { "[\(number($0.lowerBound)),\(number($0.upperBound))]" }.joined(separator: ",") + "]")
    }

    /// A number already formatted as a JSON number (callers guarantee the form).
    public mutating func add(_ key: StaticString, number: String) {
        appendKey(key)
        out.append(utf8: number)
    }

    /// A non-negative number of hundredths as a decimal with two places: 1234 -> 12.34.
    public mutating func add(_ key: StaticString, hundredths: UInt64) {
        appendKey(key, reserving: ByteBuffer.decimalMost + 3)
        out.appendDecimalReserved(negative: false, magnitude: hundredths / 100)
        let fraction = UInt8(hundredths % 100)
        out.appendReserved(UInt8(ascii: "."))
        out.appendReserved(UInt8(ascii: "0") + fraction / 10)
        out.appendReserved(UInt8(ascii: "0") + fraction % 10)
    }

    /// A non-negative number of tenths as a decimal with one place: 12345 -> 1234.5.
    public mutating func add(_ key: StaticString, tenths: UInt64) {
        appendKey(key, reserving: ByteBuffer.decimalMost + 2)
        out.appendDecimalReserved(negative: false, magnitude: tenths / 10)
        out.appendReserved(UInt8(ascii: "."))
        out.appendReserved(UInt8(ascii: "0") + UInt8(tenths % 10))
    }

    /// Upper-case hex digits by value, looked up rather than chosen by a branch (random bytes
    /// mix digits and letters, which branches cannot predict).
    private static let digits: StaticString = "0123456789ABCDEF"

    /// The two digits of each byte value, in memory order: `hexPairs[0x3A]` holds "3A".
    private static let hexPairs: [UInt16] = (0..<256).map { (value: Int) -> UInt16 in
        let table = digits.utf8Start
        return UInt16(littleEndian: UInt16(table[value >> 4]) | UInt16(table[value & 0x0F]) << 8)
    }

    /// Writes the two hex digits of `byte` at `text`.
    @inline(__always)
    private static func writeHex(_ byte: UInt8, at text: UnsafeMutablePointer<UInt8>) {
        let table = digits.utf8Start
        text[0] = table[Int(byte >> 4)]
        text[1] = table[Int(byte & 0x0F)]
    }

    /// A UUID in its usual upper-case 8-4-4-4-12 form, written without building a string.
    public mutating func add(_ key: StaticString, uuid: UUID) {
        appendKey(key, reserving: 38)
        out.appendReserving(38) { text in
            text[0] = UInt8(ascii: "\"")
            withUnsafeBytes(of: uuid.uuid) { raw in
                // 8-4-4-4-12: the groups' bytes, each written at a place known beforehand.
                for index in 0..<4 { Self.writeHex(raw[index], at: text + 1 + 2 * index) }
                text[9] = UInt8(ascii: "-")
                for index in 4..<6 { Self.writeHex(raw[index], at: text + 2 + 2 * index) }
                text[14] = UInt8(ascii: "-")
                for index in 6..<8 { Self.writeHex(raw[index], at: text + 3 + 2 * index) }
                text[19] = UInt8(ascii: "-")
                for index in 8..<10 { Self.writeHex(raw[index], at: text + 4 + 2 * index) }
                text[24] = UInt8(ascii: "-")
                for index in 10..<16 { Self.writeHex(raw[index], at: text + 5 + 2 * index) }
            }
            text[37] = UInt8(ascii: "\"")
            return 38
        }
    }

    /// Bytes as one upper-case hex string, written without building a string.
    public mutating func add(_ key: StaticString, hex: some Collection<UInt8>) {
        let count = hex.count
        appendKey(key, reserving: 2 * count + 2)
        out.appendReserving(2 * count + 2) { text in
            text[0] = UInt8(ascii: "\"")
            var position = 1
            let written: Void? = hex.withContiguousStorageIfAvailable { bytes in
                // Both digits of a byte at once, from a table of the 256 pairs.
                Self.hexPairs.withUnsafeBufferPointer { pairs in
                    let pairs = UnsafeRawPointer(pairs.baseAddress!)
                    let out = UnsafeMutableRawPointer(text + 1)
                    for index in 0..<bytes.count {
                        out.storeBytes(of: pairs.load(fromByteOffset: 2 * Int(bytes[index]), as: UInt16.self),
                                       toByteOffset: 2 * index, as: UInt16.self)
                    }
                }
                position += 2 * bytes.count
            }
            if written == nil {
                for byte in hex {
                    Self.writeHex(byte, at: text + position)
                    position += 2
                }
            }
            text[position] = UInt8(ascii: "\"")
            return position + 1
        }
    }

    /// A Bluetooth address as `AA:BB:CC:DD:EE:FF`, written without building a string.
    public mutating func add(_ key: StaticString, address: BluetoothAddress) {
        appendKey(key, reserving: 19)
        out.appendReserving(19) { text in
            text[0] = UInt8(ascii: "\"")
            for index in 0..<6 {
                Self.writeHex(UInt8(truncatingIfNeeded: address.value >> UInt64(40 - 8 * index)), at: text + 1 + 3 * index)
                text[3 + 3 * index] = index == 5 ? UInt8(ascii: "\"") : UInt8(ascii: ":")
            }
            return 19
        }
    }

    /// An address type by its name (`AddressType.description`); the usual ones without building a string.
    public mutating func add(_ key: StaticString, addressType: AddressType) {
        switch addressType {
        case .publicDevice: add(key, literal: "public")
        case .randomDevice: add(key, literal: "random")
        default: add(key, addressType.description)
        }
    }

    /// Unix time as ISO 8601 UTC with milliseconds (`Timestamp.iso8601`), written without building a string.
    public mutating func add(_ key: StaticString, timestamp unix: Double) {
        appendKey(key, reserving: 2)
        out.appendReserved(UInt8(ascii: "\""))
        Timestamp.append(unix, to: &out, cache: &timestamps)
        out.append(UInt8(ascii: "\""))
    }

    /// An array of strings.
    public mutating func add(_ key: StaticString, strings: [String]) {
        appendKey(key)
        out.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendQuoted(string, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// An array of objects, each written by `body` into a fresh object.
    public mutating func add<T>(_ key: StaticString, objects items: [T], _ body: (T, inout JSONObject) -> Void) {
        appendKey(key)
        out.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            var object = JSONObject(continuing: &out, timestamps: timestamps)
            body(item, &object)
            object.finish(into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    public mutating func addNull(_ key: StaticString) {
        add(key, raw: "null")
    }

    private mutating func add(_ key: StaticString, raw value: StaticString) {
        appendKey(key, reserving: value.utf8CodeUnitCount)
        out.appendReserved(value)
    }

    /// Writes the separator and `"key":`, with room for `extra` more bytes after it.
    @inline(__always)
    private mutating func appendKey(_ key: StaticString, reserving extra: Int = 0) {
        // Keys are plain ASCII names (StaticString: known at compile time, no escaping).
        out.reserve(key.utf8CodeUnitCount + 4 + extra)
        if !empty { out.appendReserved(UInt8(ascii: ",")) }
        empty = false
        out.appendReserved(UInt8(ascii: "\""))
        out.appendReserved(key)
        out.appendReserved(UInt8(ascii: "\""))
        out.appendReserved(UInt8(ascii: ":"))
    }

    /// Quotes a string, escaping what RFC 8259 section 7 requires.
    static func appendQuoted(_ value: String, to out: inout ByteBuffer) {
        var value = value
        value.withUTF8 { utf8 in
            // Most strings (messages, names) need no escape: copied whole once that is known.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                out.reserve(utf8.count + 2)
                out.appendReserved(UInt8(ascii: "\""))
                out.appendReserved(UnsafeRawBufferPointer(utf8))
                out.appendReserved(UInt8(ascii: "\""))
                return
            }
            out.reserve(6 * utf8.count + 2)  // the longest escape, \u00XX, is six bytes
            out.appendReserved(UInt8(ascii: "\""))
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    out.appendReserved(UInt8(ascii: "\\")); out.appendReserved(byte)
                case UInt8(ascii: "\n"): out.appendReserved(UInt8(ascii: "\\")); out.appendReserved(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.appendReserved(UInt8(ascii: "\\")); out.appendReserved(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.appendReserved(UInt8(ascii: "\\")); out.appendReserved(UInt8(ascii: "t"))
                case 0..<0x20:
                    for escape in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                   HexText.digit(byte >> 4), HexText.digit(byte & 0x0F)] {
                        out.appendReserved(escape)
                    }
                default: out.appendReserved(byte)  // UTF-8 of everything else passes as it is
                }
            }
            out.appendReserved(UInt8(ascii: "\""))
        }
    }
}
