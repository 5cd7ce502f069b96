// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports

/// A beacon's own settings as descriptions, JSON, help and docs spell them: the host's typed
/// keys (`BeaconSetting`, `AnyBeaconSetting.all`), read and shown here in the description's
/// words. Nothing about a setting is written here: a new one is its key in the host.
extension AnyBeaconSetting {
    /// Its key as every spelling shares it (`BeaconDescription.plain`).
    package var plain: String { BeaconDescription.plain(key) }

    /// Its key and its field as every spelling shares them (`channels`, `channelmap`).
    package var plainNames: Set<String> { [plain, BeaconDescription.plain(field)] }

    /// The setting a key or field in any spelling names; nil for none.
    package static func named(_ key: String) -> AnyBeaconSetting? {
        let plain = BeaconDescription.plain(key)
        return all.first { $0.plainNames.contains(plain) }
    }

    /// Reads `value` (given under `key`, as written) into the parameters.
    /// - Throws: `BeaconDescription.Invalid` naming the key and what it takes.
    package func read(_ key: String, _ value: String, into parameters: inout BeaconParameters) throws(BeaconDescription.Invalid) {
        do throws(SettingValueError) {
            try read(key, value, &parameters)
        } catch {
            throw BeaconDescription.Invalid(error.message)
        }
    }

    /// The setting in the parameters as its JSON field's value; nil where it is the run's.
    package func json(_ parameters: BeaconParameters) -> JSONValue? {
        switch shown(parameters) {
        case let .integer(value)?: .integer(value)
        case let .number(value)?: .number(value)
        case let .text(text)?: .string(text)
        case let .flag(flag)?: .bool(flag)
        case let .integers(values)?: .array(values.map { .integer($0) })
        case nil: nil
        }
    }

    /// The settings as help lists them: `interval (MS), tx-power (DBM), ... and channels|channelMap
    /// (37 38 39)` (the field beside the key where files spell it otherwise).
    package static var helpList: String {
        let named = all.map { "\($0.plainNames.count > 1 ? "\($0.key)|\($0.field)" : $0.key) (\($0.values))" }
        return named.dropLast().joined(separator: ", ") + " and " + (named.last ?? "")
    }

    /// docs/advertising.md's table of them (Markdown, a line per setting after the header).
    package static var markdownTable: String {
        (["| `--beacon` key | field (JSON, files, scenarios) | values | what it sets |", "|---|---|---|---|"]
            + all.map { "| `\($0.key)` | `\($0.field)` | `\($0.values.replacingOccurrences(of: "|", with: "\\|"))` | \($0.help) |" })
            .joined(separator: "\n")
    }
}
