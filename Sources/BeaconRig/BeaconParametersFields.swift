// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports

extension BeaconParameters {
    /// A beacon's own parameters as fields, in the `--beacon` keys and the one JSON shape every
    /// line shows them in (`control list` and its replies, `advertise --json`, a box's requests):
    /// `interval` (ms), `txPower` (dBm), `address`, `rotateAddress` (s), `phy`, `connectable`, `pdu`.
    /// `BeaconDescription.parameters(in:)` reads them back as they are.
    public var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        if let units = intervalUnits { fields["interval"] = .number(Double(units) * 0.625) }
        if let txPower { fields["txPower"] = .integer(Int(txPower)) }
        if let address { fields["address"] = .string(address.text) }
        if let addressRotation { fields["rotateAddress"] = .number(addressRotation) }
        if let phy { fields["phy"] = .string(phy.rawValue) }
        if let connectable { fields["connectable"] = .bool(connectable) }
        if let pdu { fields["pdu"] = .string(pdu.rawValue) }
        return fields
    }
}
