// SPDX-License-Identifier: GPL-2.0-or-later

/// One of a beacon's own settings (its advertising parameters where they differ from the
/// run's), declared once as a typed key (at the end of `BeaconParameters.swift`, beside the
/// property a program sets): its value's type, its `--beacon` key and its field in JSON and
/// files, the values it takes and its range (messages and help say them from it), its help
/// line, how it is read from text and shown. `BeaconParameters` holds values by these keys, so
/// its merging, its description and its equality come from them; `BeaconDescription`, the
/// control socket, replay plans, help and docs/advertising.md's table read and write settings
/// through `AnyBeaconSetting.all`. Which backend honours which setting each backend declares
/// (`SettingSupport`): a setting only the extended HCI advertiser honours is its declaration
/// and that advertiser's one line, and the others refuse it before anything is sent.
package struct BeaconSetting<Value: Hashable & Sendable>: Sendable {
    /// The `--beacon` key: `tx-power`.
    package let key: String
    /// The JSON, file and scenario field: `txPower`.
    package let field: String
    /// The values it takes, as help shows them: `DBM`, `1m|coded`.
    package let values: String
    /// What it sets, one line.
    package let help: String
    /// A number's range and unit (`-127...20`, `dBm`): what messages and help say it takes.
    package let range: SettingRange?
    let parse: @Sendable (_ key: String, _ text: String) throws(SettingValueError) -> Value
    let show: @Sendable (Value) -> SettingValue
    let describe: @Sendable (Value) -> String
    /// Whether its value is a list (files and JSON give it as one; text separates it by spaces).
    var takesList = false

    /// The range as messages say it: `-127 to 20 (dBm)`; nil for a setting that is no number.
    package var rangeText: String? { range?.text }
}

/// A number's range and its unit, from which messages are made (`-127 to 20 (dBm)`).
package struct SettingRange: Sendable, Hashable {
    package let lower: Double
    package let upper: Double
    package let unit: String

    package init(_ range: ClosedRange<Double>, unit: String) {
        lower = range.lowerBound
        upper = range.upperBound
        self.unit = unit
    }

    package var text: String { "\(Self.format(lower)) to \(Self.format(upper)) (\(unit))" }

    package func contains(_ value: Double) -> Bool { value >= lower && value <= upper }

    /// `20`, `0.1`: whole numbers without a decimal point.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
    }
}

/// What is wrong with a setting's value: a message naming its key.
package struct SettingValueError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// A setting's value as JSON and files show it.
package enum SettingValue: Hashable, Sendable {
    case integer(Int)
    case number(Double)
    case text(String)
    case flag(Bool)
    case integers([Int])
}

/// A setting whatever its value's type: what lists of settings (the description's keys, help,
/// the docs' table, JSON) go through.
package struct AnyBeaconSetting: Sendable {
    package let key: String
    package let field: String
    package let values: String
    package let help: String
    package let rangeText: String?
    package let takesList: Bool
    /// Reads a value as written under `key` into the parameters.
    package let read: @Sendable (_ key: String, _ text: String, _ into: inout BeaconParameters) throws(SettingValueError) -> Void
    /// Its value in the parameters as JSON shows it; nil where it is the run's.
    package let shown: @Sendable (BeaconParameters) -> SettingValue?
    /// Its value in the parameters for messages (`TX power -8 dBm`); nil where it is the run's.
    package let described: @Sendable (BeaconParameters) -> String?

    package init<Value>(_ setting: BeaconSetting<Value>) {
        key = setting.key
        field = setting.field
        values = setting.values
        help = setting.help
        rangeText = setting.rangeText
        takesList = setting.takesList
        read = { (key, text, parameters) throws(SettingValueError) in parameters[setting] = try setting.parse(key, text) }
        shown = { $0[setting].map(setting.show) }
        described = { $0[setting].map(setting.describe) }
    }
}

// Readers the settings' declarations share (`BeaconParameters.swift`).

/// One of an enumeration's values by its name, in any case: `1m` or `coded`.
func oneOf<Choice: RawRepresentable & CaseIterable>(_ key: String, _ text: String)
    throws(SettingValueError) -> Choice where Choice.RawValue == String {
    guard let choice = Choice(rawValue: text.lowercased()) else {
        throw SettingValueError("\(key) must be \(Choice.allCases.map(\.rawValue).joined(separator: " or ")), got '\(text)'")
    }
    return choice
}

