// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Apple's iBeacon: a proximity UUID, major, minor and the measured power at 1 m, carried in
/// manufacturer specific data of company 0x004C.
///
/// ```
/// 02 01 06     Flags: LE General Discoverable, BR/EDR not supported
/// 1A FF        length 26, manufacturer specific data
/// 4C 00        company 0x004C (Apple), little-endian
/// 02 15        iBeacon type 0x02, 21 bytes follow
/// xx * 16      proximity UUID, in written order (never byte-reversed)
/// MM MM        major, big-endian
/// mm mm        minor, big-endian
/// PP           measured power, Int8 dBm at 1 m
/// ```
public struct IBeacon: Hashable, Sendable {
    /// The customary calibration when none is given: -59 dBm at 1 m (0xC5).
    public static let defaultMeasuredPower: Int8 = -59
    static let typeByte: UInt8 = 0x02
    static let remainingLength: UInt8 = 0x15
    /// Length of the manufacturer data, company ID included.
    public static let manufacturerDataLength = 25
    /// Length of the advertising data: flags and manufacturer data.
    public static let advertisingDataLength = 30

    public var proximityUUID: UUID
    public var major: UInt16
    public var minor: UInt16
    /// RSSI in dBm a receiver sees at 1 m; ranging divides by it.
    public var measuredPower: Int8

    public init(proximityUUID: UUID, major: UInt16, minor: UInt16, measuredPower: Int8 = defaultMeasuredPower) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Parses the 25-byte manufacturer data (`4C 00 02 15 ...`), company ID included.
    /// - Throws: `CodecError` naming the first byte that is not an iBeacon's.
    public init(parsingManufacturerData bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "iBeacon manufacturer data")
        let companyOffset = reader.offset
        let company = try reader.uint16LE("company ID")
        guard company == CompanyIdentifier.apple.rawValue else {
            throw reader.unexpected("company ID", expected: "0x004C (Apple)",
                                    found: CompanyIdentifier(company).description, at: companyOffset)
        }
        try self.init(parsingAppleData: &reader)
    }

    /// Parses iBeacon fields that follow the company ID.
    init(parsingAppleData reader: inout ByteReader) throws(CodecError) {
        let typeOffset = reader.offset
        let type = try reader.uint8("iBeacon type")
        guard type == Self.typeByte else {
            throw reader.unexpected("iBeacon type", expected: "0x02", found: type.hexLiteral, at: typeOffset)
        }
        let lengthOffset = reader.offset
        let length = try reader.uint8("iBeacon length")
        guard length == Self.remainingLength else {
            throw reader.unexpected("iBeacon length", expected: "0x15 (21)", found: "\(length.hexLiteral) (\(length))",
                                    at: lengthOffset)
        }
        proximityUUID = UUID(bytes: try reader.bytes(16, "proximity UUID"))
        major = try reader.uint16BE("major")
        minor = try reader.uint16BE("minor")
        measuredPower = try reader.int8("measured power")
        try reader.expectEnd()
    }

    /// Parses advertising data holding an iBeacon (for example the 30-byte flags + manufacturer data).
    /// - Throws: `CodecError` if the data is malformed or holds no iBeacon.
    public init(parsingAdvertisingData bytes: borrowing ArraySlice<UInt8>) throws(CodecError) {
        // Borrowed: an initializer otherwise takes its argument owned, a retain and a release
        // per call that cost more than a tenth of the decode.
        if let (beacon, _) = Self.quickScan(bytes) {
            self = beacon
            return
        }
        // The general walk over the input's own bytes (it allocates nothing either), which also
        // says exactly what is wrong.
        var found: IBeacon? = nil
        try Beacon.forEachBeacon(inAdvertisingData: bytes) { beacon in
            if case let .iBeacon(iBeacon) = beacon, found == nil { found = iBeacon }
        }
        guard let found else {
            throw CodecError(structure: "advertising data", offset: bytes.startIndex,
                             reason: .unrecognized(expected: "iBeacon manufacturer data (4C 00 02 15 ...)"))
        }
        self = found
    }

    /// The common case in one pass over the bytes: well-formed advertising data holding one
    /// iBeacon and no other beacon's signature. Returns the beacon and the advertised TX power
    /// level (AD type 0x0A), or nil for anything else, which the general walk then decides and
    /// explains. `IBeaconQuickScanTests` holds the two to the same answers.
    @inline(__always)
    static func quickScan(_ bytes: ArraySlice<UInt8>) -> (IBeacon, txPowerLevel: Int8?)? {
        bytes.withUnsafeBufferPointer { p -> (IBeacon, txPowerLevel: Int8?)? in
            var found: IBeacon? = nil
            var txPowerLevel: Int8? = nil
            var i = 0
            while i < p.count {
                let length = Int(p[i])
                if length == 0 { break }  // early end; padding follows
                guard i + 1 + length <= p.count else { return nil }
                let at = i + 1  // the AD type; its data follows
                let type = p[at]
                let dataCount = length - 1
                if type == ADType.manufacturerSpecificData.rawValue, dataCount >= 3 {
                    if p[at + 1] == 0x4C, p[at + 2] == 0x00, p[at + 3] == Self.typeByte {
                        guard found == nil, dataCount == Self.manufacturerDataLength, p[at + 4] == Self.remainingLength
                        else { return nil }
                        found = IBeacon(proximityUUID: UUID(UnsafeRawPointer(p.baseAddress! + at + 5)),
                                        major: UInt16(p[at + 21]) << 8 | UInt16(p[at + 22]),
                                        minor: UInt16(p[at + 23]) << 8 | UInt16(p[at + 24]),
                                        measuredPower: Int8(bitPattern: p[at + 25]))
                    } else if dataCount >= 4, UInt16(p[at + 3]) << 8 | UInt16(p[at + 4]) == AltBeacon.beaconCodeValue {
                        return nil
                    }
                } else if type == ADType.serviceData16.rawValue, dataCount >= 2,
                          UInt16(p[at + 1]) | UInt16(p[at + 2]) << 8 == EddystoneFrame.serviceUUID {
                    return nil
                } else if type == ADType.txPowerLevel.rawValue, dataCount == 1, txPowerLevel == nil {
                    txPowerLevel = Int8(bitPattern: p[at + 1])
                }
                i += 1 + length
            }
            return found.map { ($0, txPowerLevel) }
        }
    }

    /// The 25-byte manufacturer data, company ID included.
    public var manufacturerData: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.manufacturerDataLength)
        out.appendLE(CompanyIdentifier.apple.rawValue)
        out.append(Self.typeByte)
        out.append(Self.remainingLength)
        out.append(contentsOf: proximityUUID.bigEndianBytes)
        out.appendBE(major)
        out.appendBE(minor)
        out.append(UInt8(bitPattern: measuredPower))
        return out
    }

    /// Flags (0x06) and the manufacturer data: the 30 bytes an iBeacon advertises.
    public var advertisingData: AdvertisingData {
        AdvertisingData([
            ADStructure(type: .flags, data: [ADFlags.beacon.rawValue]),
            ADStructure(type: .manufacturerSpecificData, data: manufacturerData),
        ])
    }
}

