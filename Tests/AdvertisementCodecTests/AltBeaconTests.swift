// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

@Suite struct AltBeaconTests {
    let vector = hex("""
        02 01 06                                         // Flags
        1B FF                                            // length 27, manufacturer specific data
        18 01                                            // company 0x0118 (Radius Networks), little-endian
        BE AC                                            // AltBeacon code
        39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2  // beacon ID: id1
        00 65                                            //            id2 = 101
        00 02                                            //            id3 = 2
        C5                                               // reference RSSI -59 dBm
        7E                                               // reserved
        """)

    @Test func buildsAndParsesTheVector() throws {
        let beacon = AltBeacon(id1: appleExampleUUID, id2: 101, id3: 2, measuredPower: -59, reserved: 0x7E)
        #expect(beacon.advertisingData.bytes == vector)
        #expect(vector.count == 31)
        let parsed = try Beacon.beacons(in: AdvertisingData(parsing: vector))
        #expect(parsed == [.altBeacon(beacon)])
    }

    @Test func anyCompanyCarriesTheFormat() throws {
        var bytes = vector
        bytes[5] = 0x59
        bytes[6] = 0x00
        let parsed = try Beacon.beacons(in: AdvertisingData(parsing: bytes))
        guard case let .altBeacon(beacon) = parsed.first else {
            Issue.record("no AltBeacon in \(parsed)")
            return
        }
        #expect(beacon.company == CompanyIdentifier(0x0059))
    }

    @Test func rejectsEveryTruncationOfManufacturerData() {
        let full = Array(vector[5...])
        let fields: [(String, Int, Int)] = [("company ID", 0, 2), ("beacon code", 2, 2), ("beacon ID (id1)", 4, 16),
                                            ("beacon ID (id2)", 20, 2), ("beacon ID (id3)", 22, 2),
                                            ("reference RSSI", 24, 1), ("reserved", 25, 1)]
        for length in 0..<full.count {
            let (name, start, width) = fields.last { $0.1 <= length }!
            let error = codecError { _ = try AltBeacon(parsingManufacturerData: full.prefix(length)) }
            #expect(error?.offset == start, "length \(length)")
            #expect(error?.reason == .truncated(field: name, needed: width, available: length - start), "length \(length)")
        }
    }

    @Test func randomBeaconsRoundTrip() throws {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<500 {
            let beacon = AltBeacon(company: CompanyIdentifier(.random(in: 0...UInt16.max, using: &generator)),
                                   id1: .random(using: &generator), id2: .random(in: 0...UInt16.max, using: &generator),
                                   id3: .random(in: 0...UInt16.max, using: &generator),
                                   measuredPower: .random(in: Int8.min...Int8.max, using: &generator),
                                   reserved: .random(in: 0...255, using: &generator))
            #expect(try AltBeacon(parsingManufacturerData: beacon.manufacturerData[...]) == beacon)
        }
    }
}

@Suite struct EddystoneTests {
    @Test func uidVector() throws {
        let vector = hex("""
            02 01 06                        // Flags
            03 03 AA FE                     // Complete 16-bit UUIDs: 0xFEAA
            17 16 AA FE                     // Service Data, 0xFEAA, 20-byte frame follows
            00                              // frame type UID
            EE                              // TX power at 0 m: -18 dBm
            00 11 22 33 44 55 66 77 88 99   // namespace
            AA BB CC DD EE FF               // instance
            00 00                           // reserved
            """)
        let frame = try EddystoneUID(txPowerAt0m: -18, namespace: hex("00112233445566778899"), instance: hex("AABBCCDDEEFF"))
        #expect(EddystoneFrame.uid(frame).advertisingData.bytes == vector)
        #expect(try Beacon.beacons(in: AdvertisingData(parsing: vector)) == [.eddystone(.uid(frame))])
    }

    @Test func uidWithoutReservedBytesRoundTrips() throws {
        let frameBytes = hex("00 EE 00112233445566778899 AABBCCDDEEFF")
        let frame = try EddystoneFrame(parsing: frameBytes[...])
        guard case let .uid(uid) = frame else {
            Issue.record("not a UID frame: \(frame)")
            return
        }
        #expect(uid.reserved == nil)
        #expect(frame.bytes == frameBytes)
    }

    @Test func uidRejectsWrongSizes() {
        #expect(codecError { _ = try EddystoneUID(txPowerAt0m: 0, namespace: [1, 2], instance: hex("AABBCCDDEEFF")) } != nil)
        #expect(codecError { _ = try EddystoneUID(txPowerAt0m: 0, namespace: hex("00112233445566778899"), instance: [1]) } != nil)
    }