/// A number within the range (its text in the message).
func number(_ key: String, _ text: String, _ range: SettingRange?,
                    checkingRange: Bool = true) throws(SettingValueError) -> Double {
    let rangeText = range?.text ?? "a number"
    guard let number = Double(text), number.isFinite else {
        throw SettingValueError("\(key) must be a number from \(rangeText), got '\(text)'")
    }
    if checkingRange, let range, !range.contains(number) { throw SettingValueError("\(key) must be from \(rangeText), got '\(text)'") }
    return number
}

/// A whole number within the range (YAML and JSON write whole numbers as 7.0 now and then).
func integer(_ key: String, _ text: String, _ range: SettingRange?) throws(SettingValueError) -> Int {
    let value = try number(key, text, range)
    guard value == value.rounded(), abs(value) < 1e15 else {
        throw SettingValueError("\(key) must be a whole number from \(range?.text ?? "a number"), got '\(text)'")
    }
    return Int(value)
}

/// Which of a beacon's own settings a backend honours, and which of their values: declared by
/// each backend (legacy advertising commands, the management API), so that the check before
/// anything is sent and the backend's start refuse alike. A setting it does not list is
/// refused, one refusal for any setting (`Refusal.Setting.beaconSetting`).
package struct SettingSupport: Sendable {
    package typealias Accepts = @Sendable (any Hashable & Sendable) -> Bool

    /// A setting it honours (with the values it takes), or refuses for a reason of its own.
    package struct Entry: Sendable {
        let key: String
        let accepts: Accepts?
        let reason: Refusal.Reason?

        /// A setting honoured with the values `accepts` takes (any, by default).
        package static func accepting<Value>(_ setting: BeaconSetting<Value>,
                                             where accepts: @escaping @Sendable (Value) -> Bool = { _ in true }) -> Entry {
            Entry(key: setting.key, accepts: { value in (value as? Value).map(accepts) ?? false }, reason: nil)
        }

        /// A setting refused for `reason`, not the backend's own.
        package static func refusing<Value>(_ setting: BeaconSetting<Value>, because reason: Refusal.Reason) -> Entry {
            Entry(key: setting.key, accepts: nil, reason: reason)
        }
    }

    private let honoured: [String: Accepts]
    private let reasons: [String: Refusal.Reason]

    package init(_ entries: [Entry]) {
        var honoured: [String: Accepts] = [:]
        var reasons: [String: Refusal.Reason] = [:]
        for entry in entries {
            if let accepts = entry.accepts { honoured[entry.key] = accepts }
            if let reason = entry.reason { reasons[entry.key] = reason }
        }
        self.honoured = honoured
        self.reasons = reasons
    }

    /// The first of a beacon's settings (in `AnyBeaconSetting.all`'s order) it does not honour,
    /// refused for `reason` (or the setting's own); nil where it honours them all.
    package func refusal(_ parameters: BeaconParameters, beacon: BeaconID?, _ reason: Refusal.Reason) -> Refusal? {
        for setting in AnyBeaconSetting.all {
            guard let value = parameters.value(forKey: setting.key) else { continue }
            if let accepts = honoured[setting.key], accepts(value) { continue }
            let described = setting.described(parameters) ?? setting.key
            return Refusal(.beaconSetting(key: setting.key, value: setting.valueText(parameters) ?? "", described: described),
                           beacon: beacon, reasons[setting.key] ?? reason)
        }
        return nil
    }
}

extension AnyBeaconSetting {
    /// Its value in the parameters as written after its key (`-8`, `37 38`); nil where it is the run's.
    package func valueText(_ parameters: BeaconParameters) -> String? {
        switch shown(parameters) {
        case let .integer(value)?: "\(value)"
        case let .number(value)?: SettingRange.format(value)
        case let .text(text)?: text
        case let .flag(flag)?: flag ? "true" : "false"
        case let .integers(values)?: values.map(String.init).joined(separator: " ")
        case nil: nil
        }
    }
}
