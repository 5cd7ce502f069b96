// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A beacon's identifiers, the key the tracker and the scan printer keep beacons by.
public enum BeaconIdentity: Hashable, Sendable, CustomStringConvertible {
    case iBeacon(UUID, major: UInt16, minor: UInt16)
    case altBeacon(UUID, id2: UInt16, id3: UInt16)
    case eddystoneUID(namespace: [UInt8], instance: [UInt8])
    case eddystoneURL(String)
    /// Advertising data without a beacon format: its bytes.
    case data([UInt8])
    /// Any beacon of a format whose content moves (`BeaconFormat.contentMoves`), by its name:
    /// what a canary watches for such a beacon.
    case format(String)
    /// A beacon of any other format (a registered one, `RegisteredBeaconFormat`), by its name
    /// and the values of the fields it writes as identifying it.
    case fields(String, [BeaconFieldValue])
    /// A beacon of any other format that writes no identifying field, or whose content moves
    /// (Eddystone telemetry and EID, a frame the codec does not decode): only the sender tells
    /// two apart.
    case sender(String, BluetoothAddress?)

    /// The identifiers fed to the hasher a word at a time (the synthesized hash fed a UUID and
    /// each byte of an Eddystone namespace one by one: a tracker hashes once per report).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .iBeacon(uuid, major, minor):
            Self.combine(uuid, UInt64(major) << 16 | UInt64(minor), into: &hasher)
        case let .altBeacon(id1, id2, id3):
            Self.combine(id1, 1 << 32 | UInt64(id2) << 16 | UInt64(id3), into: &hasher)
        case let .eddystoneUID(namespace, instance):
            hasher.combine(2 << 32 | UInt64(namespace.count) << 16 | UInt64(instance.count))
            namespace.withUnsafeBytes { hasher.combine(bytes: $0) }
            instance.withUnsafeBytes { hasher.combine(bytes: $0) }
        case let .eddystoneURL(url):
            hasher.combine(3 << 32 as UInt64)
            hasher.combine(url)
        case let .data(bytes):
            hasher.combine(5 << 32 as UInt64)
            hasher.combine(bytes)
        case let .format(name):
            hasher.combine(6 << 32 as UInt64)
            hasher.combine(name)
        case let .fields(name, values):
            hasher.combine(7 << 32 as UInt64)
            hasher.combine(name)
            hasher.combine(values)
        case let .sender(name, address):
            hasher.combine(8 << 32 as UInt64)
            hasher.combine(name)
            hasher.combine(address?.value)
        }
    }

    private static func combine(_ uuid: UUID, _ rest: UInt64, into hasher: inout Hasher) {
        withUnsafeBytes(of: uuid.uuid) { raw in
            hasher.combine(raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            hasher.combine(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        hasher.combine(rest)
    }

    public var description: String {
        switch self {
        case let .iBeacon(uuid, major, minor): "ibeacon \(uuid.uuidString) \(major) \(minor)"
        case let .altBeacon(id1, id2, id3): "altbeacon \(id1.uuidString) \(id2) \(id3)"
        case let .eddystoneUID(namespace, instance): "eddystone-uid \(HexText.format(namespace)) \(HexText.format(instance))"
        case let .eddystoneURL(url): "eddystone-url \(url)"
        case let .data(bytes): "data \(HexText.format(bytes))"
        case let .format(name): "any \(name)"
        case let .fields(name, values): ([name] + values.map(\.text)).joined(separator: " ")
        case let .sender(name, address): "\(name) \(address?.description ?? "?")"
        }
    }
}
