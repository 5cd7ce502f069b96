// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

@Suite struct AdvertisingDataTests {
    let mixed = hex("""
        02 01 1A                    // Flags 0x1A
        05 09 42 65 61 63           // Complete Local Name "Beac"
        02 0A F4                    // TX Power Level -12 dBm
        05 03 0F 18 AA FE           // Complete 16-bit UUIDs 0x180F, 0xFEAA
        04 2A 01 02 03              // AD type 0x2A, unknown to the codec
        05 16 0F 18 64 00           // Service Data 0x180F: 64 00
        04 FF 59 00 AB              // Manufacturer 0x0059: AB
        """)

    @Test func parsesStructuresInOrderKeepingUnknownTypes() throws {
        let data = try AdvertisingData(parsing: mixed)
        #expect(data.structures.map(\.type.rawValue) == [0x01, 0x09, 0x0A, 0x03, 0x2A, 0x16, 0xFF])
        #expect(data.structures[4].data == [0x01, 0x02, 0x03])
        #expect(data.bytes == mixed)
        #expect(data.padding.isEmpty)
    }

    @Test func namedAccessors() throws {
        let data = try AdvertisingData(parsing: mixed)
        #expect(data.flags == ADFlags(rawValue: 0x1A))
        #expect(data.localName == "Beac")
        #expect(data.txPowerLevel == -12)
        #expect(data.serviceUUIDs16 == [0x180F, 0xFEAA])
        #expect(data.serviceData16.map(\.uuid) == [0x180F])
        #expect(data.serviceData16.map { Array($0.payload) } == [[0x64, 0x00]])
        #expect(data.manufacturerData.map(\.company) == [CompanyIdentifier(0x0059)])
        #expect(data.manufacturerData.map { Array($0.payload) } == [[0xAB]])
    }

    @Test func reads128BitServiceUUIDsInWrittenOrder() throws {
        // AD lists carry 128-bit UUIDs little-endian: the last written byte comes first.
        let data = try AdvertisingData(parsing: hex("11 07") + appleExampleUUID.bigEndianBytes.reversed())
        #expect(data.serviceUUIDs128 == [appleExampleUUID])
    }

    @Test func zeroLengthEndsTheSignificantPartAndPaddingSurvives() throws {
        let padded = hex("02 01 06  03 FF 4C 00  00 00 00 00 00 00")
        let data = try AdvertisingData(parsing: padded)
        #expect(data.structures.count == 2)
        #expect(data.padding == [0, 0, 0, 0, 0, 0])
        #expect(data.significantBytes == hex("02 01 06 03 FF 4C 00"))
        #expect(data.bytes == padded)
    }

    @Test func emptyInputIsEmptyData() throws {
        #expect(try AdvertisingData(parsing: []).structures.isEmpty)
    }

    @Test func typeOnlyStructureHasNoData() throws {
        let data = try AdvertisingData(parsing: hex("01 2A"))
        #expect(data.structures == [ADStructure(type: ADType(0x2A), data: [])])
    }

    @Test func rejectsStructureRunningPastTheEnd() {
        let error = codecError { _ = try AdvertisingData(parsing: hex("02 01 06 05 FF 4C 00")) }
        #expect(error?.offset == 5)
        #expect(error?.reason == .truncated(field: "Manufacturer Specific Data (length 5 at byte 3)",
                                            needed: 4, available: 2))
    }

    @Test func rejectsMissingTypeByte() {
        let error = codecError { _ = try AdvertisingData(parsing: hex("02 01 06 1A")) }
        #expect(error?.offset == 4)
        #expect(error?.reason == .truncated(field: "AD type", needed: 1, available: 0))
    }

    @Test func validateEnforcesLegacyAndStructureLimits() {
        let tooLong = AdvertisingData([ADStructure(type: .manufacturerSpecificData, data: [UInt8](repeating: 1, count: 30))])
        #expect(codecError { try tooLong.validate() }?.offset == 31)
        #expect(throws: Never.self) { try tooLong.validate(maximumLength: AdvertisingData.extendedMaximumLength) }
        let oversized = AdvertisingData([ADStructure(type: .manufacturerSpecificData, data: [UInt8](repeating: 1, count: 255))])
        #expect(codecError { try oversized.validate(maximumLength: 1650) }?.offset == 0)
    }

    @Test func randomStructureListsRoundTrip() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            var structures: [ADStructure] = []
            var total = 0
            while total < 200, Bool.random(using: &generator) || structures.isEmpty {
                let count = Int.random(in: 0...20, using: &generator)
                let data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                structures.append(ADStructure(type: ADType(UInt8.random(in: 0...255, using: &generator)), data: data))
                total += count + 2
            }
            let original = AdvertisingData(structures)
            let reparsed = try AdvertisingData(parsing: original.bytes)
            #expect(reparsed == original)
            #expect(reparsed.bytes == original.bytes)
        }
    }
}
