// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

@Suite struct HexTextTests {
    @Test(arguments: [
        "0201061A",
        "02 01 06 1a",
        "02:01:06:1A",
        "0x02 0x01 0x06 0x1A",
        "0x0201061a",
        "  02-01-06-1A  ",
        "02,01,06,1A",
        "> 02 01 06 1A",
        "02 01\t06 1A\r",
    ])
    func acceptsCommonSpellings(text: String) throws {
        #expect(try HexText.parse(text) == [0x02, 0x01, 0x06, 0x1A])
    }

    @Test func rejectsNonHexCharacterAtItsColumn() {
        let error = codecError { _ = try HexText.parse("02 0g 06") }
        #expect(error?.offset == 4)
        #expect(error?.reason == .unexpectedValue(field: "character", expected: "a hex digit", found: "'g'"))
    }

    @Test func rejectsOddDigitGroupAtItsStart() {
        let error = codecError { _ = try HexText.parse("02 1 06") }
        #expect(error?.offset == 3)
    }

    @Test func rejectsTrailingOddDigit() {
        let error = codecError { _ = try HexText.parse("02010") }
        #expect(error?.offset == 4)
    }

    @Test func rejectsPrefixInsideAGroup() {
        let error = codecError { _ = try HexText.parse("020x01") }
        #expect(error?.offset == 3)
    }

    @Test func rejectsEmptyInput() {
        let error = codecError { _ = try HexText.parse("  ") }
        #expect(error?.reason == .unrecognized(expected: "at least one byte of hex"))
    }

    @Test func annotatedHexDropsComments() throws {
        let text = """
            02 01 06   // Flags
            03 FF      // manufacturer data, 2 bytes
            4C 00
            """
        #expect(try HexText.parse(annotated: text) == [0x02, 0x01, 0x06, 0x03, 0xFF, 0x4C, 0x00])
    }

    @Test func formatsUpperCaseWithSeparator() {
        #expect(HexText.format([0x0A, 0xFF, 0x00]) == "0AFF00")
        #expect(HexText.format([0x0A, 0xFF, 0x00], separator: ":") == "0A:FF:00")
        #expect(HexText.format([]) == "")
    }

    @Test func roundTripsEveryByteValue() throws {
        let all = (0...255).map { UInt8($0) }
        #expect(try HexText.parse(HexText.format(all)) == all)
        #expect(try HexText.parse(HexText.format(all, separator: " ").lowercased()) == all)
    }

    /// Every byte value against the standard library's own reading of one hex digit.
    @Test func nibbleOfEveryByte() {
        for value in 0...255 {
            let char = UInt8(value)
            let expected = value < 128 ? UInt8(String(UnicodeScalar(char)), radix: 16) : nil
            #expect(HexText.nibble(char) == expected, "\(value)")
        }
    }

    /// The pair fast path stops where the digits stop, at every length, and the bytes it
    /// filled are exactly the pairs (the rest of the line goes to the general reader).
    @Test func pairRunStopsAtEveryPosition() throws {
        let digits = Array("0201061AFF4C0002".utf8)
        for cut in 0...digits.count {
            var text = Array(digits[..<cut])
            text += Array(" 0A".utf8)
            var bytes: [UInt8] = [0xEE]  // output appended after what is there
            try text.withUnsafeBufferPointer { buffer throws(CodecError) in
                if cut % 2 == 0 {
                    try HexText.parse(utf8: buffer, into: &bytes)
                } else {
                    #expect(throws: CodecError.self) { try HexText.parse(utf8: buffer, into: &bytes) }
                }
            }
            if cut % 2 == 0 {
                let pairs = stride(from: 0, to: cut, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
                #expect(bytes == [0xEE] + pairs + [0x0A], "cut \(cut)")
            }
        }
    }
}

@Suite struct UUIDTextTests {
    @Test(arguments: [
        "39ED98FF-2900-441A-802F-9C398FC199D2",
        "39ed98ff-2900-441a-802f-9c398fc199d2",
        "39ED98FF2900441A802F9C398FC199D2",
    ])
    func acceptsWithOrWithoutDashes(text: String) throws {
        #expect(try UUID(beaconText: text) == appleExampleUUID)
    }

