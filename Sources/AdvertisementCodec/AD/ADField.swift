// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one AD structure says, for people: the common data types (Assigned Numbers, "Common
/// Data Types"; CSS Part A 1) read into their values. A structure of another type, or one whose
/// length does not fit its type, is `.other` with its bytes: describing never fails.
public enum ADField: Hashable, Sendable {
    case flags(ADFlags)
    /// The Complete (or, not `complete`, Shortened) Local Name; invalid UTF-8 is replaced.
    case localName(String, complete: Bool)
    /// Service UUIDs (16, 32 or 128-bit), written as `uuidText` does: `180F`, `0000FE9A`,
    /// `6E400001-B5A3-F393-E0A9-E50E24DCCA9E`.
    case serviceUUIDs([String], complete: Bool)
    /// Service data: the service's UUID and the bytes after it.
    case serviceData(uuid: String, data: [UInt8])
    case txPowerLevel(Int8)
    /// The GAP Appearance value (a category in its upper ten bits).
    case appearance(UInt16)
    case manufacturerData(CompanyIdentifier, data: [UInt8])
    case other(ADType, data: [UInt8])

    /// Reads one structure.
    public init(_ structure: ADStructure) {
        // The types the structure reads itself.
        if let power = structure.txPowerLevel {
            self = .txPowerLevel(power)
            return
        }
        if let (company, payload) = structure.manufacturerData {
            self = .manufacturerData(company, data: Array(payload))
            return
        }
        let data = Array(structure.data)
        switch structure.type {
        case .flags where data.count == 1:
            self = .flags(ADFlags(rawValue: data[0]))
        case .completeLocalName, .shortenedLocalName:
            self = .localName(String(decoding: data, as: UTF8.self), complete: structure.type == .completeLocalName)
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16, .incompleteServiceUUIDs32, .completeServiceUUIDs32,
             .incompleteServiceUUIDs128, .completeServiceUUIDs128:
            let width = Self.uuidWidth(structure.type)
            guard !data.isEmpty, data.count % width == 0 else { self = .other(structure.type, data: data); return }
            let uuids = stride(from: 0, to: data.count, by: width).map { Self.uuidText(data[$0..<($0 + width)]) }
            let complete = [ADType.completeServiceUUIDs16, .completeServiceUUIDs32, .completeServiceUUIDs128]
                .contains(structure.type)
            self = .serviceUUIDs(uuids, complete: complete)
        case .serviceData16, .serviceData32, .serviceData128:
            let width = structure.type == .serviceData16 ? 2 : structure.type == .serviceData32 ? 4 : 16
            guard data.count >= width else { self = .other(structure.type, data: data); return }
            self = .serviceData(uuid: Self.uuidText(data[..<width]), data: Array(data[width...]))
        case .appearance where data.count == 2:
            self = .appearance(UInt16(data[0]) | UInt16(data[1]) << 8)
        default:
            self = .other(structure.type, data: data)
        }
    }

    /// Every structure of `data`, read.
    public static func fields(of data: AdvertisingData) -> [ADField] {
        data.structures.map(ADField.init)
    }

    /// A UUID as AD lists carry it (little-endian, 2, 4 or 16 bytes), in the usual written
    /// order: 16 and 32-bit as hex digits, 128-bit in the 8-4-4-4-12 form.
    public static func uuidText(_ littleEndian: ArraySlice<UInt8>) -> String {
        let bytes = Array(littleEndian.reversed())
        guard bytes.count == 16 else { return HexText.format(bytes) }
        return UUID(bytes: bytes[...]).uuidString
    }

    private static func uuidWidth(_ type: ADType) -> Int {
        switch type {
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16: 2
        case .incompleteServiceUUIDs32, .completeServiceUUIDs32: 4
        default: 16
        }
    }

    /// The flags' names, lowest bit first (CSS Part A 1.3).
    public static func names(of flags: ADFlags) -> [String] {
        let named: [(ADFlags, String)] = [
            (.leLimitedDiscoverable, "LE Limited Discoverable"), (.leGeneralDiscoverable, "LE General Discoverable"),
            (.brEdrNotSupported, "BR/EDR Not Supported"),
            (.simultaneousLEBrEdrController, "LE and BR/EDR Controller"), (.simultaneousLEBrEdrHost, "LE and BR/EDR Host"),
        ]
        return named.filter { flags.contains($0.0) }.map(\.1)
    }
}
