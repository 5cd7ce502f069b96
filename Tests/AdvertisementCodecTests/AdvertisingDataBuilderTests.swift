// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Testing

/// Building blocks put together in a fixed order, within the legacy 31 bytes, with the name cut
/// to a Shortened Local Name where it must be. Expected bytes written out by hand from CSS Part A 1.
@Suite struct AdvertisingDataBuilderTests {
    @Test func blocksGoInTheirOrder() throws {
        var builder = AdvertisingDataBuilder()
        builder.name = "Hi"
        builder.manufacturerData = [ManufacturerData(company: CompanyIdentifier(0x0059), data: [0x01, 0x02])]
        builder.serviceData = [ServiceData(uuid: try ServiceUUID(parsing: "180F"), data: [0x64])]
        builder.serviceUUIDs = [try ServiceUUID(parsing: "180F"), try ServiceUUID(parsing: "0000FE9A"),
                                try ServiceUUID(parsing: "FEAA")]
        let bytes = try builder.build().bytes
        #expect(HexText.format(bytes) == "020106" + "05030F18AAFE" + "05059AFE0000" + "04160F1864"
                + "05FF59000102" + "03094869")
    }

    @Test func aBeaconKeepsItsStructuresUnderOtherFlags() throws {
        var builder = AdvertisingDataBuilder()
        builder.beacon = try AdvertisingData(parsing: try HexText.parse("0201060303AAFE"))
        builder.flags = nil
        builder.name = "A"
        #expect(HexText.format(try builder.build().bytes) == "0303AAFE" + "020941")
    }

    @Test func a128BitUUIDTravelsLittleEndian() throws {
        let uuid = try ServiceUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(HexText.format(uuid.littleEndian) == "9ECADC240EE5A9E093F3A3B50100406E")
        #expect(uuid.description == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(throws: CodecError.self) { try ServiceUUID(parsing: "18F") }
        #expect(throws: CodecError.self) { try ServiceUUID(parsing: "GG0F") }
    }

    @Test func aLongNameIsCutToFit() throws {
        var builder = AdvertisingDataBuilder()
        builder.name = "A very long sensor name that does not fit"
        let data = try builder.build()
        #expect(data.bytes.count == 31)
        #expect(data.structures.last?.type == .shortenedLocalName)
        #expect(data.localName == "A very long sensor name th")  // 31 - Flags (3) - its own two bytes
        // A character of several bytes is never cut in half.
        builder.name = String(repeating: "é", count: 20)
        let accented = try builder.build()
        #expect(accented.localName == String(repeating: "é", count: 13))
    }

    @Test func dataThatCannotFitIsRefusedWithTheCount() throws {
        var builder = AdvertisingDataBuilder()
        builder.manufacturerData = [ManufacturerData(company: .apple, data: Array(repeating: 0, count: 24))]
        #expect(try builder.build().bytes.count == 31)
        builder.manufacturerData[0].data.append(0)
        #expect { try builder.build() } throws: { error in
            "\(error)".contains("at most 31 bytes") && "\(error)".contains("32 bytes")
        }
        builder.manufacturerData[0].data.removeLast()
        builder.name = "x"
        #expect(throws: CodecError.self) { try builder.build() }
    }

    /// A name that does not fit whole: shortened in the data where a character fits, whole in
    /// the scan response after what the scan response already holds.
    @Test func aNameThatDoesNotFitGoesWholeIntoTheScanResponse() throws {
        var builder = AdvertisingDataBuilder()
        builder.manufacturerData = [ManufacturerData(company: .apple, data: Array(repeating: 0, count: 20))]
        builder.name = "Lobby"
        builder.scanResponse = try AdvertisingData(parsing: try HexText.parse("020A00"))
        let advertisement = try builder.buildAdvertisement()
        #expect(HexText.format(advertisement.data.bytes) == "020106" + "17FF4C00" + String(repeating: "00", count: 20)
                + "03084C6F")  // 27 bytes before it: room for "Lo"
        #expect(HexText.format(advertisement.scanResponse?.bytes ?? []) == "020A00" + "06094C6F626279")
        // Where it fits, the name stays in the data and there is no scan response.
        builder.manufacturerData = []
        builder.scanResponse = nil
        let small = try builder.buildAdvertisement()
        #expect(HexText.format(small.data.bytes) == "020106" + "06094C6F626279")
        #expect(small.scanResponse == nil)
    }
}
