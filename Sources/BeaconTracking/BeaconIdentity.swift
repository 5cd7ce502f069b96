// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A beacon's identifiers, the key the tracker and the scan printer keep beacons by.
public enum BeaconIdentity: Hashable, Sendable, CustomStringConvertible {
    /// A beacon whose format packs its identifiers (`Beacon.trackingKey`: iBeacon, AltBeacon,
    /// Eddystone-UID and -URL), hashed a word at a time.
    case key(TrackingKey)
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

    public var description: String {
        switch self {
        case let .key(key): key.description
        case let .data(bytes): "data \(HexText.format(bytes))"
        case let .format(name): "any \(name)"
        case let .fields(name, values): ([name] + values.map(\.text)).joined(separator: " ")
        case let .sender(name, address): "\(name) \(address?.description ?? "?")"
        }
    }
}
