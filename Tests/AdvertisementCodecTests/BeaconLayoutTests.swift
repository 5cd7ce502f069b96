// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// Layouts as the android-beacon-library writes them: bytes computed by hand from the grammar
/// (offsets from the company ID's first byte; big endian unless `l`; the power byte the
/// measured power less the correction), read back as given; the built-in formats' own bytes
/// read through their library layouts; every refusal at its term.
@Suite struct BeaconLayoutTests {
    static let altBeacon = "m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25"
    static let eddystoneUID = "s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19"
    static let eddystoneURL = "s:0-1=feaa,m:2-2=10,p:3-3:-41,i:4-21v"
    static let acme = "m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12"

    func identifiers(_ layout: BeaconLayout, _ texts: [String]) throws -> [[UInt8]] {
        try zip(layout.identifiers, texts).map { field, text in try BeaconLayout.identifier(text, for: field) }
    }

    /// AltBeacon's library layout: the same bytes as the codec's own AltBeacon (a separate
    /// implementation) but for its reserved byte, which the layout carries as its data field.
    @Test func altBeaconsLayoutGivesAltBeaconsBytes() throws {
        let layout = try BeaconLayout(parsing: Self.altBeacon)
        let data = try layout.advertisingData(
            identifiers: try identifiers(layout, ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", "2"]),
            data: [0x7E], measuredPower: -59, companyID: 0x0118)
        #expect(data.bytes == hex("""
            02 01 06                                   // Flags
            1B FF 18 01                                // manufacturer data, company 0x0118
            BE AC                                      // m:2-3=beac
            2F234454CF6D4A0FADF2F4911BA9FFA6           // i:4-19
            00 01  00 02                               // i:20-21, i:22-23
            C5                                         // p:24-24: -59
            7E                                         // d:25-25
            """))
        let own = AltBeacon(id1: UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!, id2: 1, id3: 2, measuredPower: -59,
                            reserved: 0x7E)
        #expect(own.advertisingData.bytes == data.bytes)
        let reading = try #require(layout.reading(data))
        #expect(reading.identifiers.map(BeaconLayout.text(ofIdentifier:)) == ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", "2"])
        #expect(reading.data == [0x7E] && reading.measuredPower == -59 && reading.companyID == 0x0118)
    }

    /// Eddystone-UID's: service data of FEAA with the UUID listed too, the power byte the 0 m
    /// figure (-59 less -41: -18, EE), read back as -59; the codec's own Eddystone-UID (two
    /// reserved bytes after the instance) reads through the layout the same.
    @Test func aServiceLayoutWithACorrection() throws {
        let layout = try BeaconLayout(parsing: Self.eddystoneUID)
        #expect(layout.serviceUUID == 0xFEAA && layout.powerCorrection == -41)
        let data = try layout.advertisingData(identifiers: try identifiers(layout, ["0x00112233445566778899", "0xaabbccddeeff"]),
                                              data: [], measuredPower: -59)
        #expect(data.bytes == hex("""
            02 01 06
            03 03 AA FE                                // the complete list of 16-bit UUIDs: FEAA
            15 16 AA FE                                // service data of FEAA
            00                                         // m:2-2=00
            EE                                         // p:3-3:-41: -59 + 41 = -18
            00112233445566778899 AABBCCDDEEFF          // i:4-13, i:14-19
            """))
        let reading = try #require(layout.reading(data))
        #expect(reading.identifiers.map(BeaconLayout.text(ofIdentifier:)) == ["0x00112233445566778899", "0xaabbccddeeff"])
        #expect(reading.measuredPower == -59 && reading.companyID == nil)
        let own = try EddystoneUID(txPowerAt0m: -18, namespace: hex("00112233445566778899"), instance: hex("AABBCCDDEEFF"))
        #expect(layout.reading(Beacon.eddystone(.uid(own)).advertisingData) == reading)
    }

    /// A variable-length identifier goes out at its length: Eddystone-URL's https://example.com.
    @Test func aVariableLengthIdentifierIsSentAtItsLength() throws {
        let layout = try BeaconLayout(parsing: Self.eddystoneURL)
        let data = try layout.advertisingData(identifiers: [try BeaconLayout.identifier("0x036578616d706c6507", for: layout.identifiers[0])],
                                              data: [], measuredPower: -59)
        #expect(data.bytes == hex("02 01 06  03 03 AA FE  0E 16 AA FE  10  EE  03 6578616D706C65 07"))
        let reading = try #require(layout.reading(data))
        #expect(reading.identifiers == [hex("036578616D706C6507")])
        #expect(throws: BeaconLayout.Invalid.self) { try BeaconLayout.identifier("0x" + String(repeating: "00", count: 19), for: layout.identifiers[0]) }
    }

    /// Little-endian identifiers and data, a company's own layout.
    @Test func littleEndianFieldsAreWrittenAsMarked() throws {
        let layout = try BeaconLayout(parsing: Self.acme)
        let data = try layout.advertisingData(identifiers: try identifiers(layout, ["0x01020304", "258"]),
                                              data: [0x1234, 5], measuredPower: -70)
        #expect(data.bytes == hex("""
            02 01 06
            0E FF FF FF                                // manufacturer data, company 0xFFFF (for tests)
            7A                                         // m:2-2=7a
            01 02 03 04                                // i:3-6, big endian
            02 01                                      // i:7-8l: 258 = 0x0102, little endian
            BA                                         // p:9-9: -70
            34 12                                      // d:10-11l: 0x1234, little endian
            05                                         // d:12-12
            """))
        let reading = try #require(layout.reading(data))
        #expect(reading.identifiers.map(BeaconLayout.text(ofIdentifier:)) == ["0x01020304", "258"])
        #expect(reading.data == [0x1234, 5] && reading.measuredPower == -70 && reading.companyID == 0xFFFF)
        // Another company, another match, a field cut short: not this layout's beacon.
        var other = data.bytes
        other[7] = 0x7B
        #expect(layout.reading(try AdvertisingData(parsing: other)) == nil)
        #expect(layout.reading(try AdvertisingData(parsing: hex("02 01 06  0B FF FF FF 7A 01 02 03 04 02 01 BA"))) == nil)
    }

    /// A region of a layout is its first identifiers, as the library's Region(id1, id2, id3).
    @Test func aRegionIsAPrefixOfTheIdentifiers() throws {
        let reading = BeaconLayout.Reading(identifiers: [[1, 2], [3], [4]], data: [], measuredPower: -59, companyID: nil)
        #expect(BeaconLayout.reading(reading, isIn: []) && BeaconLayout.reading(reading, isIn: [[1, 2]])
                && BeaconLayout.reading(reading, isIn: [[1, 2], [3], [4]]))
        #expect(!BeaconLayout.reading(reading, isIn: [[1, 3]]) && !BeaconLayout.reading(reading, isIn: [[1, 2], [4]])
                && !BeaconLayout.reading(reading, isIn: [[1, 2], [3], [4], [5]]))
    }

    /// A region read from the layout's text and identifiers as the library writes them: it
    /// holds the advertising data of its beacons (hand-written bytes), not others'.
    @Test func aRegionFromTextHoldsItsBeacons() throws {
        let region = try BeaconLayout.Region(layout: "acme=m:2-2=7a,i:3-6,i:7-8l,p:9-9", identifiers: ["0x01020304"])
        #expect(region.name == "acme" && region.identifiers == [[1, 2, 3, 4]] && region.identifierTexts == ["0x01020304"])
        // Company 0xFFFF, 7A, identifiers 01020304 and 0x0605 little endian, power -59 (C5).
        #expect(region.contains(try AdvertisingData(parsing: hex("02 01 06  0B FF FF FF 7A 01 02 03 04 05 06 C5"))))
        #expect(!region.contains(try AdvertisingData(parsing: hex("02 01 06  0B FF FF FF 7A 01 02 03 05 05 06 C5"))))
        #expect(!region.contains(try AdvertisingData(parsing: hex("02 01 06  0B FF FF FF 7B 01 02 03 04 05 06 C5"))))
        let narrow = try BeaconLayout.Region(layout: "m:2-2=7a,i:3-6,i:7-8l,p:9-9", identifiers: ["0x01020304", "1541"])
        #expect(narrow.name == "layout" && narrow.identifiers == [[1, 2, 3, 4], [6, 5]])
        #expect(narrow.contains(try AdvertisingData(parsing: hex("02 01 06  0B FF FF FF 7A 01 02 03 04 05 06 C5"))))
        #expect(throws: BeaconLayout.Invalid("the layout has 2 identifiers, 3 given")) {
            try BeaconLayout.Region(layout: "m:2-2=7a,i:3-6,i:7-8l,p:9-9", identifiers: ["1", "2", "3"])
        }
    }

    /// Four identifiers and a fixed measured power (`p:-:-59`): nothing sent for it.
    @Test func fourIdentifiersAndAFixedPower() throws {
        let layout = try BeaconLayout(parsing: "m:2-3=0215,i:4-7,i:8-9,i:10-10,i:11-11,p:-:-59")
        let data = try layout.advertisingData(identifiers: try identifiers(layout, ["0xdeadbeef", "65535", "7", "255"]),
                                              data: [], measuredPower: nil, companyID: 0x004C)
        #expect(data.bytes == hex("02 01 06  0D FF 4C 00  02 15  DEADBEEF  FF FF  07  FF"))
        #expect(layout.reading(data)?.measuredPower == -59)
        #expect(layout.reading(data)?.identifiers.map(BeaconLayout.text(ofIdentifier:)) == ["0xdeadbeef", "65535", "7", "255"])
        #expect(throws: BeaconLayout.Invalid("the layout fixes the measured power at -59 dBm (p:-:-59); -60 given")) {
            try layout.advertisingData(identifiers: try identifiers(layout, ["0xdeadbeef", "1", "2", "3"]), data: [],
                                       measuredPower: -60)
        }
    }

    @Test(arguments: [
        ("m:2-3=beac,i:4-19,q:20-20", "term 'q:20-20': not a term of a layout"),
        ("m:2-3=beac,xi:4-19,p:20-20", "term 'xi:4-19': not a term of a layout"),
        ("m:2-3=bea,i:4-19,p:20-20", "term 'm:2-3=bea': the hex must be 4 hex digits"),
        ("m:2-3=bexc,i:4-19,p:20-20", "term 'm:2-3=bexc': the hex must be 4 hex digits"),
        ("i:4-19,p:20-20", "the layout has no 'm:' term"),
        ("s:0-1=feaa,i:4-19,p:20-20", "the layout has no 'm:' term"),
        ("m:2-3=beac,i:19-4,p:20-20", "term 'i:19-4': the field ends (4) before it starts (19)"),
        ("m:2-3=beac,i:4-19,i:18-21,p:22-22", "terms 'i:4-19' and 'i:18-21' overlap"),
        ("m:2-3=beac,i:4-300,p:301-301", "term 'i:4-300': offset 300 is past the 253"),
        ("m:0-1=4c00,i:2-17,p:18-18", "term 'm:0-1=4c00': offsets 0-1 are the company ID"),
        ("m:2-3=beac,i:4-19v,p:20-20", "a variable-length identifier must be the layout's last field"),
        ("m:2-3=beac,i:4-19,p:20-21", "term 'p:20-21': a power field of 2 bytes"),
        ("m:2-3=beac,i:4-19,p:20-20,d:21-29", "term 'd:21-29': a data field of 9 bytes"),
        ("m:2-3=beac,i:4-19", "the layout has no power field"),
        ("m:2-3=beac,p:4-4", "the layout has no identifier"),
        ("m:2-3=beac,i:4-19x,p:20-20", "term 'i:4-19x': after the offsets"),
        ("m:2-3=beac,,i:4-19,p:20-20", "an empty term"),
        ("", "the layout is empty"),
        ("m:2-3=beac,i:4-19,p:20-20:-200", "the correction must be a whole number of dB from -127 to 127"),
        ("m:2-3=beac,s:2-3=feaa,i:4-19,p:20-20", "term 's:2-3=feaa': a service UUID is 16-bit service data's first two bytes"),
        ((["m:2-3=beac", "p:4-4"] + (5...35).map { "i:\($0)-\($0)" }).joined(separator: ","), "33 terms, more than the 32"),
    ])
    func aLayoutIsRefusedAtItsTerm(layout: String, message: String) {
        #expect { try BeaconLayout(parsing: layout) } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// An extra layout (Eddystone-TLM's, from the library) needs neither identifiers nor power.
    @Test func anExtraLayoutReads() throws {
        let layout = try BeaconLayout(parsing: "x,s:0-1=feaa,m:2-2=20,d:3-3,d:4-5,d:6-7,d:8-11,d:12-15")
        #expect(layout.extra && layout.identifiers.isEmpty && layout.dataFields.count == 5)
        let data = try layout.advertisingData(identifiers: [], data: [0, 3000, 0x1580, 100, 360], measuredPower: nil)
        #expect(data.bytes == hex("02 01 06  03 03 AA FE  11 16 AA FE  20 00 0BB8 1580 00000064 00000168"))
        #expect(layout.reading(data)?.data == [0, 3000, 0x1580, 100, 360])
    }

    /// Identifiers and data as the library writes them, each within its field.
    @Test func valuesAreReadWithinTheirFields() throws {
        let two = BeaconLayout.Field(start: 4, end: 5), sixteen = BeaconLayout.Field(start: 4, end: 19)
        #expect(try BeaconLayout.identifier("65535", for: two) == [0xFF, 0xFF])
        #expect(throws: BeaconLayout.Invalid.self) { try BeaconLayout.identifier("65536", for: two) }
        #expect(throws: BeaconLayout.Invalid.self) { try BeaconLayout.identifier("0x0102", for: sixteen) }
        #expect(throws: BeaconLayout.Invalid.self) { try BeaconLayout.identifier("0102", for: two) }
        #expect(try BeaconLayout.identifier("7", for: sixteen) == Array(repeating: 0, count: 15) + [7])
        #expect(BeaconLayout.text(ofIdentifier: [0x0A]) == "10")
        #expect(BeaconLayout.text(ofIdentifier: [0x01, 0x02, 0x03]) == "0x010203")
        #expect(try BeaconLayout.dataValue("0xFFFFFFFFFFFFFFFF", for: BeaconLayout.Field(start: 4, end: 11)) == .max)
        #expect(throws: BeaconLayout.Invalid.self) { try BeaconLayout.dataValue("256", for: BeaconLayout.Field(start: 4, end: 4)) }
    }
}
