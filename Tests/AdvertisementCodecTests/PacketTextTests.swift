// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

/// The reader of other tools' text, line by line: the bytes it assembles and the errors it
/// gives. (The real samples run end to end in DecodeSpellingTests.)
@Suite struct PacketTextTests {
    func read(_ text: String) -> [PacketTextReader.Item] {
        var reader = PacketTextReader()
        var items: [PacketTextReader.Item] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            items += reader.add(String(line), number: index + 1)
        }
        return items + reader.finish()
    }

    /// `check` on the UTF-8 of `text`.
    static func utf8(_ text: String, _ check: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var copy = text
        return copy.withUTF8(check)
    }

    func packets(_ text: String) -> [[UInt8]] {
        read(text).compactMap { if case let .packet(packet) = $0 { packet.bytes } else { nil } }
    }

    func failures(_ text: String) -> [String] {
        read(text).compactMap { if case let .failure(_, message) = $0 { message } else { nil } }
    }

    @Test func hcidumpPacketsAcrossLines() {
        let text = """
            HCI sniffer - Bluetooth packet analyzer ver 5.66
            < 01 03 0C 00
            > 04 3E 0C 02 01 03 00
              01 02 03 04 05 06 00 C4
            > 0000: 04 0e 04 01 03 0c 00                              .......
            > 0000: 04 3e 0c 02 01 03 00 01  02 03 04 05 06 00 c4 11  .>..............
              0010: 22                                                "
            """
        #expect(packets(text) == [
            [0x01, 0x03, 0x0C, 0x00],
            [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xC4],
            [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00],
            [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xC4, 0x11, 0x22],
        ])
        #expect(read(text).allSatisfy { if case let .packet(packet) = $0 { packet.spelling == .hcidump } else { true } })
        // A packet is numbered by the line it starts on.
        #expect(read(text).compactMap { if case let .packet(packet) = $0 { packet.line } else { nil } } == [2, 3, 5, 6])
    }

    @Test func hcidumpsDecodedTextSaysToAddR() {
        #expect(failures("> HCI Event: LE Meta Event (0x3e) plen 43") == [
            "line 1: hcidump's decoded text holds no packet bytes: run hcidump with -R (or -X -R)",
        ])
    }

    /// A btmon packet's report rebuilt from the bytes btmon prints: an AltBeacon's company data.
    @Test func btmonReportsFromTheBytesItPrints() {
        let text = """
            > HCI Event: LE Meta Event (0x3e) plen 43                      #7 [hci0] 1.234567
                  LE Advertising Report (0x02)
                    Num reports: 1
                    Event type: Non connectable undirected - ADV_NONCONN_IND (0x03)
                    Address type: Random (0x01)
                    Address: C1:02:03:04:05:06 (Static)
                    Data length: 31
                    Flags: 0x06
                      LE General Discoverable Mode
                    Company: Radius Networks, Inc. (280)
                      Data: beac39ed98ff2900441a802f9c398fc199d200650002c500
                    RSSI: -60 dBm (0xc4)
            > HCI Event: Command Complete (0x0e) plen 4                    #8 [hci0] 1.234600
                  LE Set Scan Enable (0x08|0x000c) ncmd 1
                    Status: Success (0x00)
            """
        let manufacturer: [UInt8] = [0x1B, 0xFF, 0x18, 0x01] + hex("beac39ed98ff2900441a802f9c398fc199d200650002c500")
        #expect(packets(text) == [[0x3E, 0x2B, 0x02, 0x01, 0x03, 0x01, 0x06, 0x05, 0x04, 0x03, 0x02, 0xC1, 0x1F,
                                   0x02, 0x01, 0x06] + manufacturer + [0xC4]])
        #expect(failures(text).isEmpty)
        #expect(PacketTextReader.isBtmonHeader("> HCI Event: LE Meta Event (0x3e) plen 43   #7 [hci0] 1.2"))
        #expect(!PacketTextReader.isBtmonHeader("> HCI Event: LE Meta Event (0x3e) plen 43"), "hcidump's")
    }

    @Test func offsetDumpsOfEveryTool() {
        let bytes = Array(0x00...0x12).map(UInt8.init)
        let dumps = [
            "00000000: 0001 0203 0405 0607 0809 0a0b 0c0d 0e0f  ................\n00000010: 1011 12                                  ...",
            "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n00000010  10 11 12                                          |...|\n00000013",
            "000000 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n000010 10 11 12\n000013",
            "0000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f   ................\n0010  10 11 12                                          ...",
        ]
        for dump in dumps {
            #expect(packets(dump) == [bytes], "\(dump)")
            #expect(failures(dump).isEmpty)
        }
        // Two dumps in a row (a blank line between them, or none): two packets.
        #expect(packets(dumps[3] + "\n\n" + dumps[3]).count == 2)
        #expect(packets(dumps[2] + "\n" + dumps[2]).count == 2)
    }

    /// ASCII that looks like hex stays out of the bytes: the row holds 16 at most.
    @Test func anAsciiColumnOfHexLettersIsNotRead() {
        let row = "0000  61 62 63 64 65 66 61 62  63 64 65 66 61 62 63 64   abcdefabcdefabcd"
        #expect(packets(row) == [Array("abcdefabcdefabcd".utf8)])
    }

    @Test func dumpsThatDisagreeWithTheirOffsetsAreErrors() {
        #expect(failures("000000 01 02 03\n000004 04\n000005") == [
            "line 2: offset 4 where 3 was expected (the dump's rows and offsets disagree)",
        ])
        #expect(failures("00000000  01 02  |..|\n*\n00000010  03  |.|") == [
            "line 2: repeated rows left out (\"*\"): dump with hexdump -v, or xxd",
        ])
    }

    @Test func androidLists() {
        #expect(packets("D/Scan: ScanRecord : [2, 1, 6, -1, 127, -128, 255]") == [[2, 1, 6, 0xFF, 0x7F, 0x80, 0xFF]])
        #expect(packets("mBytes=[2, 1, 6]") == [[2, 1, 6]])
        #expect(failures("mBytes=[2, 1, 300]") == ["line 1: a list of bytes as signed decimals (-128 to 255) was expected"])
        // Not a byte list: left to the caller.
        #expect(read("[error] 1, 2") == [.plain(line: 1)])
    }

    @Test func androidScanRecordsBecomeTheirStructures() {
        let line = "ScanRecord [mAdvertiseFlags=6, mManufacturerSpecificData={76=[2, 21], 280=[-66, -84]}, "
            + "mServiceData={0000feaa-0000-1000-8000-00805f9b34fb=[16, -18]}, mTxPowerLevel=-2147483648]"
        #expect(packets(line) == [[0x05, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                                   0x05, 0xFF, 0x18, 0x01, 0xBE, 0xAC,
                                   0x05, 0x16, 0xAA, 0xFE, 0x10, 0xEE]])
        #expect(read("    mManufacturerSpecificData={}, ") == [.plain(line: 1)])
        #expect(failures("mServiceData={6e400001-b5a3-f393-e0a9-e50e24dcca9e=[1]}") == [
            "line 1: service 6e400001-b5a3-f393-e0a9-e50e24dcca9e is not a 16-bit UUID on the Bluetooth base",
        ])
    }

    @Test func appleData() {
        // The first <...> that holds hex, past a description in angle brackets.
        #expect(packets("found:<CBPeripheral: 0x6000, name = (null)> data: <4c000215 a495bb30 05>")
                == [[0x4C, 0x00, 0x02, 0x15, 0xA4, 0x95, 0xBB, 0x30, 0x05]])
        #expect(packets("kCBAdvDataManufacturerData = {length = 5, bytes = 0x0905260201};") == [[0x09, 0x05, 0x26, 0x02, 0x01]])
        // Service data keyed by its 16-bit UUID, in either form.
        #expect(packets("    1827 = {length = 3, bytes = 0x446d6f};") == [[0x06, 0x16, 0x27, 0x18, 0x44, 0x6D, 0x6F]])
        #expect(packets(" FEAA = <10ee01>;") == [[0x06, 0x16, 0xAA, 0xFE, 0x10, 0xEE, 0x01]])
        #expect(failures("{length = 29, bytes = 0x110228c1 d738c1a4 28410000 00000000 ... 04050607 08090a0b }") == [
            "line 1: the log left out the middle of these 29 bytes (NSData shows only the first 16 and last 8 of "
                + "longer data): log the bytes as hex instead",
        ])
        #expect(failures("{length = 4, bytes = 0x0102}") == ["line 1: the log says 4 bytes, and shows 2"])
        // A bare value, as iOS prints it on its own: not an hcidump packet ("< " with a space).
        #expect(packets("<4c000215 a495bb30 05>") == [[0x4C, 0x00, 0x02, 0x15, 0xA4, 0x95, 0xBB, 0x30, 0x05]])
        #expect(packets("< 01 03 0C 00") == [[0x01, 0x03, 0x0C, 0x00]], "hcidump's own line still is one")
    }

    @Test func plainHexIsLeftToTheCaller() {
        func plain(_ text: String) -> Bool { Self.utf8(text, PacketTextReader.startsLikeHex) }
        #expect(plain("0201061AFF4C00"))
        #expect(plain("02 01 06"))
        #expect(plain("0x02 0x01, 0X06"))
        #expect(plain("02:01:06"))
        #expect(plain("0000"), "a lone word of zeros is hex, not a dump")
        #expect(!plain("btsnoop version: 1 datalink type: 1002"))
        #expect(!plain("00000000: 0201 061a"), "an offset dump's first row")
        #expect(!plain("000000 02 01 06"))
        #expect(!plain("> 04 3E"))
        #expect(!plain("  00 02 15"), "indented: perhaps hcidump's continuation")
        #expect(read("0201061AFF4C00") == [.plain(line: 1)])
    }

    @Test func logTextIsNotAnAttemptAtHex() {
        func looks(_ text: String) -> Bool { Self.utf8(text, PacketTextReader.looksLikeHex) }
        #expect(looks("02 01 0G"))
        #expect(looks("0x02 0x01"))
        #expect(!looks("08-29 08:37:43.736  2873  2919 D BtGatt.GattService: hello"))
        #expect(!looks("hello world"))
        #expect(!looks("   "))
    }
}