    @Test func rejectsFifteenBytesSayingHowMany() {
        let error = codecError { _ = try UUID(beaconText: "39ED98FF2900441A802F9C398FC199") }
        #expect(error?.reason == .unexpectedValue(field: "length",
                                                  expected: "32 hex digits (16 bytes), with or without dashes",
                                                  found: "30 hex digits (15 bytes)"))
    }

    @Test func rejectsMisplacedDash() {
        // The dash should stand at offset 8; 'F' stands there.
        let error = codecError { _ = try UUID(beaconText: "39ED98F-F2900-441A-802F-9C398FC199D2") }
        #expect(error?.offset == 8)
        #expect(error?.reason == .unexpectedValue(field: "separator", expected: "'-' in the form 8-4-4-4-12", found: "'F'"))
    }

    @Test func bigEndianBytesAreTheWrittenOrder() {
        #expect(appleExampleUUID.bigEndianBytes == hex("39ED98FF2900441A802F9C398FC199D2"))
    }
}

@Suite struct BluetoothAddressTests {
    @Test func wireOrderIsLeastSignificantFirst() throws {
        let address = try BluetoothAddress(parsing: "DA:4C:10:DE:17:01")
        #expect(address.littleEndianBytes == [0x01, 0x17, 0xDE, 0x10, 0x4C, 0xDA])
        #expect(BluetoothAddress(littleEndian: [0x01, 0x17, 0xDE, 0x10, 0x4C, 0xDA]) == address)
        #expect(address.description == "DA:4C:10:DE:17:01")
    }

    @Test func staticRandomNeedsTopTwoBitsSet() throws {
        #expect(try BluetoothAddress(parsing: "C0:00:00:00:00:01").isStaticRandom)
        #expect(try !BluetoothAddress(parsing: "80:00:00:00:00:01").isStaticRandom)
    }

    @Test func rejectsBadSeparatorAndDigit() {
        #expect(codecError { _ = try BluetoothAddress(parsing: "DA:4C:10:DE:17.01") }?.offset == 14)
        #expect(codecError { _ = try BluetoothAddress(parsing: "DA:4C:10:DE:17:0Z") }?.offset == 16)
        #expect(codecError { _ = try BluetoothAddress(parsing: "DA:4C") }?.offset == 0)
    }

    /// Into caller-owned memory sized by `mostBytes`: every written form of random bytes reads
    /// back as those bytes, and nothing is written past the room asked for.
    @Test func parseIntoExactRoom() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 1...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let pairs = bytes.map { String(format: "%02X", $0) }
            for text in [pairs.joined(), pairs.joined(separator: " ").lowercased(),
                         pairs.map { "0x" + $0 }.joined(separator: ", "), "> " + pairs.joined(separator: ":")] {
                let utf8 = Array(text.utf8)
                let room = HexText.mostBytes(inUTF8Count: utf8.count)
                var out = [UInt8](repeating: 0, count: room + 1)
                out[room] = 0xA5  // a guard byte just past the room
                let written = try utf8.withUnsafeBufferPointer { text throws(CodecError) in
                    try out.withUnsafeMutableBufferPointer { all throws(CodecError) in
                        try HexText.parse(utf8: text, into: UnsafeMutableBufferPointer(rebasing: all[..<room]))
                    }
                }
                #expect(Array(out[..<written]) == bytes, "\(text)")
                #expect(out[room] == 0xA5, "\(text)")
            }
        }
    }
}

/// Error messages are built as bytes: every integer must read as `String` writes it, and the
/// pieces must join as `String` joins them.
@Suite struct MessageTextTests {
    @Test func integersAndPiecesReadAsStringWritesThem() {
        var generator = SystemRandomNumberGenerator()
        var values = [0, 1, -1, 9, 10, -10, 99, 100, Int.max, Int.min, Int.max - 1, Int.min + 1]
        for _ in 0..<2000 { values.append(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0...63, using: &generator)) }
        for value in values {
            var text = MessageText(reservingCapacity: 0)
            text.append("é→ ")
            text.append(value)
            text.append(" left" as StaticString)
            #expect(text.string == "é→ \(value) left")
        }
    }
}
