// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Advertising data (or scan response data): an ordered list of AD structures
/// (Core Vol 3 Part C 11). Unknown types survive a parse and re-encode byte for byte.
public struct AdvertisingData: Hashable, Sendable {
    /// Legacy advertising carries at most 31 bytes.
    public static let legacyMaximumLength = 31
    /// Extended advertising carries at most 1650 bytes (Core Vol 4 Part E 7.8.54).
    public static let extendedMaximumLength = 1650
    /// What this host sends in extended advertising PDUs (`--extended-pdu`): one HCI fragment,
    /// and what the kernel's management API takes.
    public static let extendedPDUMaximumLength = 251

    public var structures: [ADStructure]

    /// What followed the significant part: "if the Length field is set to zero, then the Data
    /// field has zero octets; this shall only occur to allow an early termination" (Core Vol 3
    /// Part C 11). Controllers pad to 31 bytes with zeros; kept so `bytes` reproduces the input.
    public var padding: [UInt8]

    public init(_ structures: [ADStructure] = [], padding: [UInt8] = []) {
        self.structures = structures
        self.padding = padding
    }

    /// Parses a sequence of AD structures, stopping early at a zero length byte.
    /// - Throws: `CodecError` when a structure's length runs past the end of the input.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ADStructureReader(bytes)
        var structures: [ADStructure] = []
        while let structure = try reader.next() { structures.append(structure) }
        self.init(structures, padding: Array(reader.padding))
    }

    /// Parses a sequence of AD structures from an array.
    public init(parsing bytes: [UInt8]) throws(CodecError) {
        try self.init(parsing: bytes[...])
    }

    /// The bytes as sent: every structure, then any padding that came with a parsed input.
    public var bytes: [UInt8] {
        var out = significantBytes
        out.append(contentsOf: padding)
        return out
    }

    /// The structures alone, without padding.
    public var significantBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(structures.reduce(0) { $0 + 2 + $1.data.count })
        for structure in structures { structure.encode(into: &out) }
        return out
    }

    /// Checks that every structure fits a length byte and the whole fits `maximumLength`.
    /// - Throws: `CodecError` at the offset where the limit is crossed.
    public func validate(maximumLength: Int = legacyMaximumLength) throws(CodecError) {
        var offset = 0
        for structure in structures {
            guard structure.data.count <= 254 else {
                throw CodecError(structure: "advertising data", offset: offset, reason: .unexpectedValue(
                    field: "\(structure.type) length", expected: "at most 254 data bytes",
                    found: "\(structure.data.count)"))
            }
            offset += 2 + structure.data.count
        }
        guard offset <= maximumLength else {
            throw CodecError(structure: "advertising data", offset: maximumLength, reason: .unexpectedValue(
                field: "total length", expected: "at most \(maximumLength) bytes", found: "\(offset) bytes"))
        }
    }

    /// The first structure of `type`.
    public subscript(type: ADType) -> ADStructure? {
        structures.first { $0.type == type }
    }

    /// The Flags value, if present.
    public var flags: ADFlags? {
        self[.flags]?.data.first.map(ADFlags.init(rawValue:))
    }

    /// The complete local name, or else the shortened one (invalid UTF-8 is replaced).
    public var localName: String? {
        (self[.completeLocalName] ?? self[.shortenedLocalName]).map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// The advertised TX power level in dBm (the AD type 0x0A), if present.
    public var txPowerLevel: Int8? {
        structures.lazy.compactMap(\.txPowerLevel).first
    }

    /// Every 16-bit service UUID from complete and incomplete lists, in order.
    public var serviceUUIDs16: [UInt16] {
        structures.filter { $0.type == .completeServiceUUIDs16 || $0.type == .incompleteServiceUUIDs16 }
            .flatMap { structure in
                stride(from: structure.data.startIndex, to: structure.data.endIndex - 1, by: 2).map {
                    UInt16(structure.data[$0]) | UInt16(structure.data[$0 + 1]) << 8
                }
            }
    }

    /// Every 128-bit service UUID from complete and incomplete lists, in order. AD lists carry
    /// them little-endian; these are in the usual written order.
    public var serviceUUIDs128: [UUID] {
        structures.filter { $0.type == .completeServiceUUIDs128 || $0.type == .incompleteServiceUUIDs128 }
            .flatMap { structure in
                stride(from: structure.data.startIndex, to: structure.data.endIndex - 15, by: 16).map {
                    UUID(bytes: ArraySlice(structure.data[$0..<($0 + 16)].reversed()))
                }
            }
    }

    /// Every 16-bit service data entry: the UUID and the bytes after it.
    public var serviceData16: [(uuid: UInt16, payload: ArraySlice<UInt8>)] {
        structures.compactMap(\.serviceData16)
    }

    /// Every manufacturer specific data entry: the company and the bytes after it.
    public var manufacturerData: [(company: CompanyIdentifier, payload: ArraySlice<UInt8>)] {
        structures.compactMap(\.manufacturerData)
    }
}
