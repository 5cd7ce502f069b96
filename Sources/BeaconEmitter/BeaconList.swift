// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconReports
import BeaconRig
import Foundation
import Yams

/// Several beacons, from repeated `--beacon KEY=VALUE,...` descriptions or a config file.
/// Each description is read with the same options and checks as a single beacon's.
enum BeaconList {
    /// Parses `uuid=...,major=1,minor=2` (keys are the option names without dashes;
    /// `type=altbeacon|eddystone-uid|eddystone-tlm` and `url=` pick other formats).
    /// - Throws: `ValidationError` naming the description and what is wrong.
    static func beacon(fromSpecification specification: String, label: String) throws -> Beacon {
        do {
            return try beacon(fromPairs: try KeyValueText.pairs(specification).map { ($0.key, $0.value) }, label: label)
        } catch let malformed as KeyValueText.Malformed {
            throw ValidationError("\(label): expected KEY=VALUE pairs separated by commas, got '\(malformed.item)'")
        }
    }

    /// Reads a JSON or YAML file: `{"beacons": [{"uuid": ..., "major": 1, "minor": 2}, ...]}`,
    /// with the scenario reader (bounded in size and in aliases; each mistake at its
    /// FILE:LINE:COLUMN with what was expected there).
    /// - Throws: `ValidationError` with that message.
    static func beacons(fromConfigurationFile path: String) throws -> [Beacon] {
        do {
            return try ScenarioParser.loadBeaconList(path: path, makeBeacon: beacon(fromFields:))
        } catch {
            throw ValidationError("--config \(error.description)")
        }
    }

    /// A beacon's fields in the `--beacon` keys, which `beacon(fromFields:)` builds the same
    /// beacon from again (what a live update starts from).
    static func fields(of beacon: Beacon) -> [String: String] {
        switch beacon {
        case let .iBeacon(beacon):
            return ["uuid": beacon.proximityUUID.uuidString, "major": "\(beacon.major)", "minor": "\(beacon.minor)",
                    "measuredPower": "\(beacon.measuredPower)"]
        case let .altBeacon(beacon):
            return ["type": "altbeacon", "uuid": beacon.id1.uuidString, "major": "\(beacon.id2)", "minor": "\(beacon.id3)",
                    "measuredPower": "\(beacon.measuredPower)", "companyId": "\(beacon.company.rawValue)"]
        case let .eddystone(.uid(frame)):
            return ["type": "eddystone-uid", "namespace": HexText.format(frame.namespace),
                    "instance": HexText.format(frame.instance),
                    "measuredPower": "\(Int(frame.txPowerAt0m) - EddystoneFrame.zeroToOneMetreLoss)"]
        case let .eddystone(.url(frame)):
            return ["url": frame.url, "measuredPower": "\(Int(frame.txPowerAt0m) - EddystoneFrame.zeroToOneMetreLoss)"]
        case let .eddystone(.tlm(frame)):
            var fields = ["type": "eddystone-tlm", "battery": "\(frame.batteryMillivolts)",
                          "pduCount": "\(frame.advertisingPDUCount)",
                          "uptime": SightingFormatter.deciseconds(frame.uptimeDeciseconds)]
            if let temperature = frame.temperature { fields["temperature"] = "\(temperature)" }
            return fields
        case let .custom(custom):
            var fields = ["ad": HexText.format(custom.data.bytes)]
            if beacon.needsExtendedPDU { fields["extended-pdu"] = "true" }
            if let response = custom.scanResponse { fields["scan-response"] = HexText.format(response.bytes) }
            return fields
        case .eddystone(.other), .eddystone(.encryptedTLM):
            return [:]
        }
    }

    /// A beacon from a scenario's fields (the same keys as `--beacon`).
    /// - Throws: `ValidationError` saying what is wrong, without a label.
    @Sendable static func beacon(fromFields fields: [String: String]) throws -> Beacon {
        try beacon(fromPairs: fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, label: nil)
    }

    private static func beacon(fromPairs pairs: [(String, String)], label: String?) throws -> Beacon {
        let prefix = label.map { "\($0): " } ?? ""
        var arguments: [String] = []
        for (key, value) in pairs {
            let option = kebab(key)
            guard fieldKeys.contains(option) else {
                throw ValidationError("\(prefix)unknown key '\(key)': a beacon takes \(fieldKeys.joined(separator: ", "))")
            }
            switch option {
            case "type" where value.lowercased() == "eddystone-url", "format" where value.lowercased() == "eddystone-url":
                continue // the url= key selects Eddystone-URL
            case "type", "format":
                guard let format = BeaconFormat.allCases.first(where: { $0.flagName == value.lowercased() }) else {
                    throw ValidationError("\(prefix)type must be ibeacon, altbeacon, eddystone-uid, eddystone-tlm "
                                          + "(or give url= for Eddystone-URL), got '\(value)'")
                }
                arguments.append("--\(format.flagName)")
            case "url":
                arguments += ["--eddystone-url", value]
            case "extended-pdu":
                guard ["true", "yes", "1", "false", "no", "0"].contains(value.lowercased()) else {
                    throw ValidationError("\(prefix)extended-pdu must be true or false, got '\(value)'")
                }
                if ["true", "yes", "1"].contains(value.lowercased()) { arguments.append("--extended-pdu") }
            case "service-uuid":
                // Several in one value (a configuration file's key holds one): space-separated.
                for uuid in value.split(separator: " ") { arguments += ["--service-uuid", String(uuid)] }
            case let option where Double(value) == nil && ScenarioParser.numberRanges[ScenarioParser.plain(option)] != nil:
                let range = ScenarioParser.numberRanges[ScenarioParser.plain(option)] ?? ""
                throw ValidationError("\(prefix)\(key) must be a number from \(range), got '\(value)'")
            default:
                arguments += ["--\(option)", value]
            }
        }
        do {
            return try BeaconOptions.parse(arguments).makeBeacon()
        } catch {
            throw ValidationError("\(prefix)\(BeaconOptions.message(for: error))")
        }
    }

    /// The keys a beacon's description takes (the beacon options' names; `type` picks the format).
    static let fieldKeys = ["type", "format", "uuid", "major", "minor", "measured-power", "company-id", "namespace",
                            "instance", "url", "battery", "temperature", "pdu-count", "uptime", "ad", "scan-response", "name",
                            "manufacturer-data", "service-data", "service-uuid", "flags", "extended-pdu"]

    /// `measuredPower` -> `measured-power`.
    private static func kebab(_ key: String) -> String {
        var out = ""
        for char in key {
            if char.isUppercase {
                out += "-" + char.lowercased()
            } else {
                out.append(char)
            }
        }
        return out
    }
}
