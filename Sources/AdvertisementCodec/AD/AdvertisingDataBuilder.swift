// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A service UUID as AD structures carry it: 16, 32 or 128 bits, little-endian.
public struct ServiceUUID: Hashable, Sendable, CustomStringConvertible {
    /// The UUID's bytes as sent (2, 4 or 16, least significant first).
    public let littleEndian: [UInt8]

    /// Reads `180F` (16-bit), `0000FE9A` (32-bit) or a 128-bit UUID (32 hex digits, dashes optional).
    /// - Throws: `CodecError` saying which forms are taken.
    public init(parsing text: some StringProtocol) throws(CodecError) {
        let digits = String(text.filter { $0 != "-" })
        if digits.count == 32 {
            littleEndian = Array(try UUID(beaconText: text).bigEndianBytes.reversed())
            return
        }
        guard digits.count == 4 || digits.count == 8, let value = UInt32(digits, radix: 16) else {
            throw CodecError(structure: "service UUID", offset: 0, reason: .unexpectedValue(
                field: "UUID", expected: "4 hex digits (16-bit), 8 (32-bit) or 32 (128-bit)", found: "'\(text)'"))
        }
        littleEndian = (0..<(digits.count / 2)).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    public var description: String { ADField.uuidText(littleEndian[...]) }
}

/// Manufacturer specific data: the company and the bytes after its identifier.
public struct ManufacturerData: Hashable, Sendable {
    public var company: CompanyIdentifier
    public var data: [UInt8]

    public init(company: CompanyIdentifier, data: [UInt8]) {
        self.company = company
        self.data = data
    }
}

/// Service data: the service and the bytes after its UUID.
public struct ServiceData: Hashable, Sendable {
    public var uuid: ServiceUUID
    public var data: [UInt8]

    public init(uuid: ServiceUUID, data: [UInt8]) {
        self.uuid = uuid
        self.data = data
    }
}

/// Advertising data put together from the common building blocks (CSS Part A 1), alone or
/// around a beacon's own structures, in this order: Flags; the service UUID lists (complete,
/// 16, then 32, then 128-bit); the beacon's structures other than its Flags; service data;
/// manufacturer data; the local name last. A name that does not fit whole goes as a
/// Shortened Local Name (whole characters) where there is room, and whole, as the Complete
/// Local Name, in the scan response (after what `scanResponse` holds).
public struct AdvertisingDataBuilder: Hashable, Sendable {
    /// The Flags value; nil sends no Flags structure (`--flags none`).
    public var flags: ADFlags? = .beacon
    /// A beacon whose structures go in the middle (its Flags are replaced by `flags`).
    public var beacon: AdvertisingData?
    public var serviceUUIDs: [ServiceUUID] = []
    public var serviceData: [ServiceData] = []
    public var manufacturerData: [ManufacturerData] = []
    public var name: String?
    /// The scan response's own structures (`--scan-response`).
    public var scanResponse: AdvertisingData?

    public init() {}

    /// The advertising data and its scan response, each at most `maximumLength` bytes.
    /// - Throws: `CodecError` with the count when something does not fit.
    public func buildAdvertisement(maximumLength: Int = AdvertisingData.legacyMaximumLength) throws(CodecError)
        -> CustomAdvertisement {
        var withoutName = self
        withoutName.name = nil
        var data = try withoutName.build(maximumLength: maximumLength)
        var response = scanResponse
        try response?.validate(maximumLength: maximumLength)
        guard let name else { return CustomAdvertisement(data: data, scanResponse: response) }
        // In the data, whole where it fits, else shortened where a character fits; a name cut
        // here goes whole into the scan response.
        let room = maximumLength - data.significantBytes.count - 2
        if let first = name.first, String(first).utf8.count <= room {
            data.structures.append(Self.nameStructure(name, room: room))
        }
        if name.utf8.count > room {
            var inResponse = response ?? AdvertisingData()
            inResponse.structures.append(Self.nameStructure(name, room: maximumLength - inResponse.significantBytes.count - 2))
            try inResponse.validate(maximumLength: maximumLength)
            response = inResponse
        }
        return CustomAdvertisement(data: data, scanResponse: response)
    }

    /// The Complete Local Name where `name` fits in `room` bytes, else as much of it (whole
    /// characters) as a Shortened Local Name.
    static func nameStructure(_ name: String, room: Int) -> ADStructure {
        guard name.utf8.count > room else { return ADStructure(type: .completeLocalName, data: Array(name.utf8)) }
        var cut = name
        while cut.utf8.count > max(room, 0), !cut.isEmpty { cut.removeLast() }
        return ADStructure(type: .shortenedLocalName, data: Array(cut.utf8))
    }

    /// The advertising data, at most `maximumLength` bytes.
    /// - Throws: `CodecError` with the count when it does not fit (a name is cut first, to no
    ///   less than one character), or a structure is longer than a length byte can say.
    public func build(maximumLength: Int = AdvertisingData.legacyMaximumLength) throws(CodecError) -> AdvertisingData {
        var structures: [ADStructure] = []
        if let flags { structures.append(ADStructure(type: .flags, data: [flags.rawValue])) }
        for (width, type) in [(2, ADType.completeServiceUUIDs16), (4, .completeServiceUUIDs32), (16, .completeServiceUUIDs128)] {
            let list = serviceUUIDs.filter { $0.littleEndian.count == width }
            if !list.isEmpty { structures.append(ADStructure(type: type, data: list.flatMap(\.littleEndian))) }
        }
        structures += (beacon?.structures ?? []).filter { $0.type != .flags }
        for entry in serviceData {
            let type: ADType = entry.uuid.littleEndian.count == 2 ? .serviceData16
                : entry.uuid.littleEndian.count == 4 ? .serviceData32 : .serviceData128
            structures.append(ADStructure(type: type, data: entry.uuid.littleEndian + entry.data))
        }
        for entry in manufacturerData {
            let id = entry.company.rawValue
            structures.append(ADStructure(type: .manufacturerSpecificData,
                                          data: [UInt8(id & 0xFF), UInt8(id >> 8)] + entry.data))
        }
        var data = AdvertisingData(structures)
        if let name {
            let room = maximumLength - data.significantBytes.count - 2
            guard let first = name.first, String(first).utf8.count <= room else {
                throw CodecError(structure: "advertising data", offset: maximumLength, reason: .unexpectedValue(
                    field: "local name", expected: "room for at least one character of it within \(maximumLength) bytes",
                    found: "\(data.significantBytes.count) bytes before it"))
            }
            data.structures.append(Self.nameStructure(name, room: room))
        }
        try data.validate(maximumLength: maximumLength)
        return data
    }
}
