// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// The pcap and pcapng reader over captures made by Wireshark's tools
/// (Tests/BeaconEmitterTests/Fixtures/pcap/README.md).
@Suite struct PcapParserTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../BeaconEmitterTests/Fixtures/pcap").standardized
    static let files = ["rootcanal-scan.pcap", "rootcanal-scan.pcapng", "rootcanal-scan-h4.pcap", "sniffer-ll.pcap",
                        "sniffer-ll-phdr.pcap", "sniffer-ll-bad-crc.pcap", "sniffer-ll-phdr-crc-flags.pcap"]

    func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    }

    struct Read {
        var packets: [BTSnoopParser.PacketView] = []
        var failure: CodecError?
    }

    /// Reads `bytes` in chunks of `chunk`, then finishes.
    func read<Parser: CapturePacketSource>(_ bytes: [UInt8], chunk: Int, as _: Parser.Type) -> Read {
        var parser = Parser()
        var result = Read()
        var packet = BTSnoopParser.PacketView(timestamp: 0, type: .event, body: [])
        do throws(CodecError) {
            var start = 0
            while start < bytes.count {
                parser.append(bytes[start..<min(bytes.count, start + chunk)])
                start += chunk
                while try parser.nextPacket(into: &packet) {
                    result.packets.append(BTSnoopParser.PacketView(timestamp: packet.timestamp, type: packet.type,
                                                                   body: ArraySlice(Array(packet.body))))
                }
            }
            try parser.finish()
        } catch {
            result.failure = error
        }
        return result
    }

    @Test(arguments: files)
    func chunkingChangesNothing(file: String) throws {
        let bytes = try bytes(file)
        let whole = read(bytes, chunk: bytes.count, as: PcapParser.self)
        #expect(whole.failure == nil)
        #expect(!whole.packets.isEmpty)
        for chunk in [1, 3, 7, 64] {
            let pieces = read(bytes, chunk: chunk, as: PcapParser.self)
            #expect(pieces.failure == nil)
            #expect(pieces.packets.map(\.body) == whole.packets.map(\.body), "chunks of \(chunk)")
            #expect(pieces.packets.map(\.timestamp) == whole.packets.map(\.timestamp))
        }
    }

    /// Every cut of every capture: the packets before the cut, then an error at the offset of
    /// the record (or header) that was cut. Never a crash.
    @Test(arguments: files)
    func everyTruncation(file: String) throws {
        let bytes = try bytes(file)
        let whole = read(bytes, chunk: bytes.count, as: PcapParser.self)
        for length in 0..<bytes.count {
            let cut = read(Array(bytes[..<length]), chunk: 512, as: PcapParser.self)
            #expect(whole.packets.map(\.body).starts(with: cut.packets.map(\.body)), "cut at \(length)")
            guard let failure = cut.failure else {
                #expect(try recordEnds(bytes).contains(length), "\(file) cut at \(length): no error")
                continue
            }
            guard case .truncated = failure.reason else {
                Issue.record("\(file) cut at \(length): \(failure)")
                continue
            }
            #expect(failure.offset <= length, "\(file) cut at \(length): \(failure)")
        }
    }

    /// Where the records (pcap) or blocks (pcapng) end, walked from the layout.
    func recordEnds(_ bytes: [UInt8]) throws -> Set<Int> {
        func le32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let pcapng = bytes.starts(with: [0x0A, 0x0D, 0x0D, 0x0A])
        var ends: Set<Int> = []
        var offset = pcapng ? 0 : 24
        if !pcapng { ends.insert(24) }
        while offset < bytes.count {
            offset += pcapng ? le32(offset + 4) : 16 + le32(offset + 8)
            ends.insert(offset)
        }
        return ends
    }

    /// editcap's conversion of the btsnoop capture holds the same packets at the same times.
    @Test func editcapsConversionMatchesTheBtsnoopCapture() throws {
        let btsnoop = [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent("../rootcanal-scan.btsnoop")))
        let original = read(btsnoop, chunk: 4096, as: BTSnoopParser.self)
        #expect(original.failure == nil)
        for file in ["rootcanal-scan.pcap", "rootcanal-scan.pcapng"] {
            let converted = read(try bytes(file), chunk: 4096, as: PcapParser.self)
            #expect(converted.packets.map(\.body) == original.packets.map(\.body), "\(file)")
            #expect(converted.packets.map(\.type) == original.packets.map(\.type), "\(file)")
            #expect(converted.packets.map(\.timestamp) == original.packets.map(\.timestamp), "\(file)")
        }
    }

    /// A sniffer's PDUs become the reports a controller would send: legacy and extended.
    @Test func linkLayerPDUsBecomeReports() throws {
        let read = read(try bytes("sniffer-ll-phdr.pcap"), chunk: 4096, as: PcapParser.self)
        let data = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        let legacy: [UInt8] = hex("3E 2A  02 01  03 01 0117DE104CDA  1E") + data + [0xC4]
        let extended: [UInt8] = hex("3E 38  0D 01  0000 01 0117DE104CDA  01 00 FF 7F BA 0000 00 000000000000  1E") + data
        #expect(read.packets.map(\.body) == [ArraySlice(legacy), ArraySlice(extended)])
        let events = try read.packets.map { try HCIEvent(parsing: Array($0.body)) }
        #expect(events.count == 2)
    }

    /// The CRC of the reference iBeacon's ADV_NONCONN_IND (header and payload), as the capture
    /// stores it; Wireshark 4.0 (`tshark -V`) passes the frame ending in these bytes and marks
    /// "Incorrect CRC" on each of the three other orders of them.
    @Test func theLinkLayerCRCIsTheSpecifications() {
        let pdu = hex("42 24  0117DE104CDA  0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        #expect(LinkLayerCRC.crc(pdu) == 0xB20D07)
        #expect(LinkLayerCRC.matches(pdu: pdu, crcBytes: hex("07 0D B2")))
        for wrong in [hex("B2 0D 07"), hex("4D B0 E0"), hex("E0 B0 4D"), hex("07 0D B3"), hex("07 0D")] {
            #expect(!LinkLayerCRC.matches(pdu: pdu, crcBytes: wrong))
        }
        var damaged = pdu
        damaged[6] ^= 0x40  // one bit of the address
        #expect(!LinkLayerCRC.matches(pdu: damaged, crcBytes: hex("07 0D B2")))
    }

    /// A PDU whose CRC failed is no advertiser: a bit error in its address would be a device
    /// that never existed. It is left out and counted; `includeBadCRC` hands it out.
    @Test func aPDUWithABadCRCIsLeftOutAndCounted() throws {
        func reports(_ file: String, includeBadCRC: Bool = false) throws -> (addresses: [String], bad: Int) {
            var parser = PcapParser()
            parser.includeBadCRC = includeBadCRC
            parser.append(try bytes(file))
            var packet = BTSnoopParser.PacketView(timestamp: 0, type: .event, body: [])
            var addresses: [String] = []
            while try parser.nextPacket(into: &packet) {
                // The address of a legacy report: after 3E LL 02 01 type addressType, reversed.
                addresses.append(HexText.format(packet.body.dropFirst(6).prefix(6).reversed()))
            }
            try parser.finish()
            return (addresses, parser.badCRCPackets)
        }
        // The second PDU is the first with one bit of its address flipped (Wireshark: "Incorrect CRC").
        #expect(try reports("sniffer-ll-bad-crc.pcap") == (["DA4C10DE1701"], 1))
        #expect(try reports("sniffer-ll-bad-crc.pcap", includeBadCRC: true) == (["DA4C10DE1701", "DA0C10DE1701"], 0))
        // A sniffer that checked the CRC says so in its header, and its verdict counts: the first
        // record is marked invalid (its CRC bytes are right), the second valid (its are zeros).
        #expect(try reports("sniffer-ll-phdr-crc-flags.pcap") == (["DA4C10DE1701"], 1))
        #expect(try reports("sniffer-ll.pcap").bad == 0 && reports("sniffer-ll-phdr.pcap").bad == 0)
    }

    @Test func otherLinkTypesAndMagicsAreRefused() throws {
        var ethernet = try bytes("sniffer-ll.pcap")
        ethernet[20] = 1  // link type 1, Ethernet
        let read = read(ethernet, chunk: 4096, as: PcapParser.self)
        #expect(read.failure?.description == "pcap capture: byte 20: link type: expected 201, 187, 251 or 256 "
                + "(Bluetooth HCI H4 or LE link layer), found 1")
        #expect(PcapParser.format(of: Array("btsnoop\0".utf8)) == nil)
        #expect(PcapParser.format(of: [0xA1, 0xB2, 0xC3, 0xD4]) == .pcap)
        #expect(PcapParser.format(of: [0x0A, 0x0D, 0x0D, 0x0A]) == .pcapng)
    }

    /// A big-endian pcap (as written on a big-endian machine) reads the same.
    @Test func bigEndianPcap() throws {
        let little = try bytes("sniffer-ll.pcap")
        var big: [UInt8] = []
        func swapped(_ range: Range<Int>) -> [UInt8] { Array(little[range].reversed()) }
        big += swapped(0..<4) + swapped(4..<6) + swapped(6..<8) + swapped(8..<12) + swapped(12..<16) + swapped(16..<20)
            + swapped(20..<24)
        var offset = 24
        while offset < little.count {
            let length = Int(little[offset + 8]) | Int(little[offset + 9]) << 8
            for field in 0..<4 { big += swapped((offset + 4 * field)..<(offset + 4 * field + 4)) }
            big += little[(offset + 16)..<(offset + 16 + length)]
            offset += 16 + length
        }
        let a = read(little, chunk: 4096, as: PcapParser.self)
        let b = read(big, chunk: 4096, as: PcapParser.self)
        #expect(b.failure == nil)
        #expect(b.packets.map(\.body) == a.packets.map(\.body))
        #expect(b.packets.map(\.timestamp) == a.packets.map(\.timestamp))
    }
}

