// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

@Suite struct H4StreamDecoderTests {
    let stream = hex("""
        04 0E 04 01 03 0C 00                  // event: Command Complete for Reset
        01 0A 20 01 01                        // command: LE Set Advertising Enable
        02 01 20 03 00 AA BB CC               // ACL: handle 0x2001, 3 bytes
        04 3E 03 14 AA BB                     // event: LE Meta, unknown subevent
        """)
    let expected: [H4Packet] = [
        H4Packet(type: .event, body: hex("0E 04 01 03 0C 00")),
        H4Packet(type: .command, body: hex("0A 20 01 01")),
        H4Packet(type: .aclData, body: hex("01 20 03 00 AA BB CC")),
        H4Packet(type: .event, body: hex("3E 03 14 AA BB")),
    ]

    func drain(_ decoder: inout H4StreamDecoder) throws -> [H4Packet] {
        var packets: [H4Packet] = []
        while let packet = try decoder.next() { packets.append(packet) }
        return packets
    }

    @Test func wholeStreamAtOnce() throws {
        var decoder = H4StreamDecoder()
        decoder.append(stream)
        #expect(try drain(&decoder) == expected)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func splitAtEveryPoint() throws {
        for cut in 0...stream.count {
            var decoder = H4StreamDecoder()
            decoder.append(stream[..<cut])
            var packets = try drain(&decoder)
            decoder.append(stream[cut...])
            packets += try drain(&decoder)
            #expect(packets == expected, "cut at \(cut)")
        }
    }

    @Test func oneByteAtATime() throws {
        var decoder = H4StreamDecoder()
        var packets: [H4Packet] = []
        for byte in stream {
            decoder.append([byte])
            packets += try drain(&decoder)
        }
        #expect(packets == expected)
    }

    @Test func typeByteThenBodyAsTwoWrites() throws {
        // rootcanal writes each event as the type byte, then the rest.
        var decoder = H4StreamDecoder()
        decoder.append([0x04])
        #expect(try decoder.next() == nil)
        #expect(decoder.bytesNeeded == 2)
        decoder.append(hex("0E 04 01 03 0C"))
        #expect(try decoder.next() == nil)
        #expect(decoder.bytesNeeded == 1)
        decoder.append([0x00])
        #expect(try decoder.next() == expected[0])
    }

    @Test func unknownPacketTypeThrowsWithStreamOffset() {
        var decoder = H4StreamDecoder()
        decoder.append(hex("04 0E 04 01 03 0C 00  09 00"))
        #expect(throws: Never.self) { _ = try decoder.next() }
        let error = codecError { _ = try decoder.next() }
        #expect(error?.offset == 7)
        #expect(error?.reason == .unexpectedValue(field: "packet type", expected: "0x01 to 0x05", found: "0x09"))
    }

    @Test func singlePacketParsingRejectsShortAndLong() {
        #expect(codecError { _ = try H4Packet(parsing: hex("04 0E 04 01")[...]) }?.reason.isTruncation == true)
        #expect(codecError { _ = try H4Packet(parsing: hex("04 0E 01 01 FF")[...]) }?.reason == .trailingBytes(count: 1))
    }

    @Test func largeACLLengthUsesBothBytes() throws {
        var decoder = H4StreamDecoder()
        let payload = [UInt8](repeating: 0x5A, count: 300)
        decoder.append(hex("02 01 20 2C 01") + payload)
        let packet = try decoder.next()
        #expect(packet?.body.count == 4 + 300)
    }
}