extension IBeacon: BeaconFormat {
    public var formatName: StaticString { "ibeacon" }
    public var displayName: StaticString { "iBeacon" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.identifier("uuid", .uuid(proximityUUID))
        writer.identifier("major", .integer(Int(major)))
        writer.identifier("minor", .integer(Int(minor)))
        writer.integer("measuredPower", measuredPower, unit: "dBm")
    }

    public var measuredPowerAt1m: Int? { Int(measuredPower) }

    public var regionIdentifiers: (uuid: UUID, major: UInt16, minor: UInt16)? { (proximityUUID, major, minor) }

    public var descriptionFields: [String: String] {
        ["uuid": proximityUUID.uuidString, "major": "\(major)", "minor": "\(minor)", "measuredPower": "\(measuredPower)"]
    }
}

extension IBeacon {
    /// Apple's rules: its exact bytes, never connectable, every 100 ms.
    public static let specification = BeaconSpecification(
        name: "ibeacon", displayName: "iBeacon", source: "Apple, Proximity Beacon Specification R1",
        layoutWanted: "1A FF 4C 00 02 15 and 21 bytes (UUID, major, minor, measured power): 30 bytes with the Flags",
        connectableFails: true, interval: (ms: 100, within: 10)
    ) { structures in
        guard let maker = structures.first(where: { $0.type == .manufacturerSpecificData }),
              let (company, payload) = maker.manufacturerData else {
            return .init(problems: ["no manufacturer specific data"])
        }
        var problems: [String] = []
        if company != .apple { problems.append("company ID \(company), not 0x004C (Apple)") }
        if Array(payload.prefix(2)) != [typeByte, remainingLength] {
            problems.append("type and length \(HexText.format(payload.prefix(2), separator: " ")), not 02 15")
        }
        if maker.data.count != manufacturerDataLength {
            problems.append("manufacturer data of \(maker.data.count + 1) bytes, not 26 (1A)")
        }
        if problems.isEmpty, let power = payload.dropFirst(22).first.map({ Int8(bitPattern: $0) }), !(-100 ... -30).contains(power) {
            return .init(warning: ("measured power \(power) dBm", "measured power at 1 m between -100 and -30 dBm (typically -59)"))
        }
        return .init(problems: problems)
    }
}

extension IBeacon: DescribedBeaconFormat {
    public static let name = "ibeacon"
    public static let descriptionKeys = ["uuid", "major", "minor", "measured-power"]
    public static let numberRanges = DescribedFields.measuredPowerRange.merging(["major": "0 to 65535", "minor": "0 to 65535"]) { $1 }
    public static let summary = "Apple iBeacon (the default): --uuid, --major, --minor."

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        .iBeacon(IBeacon(proximityUUID: try fields.uuid("uuid"), major: try fields.required16("major"),
                         minor: try fields.required16("minor"), measuredPower: try fields.measuredPower()))
    }
}
