// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// How `decode` (and later `scan`) prints a beacon: a readable line, or a JSON line whose keys
/// are the README's contract.
public enum SightingFormatter {
    public static func json(_ sighting: BeaconSighting) -> String {
        object(sighting).line
    }

    /// The decode keys of a sighting, for callers that add keys of their own after them.
    public static func object(_ sighting: BeaconSighting) -> JSONObject {
        var object = JSONObject()
        add(sighting, to: &object)
        return object
    }

    /// Writes the decode keys of a sighting into an object.
    public static func add(_ sighting: BeaconSighting, to object: inout JSONObject) {
        switch sighting.beacon {
        case let .iBeacon(beacon):
            object.add("type", literal: "ibeacon")
            object.add("uuid", uuid: beacon.proximityUUID)
            object.add("major", beacon.major)
            object.add("minor", beacon.minor)
            object.add("measuredPower", beacon.measuredPower)
        case let .altBeacon(beacon):
            object.add("type", literal: "altbeacon")
            object.add("companyId", beacon.company.rawValue)
            object.add("id1", uuid: beacon.id1)
            object.add("id2", beacon.id2)
            object.add("id3", beacon.id3)
            object.add("measuredPower", beacon.measuredPower)
            object.add("reserved", beacon.reserved)
        case let .eddystone(.uid(frame)):
            object.add("type", literal: "eddystone-uid")
            object.add("namespace", hex: frame.namespace)
            object.add("instance", hex: frame.instance)
            object.add("txPowerAt0m", frame.txPowerAt0m)
            object.add("measuredPower", sighting.beacon.measuredPower ?? 0)
        case let .eddystone(.url(frame)):
            object.add("type", literal: "eddystone-url")
            object.add("url", frame.url)
            object.add("txPowerAt0m", frame.txPowerAt0m)
            object.add("measuredPower", sighting.beacon.measuredPower ?? 0)
        case let .eddystone(.tlm(frame)):
            object.add("type", literal: "eddystone-tlm")
            object.add("version", 0)
            object.add("batteryMillivolts", frame.batteryMillivolts)
            if let temperature = frame.temperature {
                object.add("temperature", number: String(temperature))
            } else {
                object.addNull("temperature")
            }
            object.add("advertisingPduCount", frame.advertisingPDUCount)
            object.add("uptimeSeconds", tenths: UInt64(frame.uptimeDeciseconds))
        case let .eddystone(.encryptedTLM(frame)):
            object.add("type", literal: "eddystone-tlm")
            object.add("version", 1)
            object.add("encryptedTelemetry", hex: frame.encryptedTelemetry)
            object.add("salt", hex: frame.salt)
            object.add("integrityCheck", hex: frame.integrityCheck)
        case let .eddystone(.eid(frame)):
            object.add("type", literal: "eddystone-eid")
            object.add("eid", hex: frame.eid)
            object.add("txPowerAt0m", frame.txPowerAt0m)
            object.add("measuredPower", sighting.beacon.measuredPower ?? 0)
        case let .eddystone(.other(frameType, payload)):
            object.add("type", literal: "eddystone")
            object.add("frameType", frameType)
            object.add("frameData", hex: payload)
        case let .custom(custom):
            object.add("type", literal: "custom")
            object.add("data", hex: custom.data.bytes)
            if let response = custom.scanResponse { object.add("scanResponse", hex: response.bytes) }
        }
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
        var fields: [String]
        switch sighting.beacon {
        case let .iBeacon(beacon):
            fields = ["iBeacon", "uuid=\(beacon.proximityUUID.uuidString)", "major=\(beacon.major)",
                      "minor=\(beacon.minor)", "measuredPower=\(beacon.measuredPower)dBm"]
        case let .altBeacon(beacon):
            fields = ["AltBeacon", "company=\(beacon.company)", "id1=\(beacon.id1.uuidString)", "id2=\(beacon.id2)",
                      "id3=\(beacon.id3)", "measuredPower=\(beacon.measuredPower)dBm", "reserved=\(beacon.reserved)"]
        case let .eddystone(.uid(frame)):
            fields = ["Eddystone-UID", "namespace=\(HexText.format(frame.namespace))",
                      "instance=\(HexText.format(frame.instance))", "txPowerAt0m=\(frame.txPowerAt0m)dBm"]
        case let .eddystone(.url(frame)):
            fields = ["Eddystone-URL", "url=\(frame.url)", "txPowerAt0m=\(frame.txPowerAt0m)dBm"]
        case let .eddystone(.tlm(frame)):
            fields = ["Eddystone-TLM", "battery=\(frame.batteryMillivolts)mV",
                      "temperature=" + (frame.temperature.map { "\($0)C" } ?? "unsupported"),
                      "advertisingPduCount=\(frame.advertisingPDUCount)",
                      "uptime=\(deciseconds(frame.uptimeDeciseconds))s"]
        case let .eddystone(.encryptedTLM(frame)):
            fields = ["Eddystone-TLM", "version=1 (encrypted)", "encryptedTelemetry=\(HexText.format(frame.encryptedTelemetry))",
                      "salt=\(HexText.format(frame.salt))", "integrityCheck=\(HexText.format(frame.integrityCheck))"]
        case let .eddystone(.eid(frame)):
            fields = ["Eddystone-EID", "eid=\(HexText.format(frame.eid))", "txPowerAt0m=\(frame.txPowerAt0m)dBm"]
        case let .eddystone(.other(frameType, payload)):
            fields = ["Eddystone", "frameType=\(HexText.format([frameType]))", "frameData=\(HexText.format(payload))"]
        case let .custom(custom):
            fields = ["Custom", "data=\(HexText.format(custom.data.bytes))"]
                + (custom.scanResponse.map { ["scanResponse=\(HexText.format($0.bytes))"] } ?? [])
        }
        if let sender = senderText(address: sighting.address, addressType: sighting.addressType, rssi: sighting.rssi) {
            fields.append(sender)
        }
        if let txPower = sighting.txPower { fields.append("txPower=\(txPower)dBm") }
        return fields.joined(separator: " ")
    }

    /// Tenths of a second as an exact decimal: 12345 -> "1234.5".
    public static func deciseconds(_ value: UInt32) -> String {
        "\(value / 10).\(value % 10)"
    }
}
