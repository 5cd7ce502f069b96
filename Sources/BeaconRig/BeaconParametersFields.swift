// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports

extension BeaconParameters {
    /// A beacon's own parameters as fields, in the `--beacon` keys and the one JSON shape every
    /// line shows them in (`control list` and its replies, `advertise --json`, a box's requests):
    /// each `BeaconSetting`'s field (`interval` in ms, `txPower` in dBm, ...) where it is not
    /// the run's. `BeaconDescription.parameters(in:)` reads them back as they are.
    public var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for setting in AnyBeaconSetting.all {
            if let value = setting.json(self) { fields[setting.field] = value }
        }
        return fields
    }
}
