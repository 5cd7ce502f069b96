// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

@Suite struct IBeaconTests {
    let example = IBeacon(proximityUUID: appleExampleUUID, major: 101, minor: 2)

    @Test func buildsTheReferenceAdvertisingData() {
        #expect(example.advertisingData.bytes == appleExampleAdvertisingData)
        #expect(example.advertisingData.bytes.count == IBeacon.advertisingDataLength)
        #expect(example.manufacturerData == Array(appleExampleAdvertisingData[5...]))
    }

    @Test func parsesTheReferenceAdvertisingData() throws {
        let beacon = try IBeacon(parsingAdvertisingData: appleExampleAdvertisingData[...])
        #expect(beacon.proximityUUID.uuidString == "39ED98FF-2900-441A-802F-9C398FC199D2")
        #expect(beacon.major == 101)
        #expect(beacon.minor == 2)
        #expect(beacon.measuredPower == -59)
    }

    @Test func parsesManufacturerDataAlone() throws {
        let beacon = try IBeacon(parsingManufacturerData: appleExampleAdvertisingData[5...])
        #expect(beacon == example)
    }

    @Test func defaultMeasuredPowerIsMinus59() {
        #expect(example.measuredPower == -59)
        #expect(example.manufacturerData.last == 0xC5)
    }

    @Test func randomBeaconsRoundTrip() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<1000 {
            let beacon = IBeacon(proximityUUID: .random(using: &generator),
                                 major: .random(in: 0...UInt16.max, using: &generator),
                                 minor: .random(in: 0...UInt16.max, using: &generator),
                                 measuredPower: .random(in: Int8.min...Int8.max, using: &generator))
            #expect(try IBeacon(parsingAdvertisingData: beacon.advertisingData.bytes[...]) == beacon)
            #expect(try IBeacon(parsingManufacturerData: beacon.manufacturerData[...]) == beacon)
        }
    }

    /// The field each byte of the 25-byte manufacturer data belongs to, from the layout.
    static func field(at offset: Int) -> (name: String, start: Int, width: Int) {
        switch offset {
        case 0..<2: ("company ID", 0, 2)
        case 2: ("iBeacon type", 2, 1)
        case 3: ("iBeacon length", 3, 1)
        case 4..<20: ("proximity UUID", 4, 16)
        case 20..<22: ("major", 20, 2)
        case 22..<24: ("minor", 22, 2)
        default: ("measured power", 24, 1)
        }
    }

    @Test func rejectsEveryTruncationOfManufacturerDataNamingTheField() {
        let full = Array(appleExampleAdvertisingData[5...])
        for length in 0..<full.count {
            let error = codecError { _ = try IBeacon(parsingManufacturerData: full.prefix(length)) }
            let field = Self.field(at: length)
            #expect(error?.offset == field.start, "length \(length)")
            #expect(error?.reason == .truncated(field: field.name, needed: field.width, available: length - field.start),
                    "length \(length)")
        }
    }

    @Test func rejectsEveryTruncationOfAdvertisingData() {
        for length in 0..<appleExampleAdvertisingData.count {
            let error = codecError { _ = try IBeacon(parsingAdvertisingData: appleExampleAdvertisingData.prefix(length)) }
            switch length {
            case 0, 3: // whole structures, but no iBeacon among them
                #expect(error?.reason == .unrecognized(expected: "iBeacon manufacturer data (4C 00 02 15 ...)"))
            case 1, 4: // a length byte with no type
                #expect(error?.reason == .truncated(field: "AD type", needed: 1, available: 0), "length \(length)")
                #expect(error?.offset == length)
            case 2:
                #expect(error?.offset == 2)
                #expect(error?.reason == .truncated(field: "Flags (length 2 at byte 0)", needed: 1, available: 0))
            default:
                #expect(error?.offset == 5, "length \(length)")
                #expect(error?.reason == .truncated(field: "Manufacturer Specific Data (length 26 at byte 3)",
                                                    needed: 25, available: length - 5), "length \(length)")
            }
        }
    }

    @Test func rejectsAnotherCompany() {
        var bytes = Array(appleExampleAdvertisingData[5...])
        bytes[0] = 0x4D
        let error = codecError { _ = try IBeacon(parsingManufacturerData: bytes[...]) }
        #expect(error?.reason == .unexpectedValue(field: "company ID", expected: "0x004C (Apple)", found: "0x004D"))
    }

    @Test func rejectsWrongLengthByteAndTrailingBytes() {
        var bytes = Array(appleExampleAdvertisingData[5...])
        bytes[3] = 0x16
        #expect(codecError { _ = try IBeacon(parsingManufacturerData: bytes[...]) }?.offset == 3)
        let longer = Array(appleExampleAdvertisingData[5...]) + [0x00]
        let error = codecError { _ = try IBeacon(parsingManufacturerData: longer[...]) }
        #expect(error?.reason == .trailingBytes(count: 1))
        #expect(error?.offset == 25)
    }

    @Test func appleDataOfOtherTypesIsNotABeacon() throws {
        // Apple "Nearby Info" (type 0x10) is common on the air and is not an iBeacon.
        let data = try AdvertisingData(parsing: hex("07 FF 4C 00 10 02 0B 00"))
        #expect(try Beacon.beacons(in: data).isEmpty)
    }
}

@Suite struct UUIDFromBytesTests {
    /// What the decoder's fast path assumes from the layout alone: a UUID's memory is its
    /// sixteen bytes in text order.
    @Test func layoutIsTheBytesInTextOrder() {
        #expect(UUID.storedAsItsBytes)
        let probe: uuid_t = (0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF)
        var uuid = UUID(uuid: probe)
        #expect(withUnsafeBytes(of: &uuid) { Array($0) } == withUnsafeBytes(of: probe) { Array($0) })
    }

    /// The constructor every decoder uses (two words copied in where Foundation stores the
    /// bytes) against Foundation's own `UUID(uuid:)`, at every alignment, and the slice form.
    @Test func pointerConstructorMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for offset in 0..<8 {
            for _ in 0..<64 {
                let bytes = (0..<(offset + 16)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let built = bytes.withUnsafeBytes { UUID($0.baseAddress! + offset) }
                let expected = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)) }
                #expect(built == expected)
                #expect(UUID(bytes: bytes[offset...]) == expected)
                #expect(built.bigEndianBytes == Array(bytes[offset...]))
            }
        }
    }
}