    @Test(arguments: [
        ("https://www.example.com/", "10 EE 01 65 78 61 6D 70 6C 65 00"),
        ("http://goo.gl/S6zT6P", "10 EE 02 67 6F 6F 2E 67 6C 2F 53 36 7A 54 36 50"),
        ("https://beacon.info", "10 EE 03 62 65 61 63 6F 6E 0B"),
        ("http://www.a.org/b.gov", "10 EE 00 61 01 62 0D"),
    ])
    func urlVectors(url: String, frameHex: String) throws {
        let frame = try EddystoneURL(txPowerAt0m: -18, url: url)
        #expect(frame.bytes == hex(frameHex))
        guard case let .url(parsed) = try EddystoneFrame(parsing: hex(frameHex)[...]) else {
            Issue.record("not a URL frame")
            return
        }
        #expect(parsed.url == url)
    }

    @Test func urlRejectsUnknownSchemeTooLongAndControlCharacters() {
        #expect(codecError { _ = try EddystoneURL(txPowerAt0m: 0, url: "ftp://x.com") }?.reason
            == .unexpectedValue(field: "scheme", expected: "http://, https://, http://www. or https://www.",
                                found: "'ftp://x.com'"))
        #expect(codecError { _ = try EddystoneURL(txPowerAt0m: 0, url: "https://abcdefghijklmnopqr") }?.reason
            == .unexpectedValue(field: "encoded URL length", expected: "1 to 17 bytes after compression",
                                found: "18 bytes"))
        #expect(codecError { _ = try EddystoneURL(txPowerAt0m: 0, url: "https://a b") }?.offset == 9)
    }

    @Test func urlParseRejectsReservedSchemeAndShowsReservedBytes() throws {
        #expect(codecError { _ = try EddystoneFrame(parsing: hex("10 EE 04 61")[...]) }?.offset == 2)
        guard case let .url(frame) = try EddystoneFrame(parsing: hex("10 EE 03 61 0E 62")[...]) else {
            Issue.record("not a URL frame")
            return
        }
        #expect(frame.url == "https://a%0Eb")
    }

    @Test func tlmVector() throws {
        let vector = hex("""
            20              // frame type TLM
            00              // version 0 (unencrypted)
            0B B8           // battery 3000 mV
            15 80           // temperature 21.5 C (8.8 fixed point)
            00 00 03 E8     // 1000 advertising PDUs
            00 00 04 D2     // 1234 x 0.1 s since power-up
            """)
        let frame = EddystoneTLM(batteryMillivolts: 3000, rawTemperature: 0x1580, advertisingPDUCount: 1000,
                                 uptimeDeciseconds: 1234)
        #expect(frame.bytes == vector)
        #expect(frame.temperature == 21.5)
        #expect(try EddystoneFrame(parsing: vector[...]) == .tlm(frame))
    }

    @Test func tlmTemperatureNotSupported() throws {
        let frame = try EddystoneFrame(parsing: hex("20 00 0000 8000 00000000 00000000")[...])
        guard case let .tlm(tlm) = frame else {
            Issue.record("not TLM")
            return
        }
        #expect(tlm.temperature == nil)
    }

    /// Encrypted TLM (Google's eddystone-tlm/tlm-encrypted.md): version 0x01, the telemetry's
    /// 12 bytes encrypted, a salt and a message integrity check, each field named.
    @Test func encryptedTlmIsDecodedAsWhatItIs() throws {
        let vector = hex("""
            20                                   // frame type TLM
            01                                   // version 1 (encrypted)
            9A 4C 2E 11 7B 03 D5 60 88 F1 0C 42  // encrypted telemetry
            5D 17                                // salt
            A0 3E                                // message integrity check
            """)
        guard case let .encryptedTLM(frame) = try EddystoneFrame(parsing: vector[...]) else {
            Issue.record("not encrypted TLM")
            return
        }
        #expect(frame.encryptedTelemetry == hex("9A4C2E117B03D56088F10C42"))
        #expect(frame.salt == [0x5D, 0x17] && frame.integrityCheck == [0xA0, 0x3E])
        #expect(frame.bytes == vector)
        #expect(codecError { _ = try EddystoneFrame(parsing: (vector + [0x00])[...]) } != nil, "one byte too many")
    }

    @Test func tlmRejectsOtherVersionsAndTruncation() {
        #expect(codecError { _ = try EddystoneFrame(parsing: hex("20 02 0000 8000 00000000 00000000")[...]) }?.offset == 1)
        for full in [hex("20 00 0BB8 1580 000003E8 000004D2"), hex("20 01 9A4C2E117B03D56088F10C42 5D17 A03E")] {
            for length in 1..<full.count {
                #expect(codecError { _ = try EddystoneFrame(parsing: full.prefix(length)) }?.reason.isTruncation == true)
            }
        }
    }

    @Test func unknownFrameTypesAreKept() throws {
        let frame = try EddystoneFrame(parsing: hex("40 EE 01 02 03 04 05 06 07 08")[...])
        #expect(frame == .other(frameType: 0x40, payload: hex("EE 01 02 03 04 05 06 07 08")))
        #expect(frame.bytes == hex("40 EE 01 02 03 04 05 06 07 08"))
    }

    /// An EID frame built by hand from the specification's table (eddystone-eid/README.md).
    @Test func eidVector() throws {
        let vector = hex("""
            02 01 06                    // Flags
            03 03 AA FE                 // 16-bit service UUIDs: 0xFEAA
            0D 16 AA FE                 // length 13, service data for 0xFEAA
            30                          // frame type: EID
            EE                          // TX power at 0 m: -18 dBm
            32 66 24 EE 16 C9 CC 77     // the ephemeral identifier
            """)
        let frame = try EddystoneEID(txPowerAt0m: -18, eid: hex("32 66 24 EE 16 C9 CC 77"))
        #expect(EddystoneFrame.eid(frame).advertisingData.bytes == vector)
        #expect(try Beacon.beacons(in: AdvertisingData(parsing: vector)) == [.eddystone(.eid(frame))])
        #expect(Beacon.eddystone(.eid(frame)).measuredPower == -59)
    }

    @Test func eidRejectsEveryTruncationTrailingBytesAndWrongSizes() {
        let full = hex("30 EE 32 66 24 EE 16 C9 CC 77")
        for length in 1..<full.count {
            #expect(codecError { _ = try EddystoneFrame(parsing: full.prefix(length)) }?.reason.isTruncation == true)
        }
        // "The length of this frame is fixed and shall be truncated after the EID bytes."
        #expect(codecError { _ = try EddystoneFrame(parsing: (full + [0x00])[...]) }?.offset == 10)
        #expect(codecError { _ = try EddystoneEID(txPowerAt0m: 0, eid: [1, 2, 3]) }?.offset == 2)
    }

    /// The blocks the two AES steps encrypt, laid out as eid-computation.md's tables give them.
    @Test func eidComputationInputsFollowTheSpecificationsTables() throws {
        let identity = try EddystoneEIDIdentity(identityKey: hex("553C66DA1485E9F78849DE00F2CB178E"), rotationExponent: 12)
        #expect(EddystoneEIDIdentity.temporaryKeyInput(counter: 0x1234_5678)
                == hex("00 00 00 00 00 00 00 00 00 00 00   FF   00 00   12 34"))
        #expect(identity.identifierInput(counter: 0x1234_5678)
                == hex("00 00 00 00 00 00 00 00 00 00 00   0C   12 34 50 00"))  // the 12 lowest bits cleared
        #expect(identity.rotationStart(4095) == 0 && identity.rotationStart(4096) == 4096)
        #expect(identity.nextRotation(after: 4095) == 4096 && identity.nextRotation(after: 0xFFFF_FFFF) == nil)
        let every = try EddystoneEIDIdentity(identityKey: [UInt8](repeating: 7, count: 16), rotationExponent: 0)
        #expect(every.identifierInput(counter: 0xFFFF_FFFF).suffix(5) == [0x00, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(codecError { _ = try EddystoneEIDIdentity(identityKey: [1, 2], rotationExponent: 10) }?.offset == 0)
        #expect(codecError { _ = try EddystoneEIDIdentity(identityKey: [UInt8](repeating: 0, count: 16), rotationExponent: 16) }?.offset == 16)
    }

    @Test func measuredPowerIsZeroMetrePowerLess41() throws {
        let frame = try EddystoneUID(txPowerAt0m: -18, namespace: hex("00112233445566778899"), instance: hex("AABBCCDDEEFF"))
        #expect(Beacon.eddystone(.uid(frame)).measuredPower == -59)
    }
}

extension CodecError.Reason {
    var isTruncation: Bool {
        if case .truncated = self { return true }
        return false
    }
}
