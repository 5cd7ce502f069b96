// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Testing

/// Each common data type read into its value (CSS Part A 1); a length that does not fit its
/// type leaves the bytes as they are, never an error.
@Suite struct ADFieldTests {
    func field(_ hex: String) throws -> ADField {
        let data = try AdvertisingData(parsing: try HexText.parse(hex))
        return ADField(try #require(data.structures.first))
    }

    @Test func commonTypesAreRead() throws {
        #expect(try field("020105") == .flags([.leLimitedDiscoverable, .brEdrNotSupported]))
        #expect(try field("0408426561") == .localName("Bea", complete: false))
        #expect(try field("040912C3A9") == .localName("\u{12}é", complete: true))
        #expect(try field("0503AAFE0F18") == .serviceUUIDs(["FEAA", "180F"], complete: true))
        #expect(try field("050578563412") == .serviceUUIDs(["12345678"], complete: true))
        #expect(try field("0516AAFE0102") == .serviceData(uuid: "FEAA", data: [0x01, 0x02]))
        #expect(try field("020AF4") == .txPowerLevel(-12))
        #expect(try field("03194103") == .appearance(0x0341))
        #expect(try field("05FF4C000215") == .manufacturerData(.apple, data: [0x02, 0x15]))
    }

    @Test func lengthsThatDoNotFitTheirTypeKeepTheBytes() throws {
        #expect(try field("03010506") == .other(.flags, data: [0x05, 0x06]))
        #expect(try field("0403AAFE0F") == .other(.completeServiceUUIDs16, data: [0xAA, 0xFE, 0x0F]))
        #expect(try field("0216AA") == .other(.serviceData16, data: [0xAA]))
        #expect(try field("02FF4C") == .other(.manufacturerSpecificData, data: [0x4C]))
        #expect(try field("0419010203") == .other(.appearance, data: [0x01, 0x02, 0x03]))
        #expect(try field("0242AB") == .other(ADType(0x42), data: [0xAB]))
    }

    @Test func flagNamesFollowTheBits() {
        #expect(ADField.names(of: .beacon) == ["LE General Discoverable", "BR/EDR Not Supported"])
        #expect(ADField.names(of: []) == [])
    }
}
