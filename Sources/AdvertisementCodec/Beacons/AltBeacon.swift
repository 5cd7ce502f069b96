// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AltBeacon (Radius Networks' open format), in manufacturer specific data:
///
/// ```
/// 1B FF        length 27, manufacturer specific data
/// cc cc        company ID of the beacon's maker, little-endian
/// BE AC        beacon code
/// id * 20      beacon ID: by convention a 16-byte UUID (id1), id2 and id3 (UInt16 big-endian)
/// PP           reference RSSI, Int8 dBm at 1 m
/// rr           reserved for the manufacturer
/// ```
public struct AltBeacon: Hashable, Sendable {
    static let beaconCode: [UInt8] = [0xBE, 0xAC]
    /// The beacon code as one big-endian number, for comparing without an array.
    static let beaconCodeValue: UInt16 = 0xBEAC
    /// Length of the manufacturer data, company ID included.
    public static let manufacturerDataLength = 26

    public var company: CompanyIdentifier
    public var id1: UUID
    public var id2: UInt16
    public var id3: UInt16
    /// The reference RSSI at 1 m (the specification's "Reference RSSI").
    public var measuredPower: Int8
    /// The manufacturer-reserved last byte.
    public var reserved: UInt8

    public init(company: CompanyIdentifier = .radiusNetworks, id1: UUID, id2: UInt16, id3: UInt16,
                measuredPower: Int8 = IBeacon.defaultMeasuredPower, reserved: UInt8 = 0) {
        self.company = company
        self.id1 = id1
        self.id2 = id2
        self.id3 = id3
        self.measuredPower = measuredPower
        self.reserved = reserved
    }

    /// Whether manufacturer data carries the AltBeacon code after its company ID.
    static func hasBeaconCode(_ manufacturerData: ArraySlice<UInt8>) -> Bool {
        manufacturerData.count >= 4 && manufacturerData.dropFirst(2).prefix(2).elementsEqual(beaconCode)
    }

    /// Parses the 26-byte manufacturer data, company ID included.
    /// - Throws: `CodecError` naming the first byte that is not an AltBeacon's.
    public init(parsingManufacturerData bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "AltBeacon manufacturer data")
        company = CompanyIdentifier(try reader.uint16LE("company ID"))
        let codeOffset = reader.offset
        let code = try reader.bytes(2, "beacon code")
        guard code.elementsEqual(Self.beaconCode) else {
            throw reader.unexpected("beacon code", expected: "BE AC", found: HexText.format(code, separator: " "),
                                    at: codeOffset)
        }
        id1 = UUID(bytes: try reader.bytes(16, "beacon ID (id1)"))
        id2 = try reader.uint16BE("beacon ID (id2)")
        id3 = try reader.uint16BE("beacon ID (id3)")
        measuredPower = try reader.int8("reference RSSI")
        reserved = try reader.uint8("reserved")
        try reader.expectEnd()
    }

    /// The 26-byte manufacturer data, company ID included.
    public var manufacturerData: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.manufacturerDataLength)
        out.appendLE(company.rawValue)
        out.append(contentsOf: Self.beaconCode)
        out.append(contentsOf: id1.bigEndianBytes)
        out.appendBE(id2)
        out.appendBE(id3)
        out.append(UInt8(bitPattern: measuredPower))
        out.append(reserved)
        return out
    }

    /// Flags (0x06) and the manufacturer data: 31 bytes.
    public var advertisingData: AdvertisingData {
        AdvertisingData([
            ADStructure(type: .flags, data: [ADFlags.beacon.rawValue]),
            ADStructure(type: .manufacturerSpecificData, data: manufacturerData),
        ])
    }
}

extension AltBeacon: BeaconFormat {
    public var formatName: StaticString { "altbeacon" }
    public var displayName: StaticString { "AltBeacon" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("companyId", .integer(Int(company.rawValue)), text: .token("company=\(company)"))
        writer.identifier("id1", .uuid(id1))
        writer.identifier("id2", .integer(Int(id2)))
        writer.identifier("id3", .integer(Int(id3)))
        writer.integer("measuredPower", measuredPower, unit: "dBm")
        writer.integer("reserved", reserved)
    }

    public var measuredPowerAt1m: Int? { Int(measuredPower) }

    public var regionIdentifiers: (uuid: UUID, major: UInt16, minor: UInt16)? { (id1, id2, id3) }

    public var descriptionFields: [String: String] {
        ["type": "altbeacon", "uuid": id1.uuidString, "major": "\(id2)", "minor": "\(id3)",
         "measuredPower": "\(measuredPower)", "companyId": "\(company.rawValue)"]
    }
}

extension AltBeacon {
    /// The AltBeacon specification's layout; the common practice for the rest.
    public static let specification = BeaconSpecification(
        name: "altbeacon", displayName: "AltBeacon", source: "AltBeacon specification (altbeacon.org)",
        layoutWanted: "manufacturer data 1B FF, company ID, BE AC, 20-byte beacon ID, reference RSSI, reserved byte"
    ) { structures in
        guard let maker = structures.first(where: { $0.type == .manufacturerSpecificData }) else {
            return .init(problems: ["no manufacturer specific data"])
        }
        guard maker.data.count == 26, Array(maker.data.dropFirst(2).prefix(2)) == [0xBE, 0xAC] else {
            return .init(problems: ["manufacturer data of \(maker.data.count + 1) bytes: \(HexText.format(maker.data.prefix(4), separator: " "))"])
        }
        return .init()
    }
}

extension AltBeacon: DescribedBeaconFormat {
    public static let name = "altbeacon"
    public static let descriptionKeys = ["uuid", "major", "minor", "measured-power", "company-id"]
    public static let numberRanges = IBeacon.numberRanges
    public static let summary = "AltBeacon: --uuid, --major, --minor as id1, id2, id3; --company-id."

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        .altBeacon(AltBeacon(company: try fields.company("company-id") ?? .radiusNetworks, id1: try fields.uuid("uuid"),
                             id2: try fields.required16("major"), id3: try fields.required16("minor"),
                             measuredPower: try fields.measuredPower()))
    }
}
