// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A beacon of an app's own layout (`BeaconLayout`), as `decode --layout` prints it: under the
/// layout's name, its identifiers as the android-beacon-library prints them
/// (`Identifier.toString()`), its data fields, its measured power, and the sender.
public struct LayoutSighting: Sendable {
    public var name: String
    public var reading: BeaconLayout.Reading
    public var address: BluetoothAddress?
    public var addressType: AddressType?
    public var rssi: Int8?

    public init(name: String, reading: BeaconLayout.Reading, address: BluetoothAddress? = nil,
                addressType: AddressType? = nil, rssi: Int8? = nil) {
        self.name = name
        self.reading = reading
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
    }

    /// The identifiers as the library prints them.
    public var identifiers: [String] { reading.identifiers.map(BeaconLayout.text(ofIdentifier:)) }

    /// `layout acme: ids=[...] data=[...] measuredPower=-59dBm company=0xFFFF address=... rssi=...`
    public var text: String {
        var fields = ["layout \(TerminalText.escape(name)):", "ids=" + identifiers.joined(separator: ",")]
        if !reading.data.isEmpty { fields.append("data=" + reading.data.map(String.init).joined(separator: ",")) }
        if let power = reading.measuredPower { fields.append("measuredPower=\(power)dBm") }
        if let company = reading.companyID { fields.append("company=\(CompanyIdentifier(company))") }
        if let sender = SightingFormatter.senderText(address: address, addressType: addressType, rssi: rssi) { fields.append(sender) }
        return fields.joined(separator: " ")
    }

    /// `{"type":"layout","layout":"acme","ids":["...",...],"data":[...],"measuredPower":-59,...}`
    public func add(to object: inout JSONObject) {
        object.add("type", literal: "layout")
        object.add("layout", name)
        object.add("ids", strings: identifiers)
        object.add("data", integers: reading.data)
        if let power = reading.measuredPower { object.add("measuredPower", power) } else { object.addNull("measuredPower") }
        if let company = reading.companyID { object.add("companyId", CompanyIdentifier(company).description) }
        SightingFormatter.addSender(address: address, addressType: addressType, rssi: rssi, to: &object)
    }
}
