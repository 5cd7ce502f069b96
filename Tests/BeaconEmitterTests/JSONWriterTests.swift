// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconReports
import Foundation
import Testing

/// The JSON writer (reserved room, bytes written through a pointer) read back by Foundation's
/// JSON parser and date formatter: what it writes must be what they read.
@Suite struct JSONWriterTests {
    func parsed(_ line: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any], "\(line)")
    }

    @Test func stringsNeedingEscapesReadBack() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1F}", "é", "→", "😀", "a", " ", "/"]
        for _ in 0..<500 {
            let value = (0..<Int.random(in: 0...40, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            var object = JSONObject()
            object.add("text", value)
            object.add("after", 1)
            let read = try parsed(object.line)
            #expect(read["text"] as? String == value)
            #expect(read["after"] as? Int == 1)
        }
    }

    @Test func numbersReadBack() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let integer = Int64.random(in: Int64.min...Int64.max, using: &generator) >> Int64.random(in: 0...63, using: &generator)
            let hundredths = UInt64.random(in: 0...1_000_000_000, using: &generator)
            var object = JSONObject()
            object.add("integer", integer)
            object.add("small", Int8.random(in: -128...127, using: &generator))
            object.add("accuracy", hundredths: hundredths)
            let tenths = UInt64(UInt32.random(in: 0...UInt32.max, using: &generator)) >> UInt64.random(in: 0...31, using: &generator)
            object.add("uptime", tenths: tenths)
            let line = object.line
            let read = try parsed(line)
            #expect((read["integer"] as? NSNumber)?.int64Value == integer, "\(line)")
            // Two decimals, as the text output writes metres.
            #expect(line.contains("\"accuracy\":\(Distance.metres(Double(hundredths) / 100))"), "\(line)")
            #expect(line.contains("\"accuracy\":\(hundredths / 100).\(String(format: "%02d", hundredths % 100))"), "\(line)")
            // As the text output writes an Eddystone uptime.
            #expect(line.contains("\"uptime\":\(SightingFormatter.deciseconds(UInt32(tenths)))}"), "\(line)")
        }
        var object = JSONObject()
        object.add("max", UInt64.max)
        object.add("min", Int64.min)
        #expect(object.line == #"{"max":18446744073709551615,"min":-9223372036854775808}"#)
    }

    @Test func integerArraysReadBack() throws {
        for values in [[], [0], [1, 2, 239], [UInt8.max]] as [[UInt8]] {
            var object = JSONObject()
            object.add("handles", integers: values)
            object.add("after", 1)
            let read = try parsed(object.line)
            #expect(read["handles"] as? [Int] == values.map(Int.init), "\(object.line)")
            #expect(read["after"] as? Int == 1)
        }
    }

    @Test func bytesAddressesAndUUIDsReadBack() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let address = BluetoothAddress(UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &generator))
            let uuid = UUID()
            var object = JSONObject()
            object.add("data", hex: bytes)
            object.add("address", address: address)
            object.add("uuid", uuid: uuid)
            let read = try parsed(object.line)
            #expect(read["data"] as? String == bytes.map { String(format: "%02X", $0) }.joined())
            #expect(read["address"] as? String == address.description)
            #expect(read["uuid"] as? String == uuid.uuidString)
        }
    }

    @Test func timestampsMatchFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            // Whole milliseconds from 1970 to 2100, so rounding is not in question.
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            let unix = Double(milliseconds) / 1000
            var object = JSONObject()
            object.add("timestamp", timestamp: unix)
            let read = try parsed(object.line)
            #expect(read["timestamp"] as? String == formatter.string(from: Date(timeIntervalSince1970: unix)))
        }
    }

    /// Lines written one after another keep the last second's text: times in the same second,
    /// the next one, a step back, a jump of days, and times before 1970 must all still read
    /// as Foundation writes them.
    @Test func timestampsInSequenceMatchFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        var buffer = ByteBuffer()
        var cache = Timestamp.Cache()
        var milliseconds = Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &generator)
        for _ in 0..<5000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: milliseconds -= Int64.random(in: 1...2000, using: &generator)
            case 1: milliseconds += Int64.random(in: 1...400_000_000, using: &generator)
            case 2: milliseconds = Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &generator)
            default: milliseconds += Int64.random(in: 0...300, using: &generator)
            }
            let unix = Double(milliseconds) / 1000
            var object = JSONObject(continuing: &buffer, timestamps: cache)
            object.add("timestamp", timestamp: unix)
            object.finish(into: &buffer, timestamps: &cache)
            let read = try parsed(buffer.string())
            buffer.removeAll()
            #expect(read["timestamp"] as? String == formatter.string(from: Date(timeIntervalSince1970: unix)), "\(milliseconds)")
        }
    }

    @Test func continuesAndGivesBackABuffer() {
        var buffer = ByteBuffer()
        buffer.append("head ")
        var object = JSONObject(continuing: &buffer)
        #expect(buffer.count == 0)  // taken while the object is written
        object.add("type", literal: "ibeacon")
        object.add("ok", true)
        object.addNull("none")
        object.finish(into: &buffer)
        #expect(buffer.string() == #"head {"type":"ibeacon","ok":true,"none":null}"#)
    }
}
