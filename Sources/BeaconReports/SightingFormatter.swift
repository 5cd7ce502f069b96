// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// How `decode` (and later `scan`) prints a beacon: a readable line, or a JSON line whose keys
/// are the README's contract.
public enum SightingFormatter {
    public static func json(_ sighting: BeaconSighting) -> String {
        object(sighting).line
    }

    /// `encode --json`: the beacon's decode keys, then its advertising data (`data`) and scan
    /// response (`scanResponse`, where it has one), as hex.
    public static func encoded(_ beacon: Beacon) -> String {
        var keys = Self.object(BeaconSighting(beacon: beacon))
        if case .custom = beacon { return keys.line }  // its keys are those two already
        keys.add("data", hex: beacon.advertisingData.bytes)
        if let response = beacon.scanResponseData { keys.add("scanResponse", hex: response.bytes) }
        return keys.line
    }

    /// The decode keys of a sighting, for callers that add keys of their own after them.
    public static func object(_ sighting: BeaconSighting) -> JSONObject {
        var object = JSONObject()
        add(sighting, to: &object)
        return object
    }

    /// Writes the decode keys of a sighting into an object.
    public static func add(_ sighting: BeaconSighting, to object: inout JSONObject) {
        var writer = JSONFieldWriter(object: object)
        sighting.beacon.writeFields(to: &writer)
        object = writer.take()
        addSender(address: sighting.address, addressType: sighting.addressType, rssi: sighting.rssi, to: &object)
        if let txPower = sighting.txPower { object.add("txPower", txPower) }
    }

    /// The sender's keys, where a report gave them: `address`, `addressType`, and `rssi`
    /// (`null` when the controller had none).
    static func addSender(address: BluetoothAddress?, addressType: AddressType?, rssi: Int8?, to object: inout JSONObject) {
        if let address { object.add("address", address: address) }
        if let addressType { object.add("addressType", addressType: addressType) }
        if address != nil {
            if let rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
        }
    }

    /// The sender in text, where a report gave one: `address=... (public) rssi=-60dBm`.
    static func senderText(address: BluetoothAddress?, addressType: AddressType?, rssi: Int8?) -> String? {
        guard let address else { return nil }
        return "address=\(address)" + (addressType.map { " (\($0))" } ?? "") + " rssi=" + (rssi.map { "\($0)dBm" } ?? "unavailable")
    }

    public static func text(_ sighting: BeaconSighting) -> String {
        var writer = TextFieldWriter()
        sighting.beacon.writeFields(to: &writer)
        var fields = writer.tokens
        if let sender = senderText(address: sighting.address, addressType: sighting.addressType, rssi: sighting.rssi) {
            fields.append(sender)
        }
        if let txPower = sighting.txPower { fields.append("txPower=\(txPower)dBm") }
        return fields.joined(separator: " ")
    }

    /// Tenths of a second as an exact decimal: 12345 -> "1234.5".
    public static func deciseconds(_ value: UInt32) -> String {
        BeaconFieldValue.tenths(UInt64(value)).text
    }
}

/// A format's fields as JSON keys (`BeaconFormat.writeFields`).
struct JSONFieldWriter: BeaconFieldWriter, ~Copyable {
    var object: JSONObject

    consuming func take() -> JSONObject { object }

    mutating func begin(_ formatName: StaticString, display: StaticString) {
        object.add("type", literal: formatName)
    }

    mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText, identifies: Bool) {
        switch value {
        case let .integer(integer): object.add(key, integer)
        case let .uuid(uuid): object.add(key, uuid: uuid)
        case let .hex(bytes): object.add(key, hex: bytes)
        case let .text(text): object.add(key, text)
        case let .decimal(number): object.add(key, number: number)
        case let .tenths(tenths): object.add(key, tenths: tenths)
        case let .strings(texts): object.add(key, strings: texts)
        case let .unsignedIntegers(values): object.add(key, integers: values)
        case .null: object.addNull(key)
        }
    }
}
