// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import BeaconRig
import Foundation
import Testing

/// A beacon's own settings are one table (`AnyBeaconSetting.all`): the keys a description takes
/// apart from its data, the did-you-mean list, the JSON fields, `advertise --help` and
/// docs/advertising.md's table all come from it, and each setting reads what it shows.
@Suite struct BeaconSettingTests {
    /// Each setting read in every spelling of its key, shown by its field, and read back from
    /// what it showed to the same parameters.
    @Test func eachSettingReadsWhatItShows() throws {
        let given = ["interval": "200", "tx-power": "-8", "address": "static", "rotate-address": "30", "phy": "1m",
                     "connectable": "false", "pdu": "extended", "channels": "37 39"]
        #expect(Set(given.keys) == Set(AnyBeaconSetting.all.map(\.key)), "a value for every setting")
        let parameters = try BeaconDescription.parameters(in: given).parameters
        let fields = parameters.fields
        #expect(Set(fields.keys) == Set(AnyBeaconSetting.all.map(\.field)), "\(fields)")
        #expect(fields["interval"] == .number(200) && fields["txPower"] == .integer(-8) && fields["pdu"] == .string("extended")
                && fields["channelMap"] == .array([.integer(37), .integer(39)]))
        #expect(parameters[.channelMap] == [37, 39] && parameters.description.contains("channels 37 39"), "\(parameters.description)")
        let back = fields.mapValues { value -> String in
            switch value {
            case let .string(text): text
            case let .number(number): "\(number)"
            case let .integer(integer): "\(integer)"
            case let .bool(flag): "\(flag)"
            case let .array(items): items.map { $0.integer.map(String.init) ?? "" }.joined(separator: " ")
            default: ""
            }
        }
        #expect(try BeaconDescription.parameters(in: back).parameters == parameters, "\(back)")
        for spelling in ["txPower", "TX_POWER", "tx-power"] {
            #expect(try BeaconDescription.parameters(in: [spelling: "4"]).parameters.txPower == 4)
        }
    }

    /// A value out of range or of the wrong kind names the key as written and what it takes.
    @Test(arguments: [("tx-power", "30", "tx-power must be from -127 to 20 (dBm), got '30'"),
                      ("txPower", "loud", "txPower must be a number from -127 to 20 (dBm), got 'loud'"),
                      ("interval", "5", "interval must be from 20 to 10485759 ms (extended advertising), got '5'"),
                      ("pdu", "long", "pdu must be legacy or extended, got 'long'"),
                      ("connectable", "maybe", "connectable must be true or false, got 'maybe'"),
                      ("channels", "37 40", "channels must list some of the channels 37, 38 and 39 (separated by spaces), got '37 40'"),
                      ("channels", "37 37", "channels must list some of the channels 37, 38 and 39")])
    func aWrongValueSaysWhatTheSettingTakes(key: String, value: String, message: String) {
        #expect { try BeaconDescription.parameters(in: [key: value]) } throws: { "\($0)".contains(message) }
    }

    /// The description's messages: a setting given as data names the settings by field; an
    /// unknown key is offered the nearest of the data keys and the settings' keys.
    @Test func theDescriptionsMessagesComeFromTheTable() {
        #expect { try BeaconDescription(pairs: [("pdu", "legacy")]) } throws: {
            "\($0)".contains("one of a beacon's own parameters (" + AnyBeaconSetting.all.map(\.field).joined(separator: ", ") + ")")
        }
        #expect { try BeaconDescription(pairs: [("rotate-adress", "3")]) } throws: { error in
            "\(error)".contains("did you mean 'rotate-address'?") && AnyBeaconSetting.all.allSatisfy { "\(error)".contains($0.key) }
        }
        #expect(BeaconDescription.numberRanges["txpower"] == "-127 to 20 (dBm)")
    }

    /// `advertise --help` lists every setting with its values.
    @Test func advertiseHelpListsEverySetting() throws {
        let help = try runBeaconEmit(["advertise", "--help"], environment: ["COLUMNS": "400"]).stdout
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        for setting in AnyBeaconSetting.all {
            // The field beside the key where files spell it otherwise: channels|channelMap.
            let named = setting.plainNames.count > 1 ? "\(setting.key)|\(setting.field)" : setting.key
            #expect(help.contains("\(named) (\(setting.values))"), "\(setting.key) in advertise --help")
        }
    }

    /// docs/advertising.md's table of a beacon's own settings is the table.
    @Test func theDocsTableIsTheTable() throws {
        let docs = try String(contentsOf: Readme.root.appendingPathComponent("docs/advertising.md"), encoding: .utf8)
        let start = try #require(docs.range(of: "<!-- settings table: AnyBeaconSetting.all; a test keeps it equal -->\n"))
        let end = try #require(docs.range(of: "\n<!-- end of settings table -->", range: start.upperBound..<docs.endIndex))
        #expect(String(docs[start.upperBound..<end.lowerBound]) == AnyBeaconSetting.markdownTable)
    }
}