/// A capture's clock can hold any 64-bit value; none of them may trap.
@Suite struct CaptureClockExtremesTests {
    @Test(arguments: [Int64(1), 1_000, 1_000_000, 1_000_000_000, 1_000_000_000_000_000_000])
    func pcapngTimestampsAtTheEndsOfTheRange(unitsPerSecond: Int64) {
        for units in [Int64.min, .min + 1, -1, 0, 1, .max - 1, .max] {
            let microseconds = PcapParser.timestamp(units: units, unitsPerSecond: unitsPerSecond)
            if units == 0 { #expect(microseconds == BTSnoopParser.unixEpochOffset) }
            if units > 0 { #expect(microseconds >= BTSnoopParser.unixEpochOffset) }
        }
        // An ordinary time is exact at every resolution that can count it: 2024-01-01T00:00:00.5Z.
        if unitsPerSecond <= 1_000_000_000 {
            let half = PcapParser.timestamp(units: 1_704_067_200 * unitsPerSecond + unitsPerSecond / 2,
                                            unitsPerSecond: unitsPerSecond)
            #expect(half == BTSnoopParser.unixEpochOffset + 1_704_067_200_000_000 + (unitsPerSecond >= 2 ? 500_000 : 0))
        }
    }

    @Test func secondsBetweenAnyTwoTimestamps() {
        #expect(BTSnoopParser.seconds(from: 0, to: 1_500_000) == 1.5)
        #expect(BTSnoopParser.seconds(from: .max, to: .min) < -1.8e13)
        #expect(BTSnoopParser.seconds(from: .min, to: .max) > 1.8e13)
        #expect(BTSnoopParser.unixTime(BTSnoopParser.unixEpochOffset) == 0)
        #expect(BTSnoopParser.unixTime(.min).isFinite)
    }
}
