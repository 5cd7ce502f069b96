// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports

/// One of a beacon's own settings (its advertising parameters, where they differ from the
/// run's), declared once: its key in `--beacon` (any spelling: `tx-power`, `txPower`), its field
/// in JSON and files, the values it takes, its help line, how it is read into and shown from
/// `BeaconParameters`. `BeaconDescription`'s keys, ranges, messages and did-you-mean list,
/// `BeaconParameters.fields`, `advertise --help` and docs/advertising.md's table all come from
/// `all`; a new setting is a line there and where the controller is told.
public struct BeaconSetting: Sendable {
    /// The `--beacon` key: `tx-power`.
    public let key: String
    /// The JSON, file and scenario field: `txPower`.
    public let field: String
    /// The values it takes, as help shows them: `DBM`, `1m|coded`.
    public let values: String
    /// What it sets, one line.
    public let help: String
    /// For a number, its range as messages say it: `-127 to 20 (dBm)`.
    public let range: String?
    /// Reads `value` (given under `key`, as written) into the parameters.
    let read: @Sendable (_ key: String, _ value: String, _ into: inout BeaconParameters) throws(BeaconDescription.Invalid) -> Void
    /// The setting in the parameters as its JSON field's value; nil where it is the run's.
    let shown: @Sendable (BeaconParameters) -> JSONValue?

    /// Its key as every spelling shares it (`BeaconDescription.plain`).
    public var plain: String { BeaconDescription.plain(key) }

    /// Every setting, in the order help and docs list them.
    public static let all: [BeaconSetting] = [interval, txPower, address, rotateAddress, phy, connectable, pdu]

    /// The setting a key in any spelling names; nil for none.
    public static func named(_ key: String) -> BeaconSetting? {
        let plain = BeaconDescription.plain(key)
        return all.first { $0.plain == plain }
    }

    /// The settings as help lists them: `interval (MS), tx-power (DBM), ... and pdu (legacy|extended)`.
    public static var helpList: String {
        let named = all.map { "\($0.key) (\($0.values))" }
        return named.dropLast().joined(separator: ", ") + " and " + (named.last ?? "")
    }

    /// docs/advertising.md's table of them (Markdown, a line per setting after the header).
    public static var markdownTable: String {
        (["| `--beacon` key | field (JSON, files, scenarios) | values | what it sets |", "|---|---|---|---|"]
            + all.map { "| `\($0.key)` | `\($0.field)` | `\($0.values.replacingOccurrences(of: "|", with: "\\|"))` | \($0.help) |" })
            .joined(separator: "\n")
    }

    static let interval = BeaconSetting(
        key: "interval", field: "interval", values: "MS",
        help: "its advertising interval in ms, 20 to 10485759 (to 10240 with legacy PDUs), sent in 0.625 ms units",
        range: "20 to 10485759 (ms)",
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in
            let milliseconds = try number(key, value, "20 to 10485759 (ms)")
            guard let units = AdvertisingOptions.units(milliseconds: milliseconds),
                  AdvertisingOptions.intervalRange(legacy: false).contains(units) else {
                throw .init("\(key) must be from \(AdvertisingOptions.intervalRangeDescription(legacy: false)), got '\(value)'")
            }
            parameters.intervalUnits = units
        },
        shown: { $0.intervalUnits.map { .number(Double($0) * 0.625) } })

    static let txPower = BeaconSetting(
        key: "tx-power", field: "txPower", values: "DBM", help: "its requested TX power, -127 to 20 dBm (extended advertising)",
        range: "-127 to 20 (dBm)",
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in
            let dBm = try integer(key, value, "-127 to 20 (dBm)")
            guard (-127...20).contains(dBm) else { throw .init("\(key) must be from -127 to 20 (dBm), got '\(value)'") }
            parameters.txPower = Int8(dBm)
        },
        shown: { $0.txPower.map { .integer(Int($0)) } })

    static let address = BeaconSetting(
        key: "address", field: "address", values: "static|non-resolvable|AA:BB:CC:DD:EE:FF|public",
        help: "the address its set advertises from: a static or non-resolvable random one made up for it, a random one "
            + "given, or the controller's public one (raw HCI)",
        range: nil,
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in
            guard value.lowercased() != "public" else {
                parameters.address = .publicAddress
                return
            }
            do {
                parameters.address = try AdvertisingOptions.Address(randomAddress: value)
            } catch {
                throw .init("\(key) must be public, static or non-resolvable (a random address made up for it) "
                            + "or a random AA:BB:CC:DD:EE:FF, got '\(value)'")
            }
        },
        shown: { $0.address.map { .string($0.text) } })

    static let rotateAddress = BeaconSetting(
        key: "rotate-address", field: "rotateAddress", values: "S",
        help: "a new made-up address every S seconds, 0.1 to 86400 (with address static or non-resolvable, the default)",
        range: "0.1 to 86400 (seconds)",
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in
            let seconds = try number(key, value, "0.1 to 86400 (seconds)")
            guard seconds >= 0.1 && seconds <= 86400 else {
                throw .init("\(key) must be from 0.1 to 86400 (seconds), got '\(value)'")
            }
            parameters.addressRotation = seconds
        },
        shown: { $0.addressRotation.map { .number($0) } })

    static let phy = BeaconSetting(
        key: "phy", field: "phy", values: "1m|coded", help: "the PHY its set advertises on (coded: extended PDUs, long range)",
        range: nil,
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in parameters.phy = try oneOf(key, value) },
        shown: { $0.phy.map { .string($0.rawValue) } })

    static let connectable = BeaconSetting(
        key: "connectable", field: "connectable", values: "true|false", help: "whether its set is connectable (ADV_IND)",
        range: nil,
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in
            switch value.lowercased() {
            case "true", "yes", "1": parameters.connectable = true
            case "false", "no", "0": parameters.connectable = false
            default: throw .init("\(key) must be true or false, got '\(value)'")
            }
        },
        shown: { $0.connectable.map { .bool($0) } })

    static let pdu = BeaconSetting(
        key: "pdu", field: "pdu", values: "legacy|extended",
        help: "the PDUs its set sends: legacy (what every phone hears) or extended (up to 251 bytes of data)",
        range: nil,
        read: { (key, value, parameters) throws(BeaconDescription.Invalid) in parameters.pdu = try oneOf(key, value) },
        shown: { $0.pdu.map { .string($0.rawValue) } })

    /// One of an enumeration's values by its name, in any case: `1m` or `coded`.
    private static func oneOf<Choice: RawRepresentable & CaseIterable>(_ key: String, _ value: String)
        throws(BeaconDescription.Invalid) -> Choice where Choice.RawValue == String {
        guard let choice = Choice(rawValue: value.lowercased()) else {
            throw .init("\(key) must be \(Choice.allCases.map(\.rawValue).joined(separator: " or ")), got '\(value)'")
        }
        return choice
    }

    private static func number(_ key: String, _ value: String, _ range: String) throws(BeaconDescription.Invalid) -> Double {
        guard let number = Double(value), number.isFinite else {
            throw .init("\(key) must be a number from \(range), got '\(value)'")
        }
        return number
    }

    private static func integer(_ key: String, _ value: String, _ range: String) throws(BeaconDescription.Invalid) -> Int {
        if let integer = Int(value) { return integer }
        // YAML and JSON write whole numbers as 7.0 now and then.
        let number = try number(key, value, range)
        guard number == number.rounded(), abs(number) < 1e15 else {
            throw .init("\(key) must be a whole number from \(range), got '\(value)'")
        }
        return Int(number)
    }
}
