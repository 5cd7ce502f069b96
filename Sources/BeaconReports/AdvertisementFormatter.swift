// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// How `decode` prints advertising data that holds no beacon: every AD structure named, with
/// its value read (`ADField`), and the sender's address and RSSI when a report gave them.
public struct AdvertisementFormatter: Sendable {
    /// A company's name for its Bluetooth SIG identifier (nil: unknown). This target links no
    /// Bluetooth library; the command hands it the system's list.
    public var companyName: @Sendable (UInt16) -> String?

    public init(companyName: @escaping @Sendable (UInt16) -> String? = { _ in nil }) {
        self.companyName = companyName
    }

    /// One line: `advertisement: Flags 0x06 (LE General Discoverable, BR/EDR Not Supported); ...`.
    public func text(_ sighting: AdvertisementSighting) -> String {
        var line = "advertisement: " + sighting.data.structures.map { describe(ADField($0), type: $0.type) }
            .joined(separator: "; ")
        if sighting.data.structures.isEmpty { line += "no AD structures" }
        if let sender = SightingFormatter.senderText(address: sighting.address, addressType: sighting.addressType,
                                                     rssi: sighting.rssi) {
            line += "; " + sender
        }
        return line
    }

    /// The JSON object: `type` "advertisement", `structures` (each with `adType`, `name` and
    /// its value's keys), then `address`, `addressType`, `rssi` as for a beacon.
    public func add(_ sighting: AdvertisementSighting, to object: inout JSONObject) {
        object.add("type", literal: "advertisement")
        object.add("structures", objects: sighting.data.structures) { structure, object in
            add(ADField(structure), type: structure.type, to: &object)
        }
        SightingFormatter.addSender(address: sighting.address, addressType: sighting.addressType, rssi: sighting.rssi,
                                    to: &object)
    }

    /// A company's identifier with its name: `Nordic Semiconductor ASA (0x0059)`.
    public func company(_ company: CompanyIdentifier) -> String {
        companyName(company.rawValue).map { "\($0) (\(company))" } ?? "company \(company)"
    }

    private func describe(_ field: ADField, type: ADType) -> String {
        switch field {
        case let .flags(flags):
            let names = ADField.names(of: flags)
            return "\(type) 0x\(HexText.format([flags.rawValue]))" + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))")
        case let .localName(name, _):
            return "\(type) \(String(reflecting: name))"  // quoted, control characters escaped
        case let .serviceUUIDs(uuids, _):
            return "\(type) \(uuids.joined(separator: ", "))"
        case let .serviceData(uuid, data):
            return "\(type) \(uuid): \(HexText.format(data))"
        case let .txPowerLevel(power):
            return "\(type) \(power) dBm"
        case let .appearance(value):
            return "\(type) 0x\(HexText.format([UInt8(value >> 8), UInt8(value & 0xFF)]))"
        case let .manufacturerData(id, data):
            return "\(type) \(company(id)): \(HexText.format(data))"
        case let .other(_, data):
            return "\(type): \(HexText.format(data))"
        }
    }

    private func add(_ field: ADField, type: ADType, to object: inout JSONObject) {
        object.add("adType", type.rawValue)
        object.add("name", type.description)
        switch field {
        case let .flags(flags):
            object.add("value", flags.rawValue)
            object.add("flags", strings: ADField.names(of: flags))
        case let .localName(name, _):
            object.add("value", name)
        case let .serviceUUIDs(uuids, _):
            object.add("value", strings: uuids)
        case let .serviceData(uuid, data):
            object.add("uuid", uuid)
            object.add("data", hex: data)
        case let .txPowerLevel(power):
            object.add("value", power)
        case let .appearance(value):
            object.add("value", value)
        case let .manufacturerData(id, data):
            object.add("companyId", id.rawValue)
            if let name = companyName(id.rawValue) { object.add("company", name) }
            object.add("data", hex: data)
        case let .other(_, data):
            object.add("data", hex: data)
        }
    }
}
