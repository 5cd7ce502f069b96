// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem
import Yams

/// Beacon lists and configuration files (`advertise --config`), and calibrate's rewrite of a
/// file's measured power: the documents that are not scenarios.
extension ScenarioParser {
    /// Parses and checks a configuration file's beacon list.
    public func beaconList(_ text: String) throws(ScenarioError) -> [Beacon] {
        try beaconEntries(text).map(\.beacon)
    }

    /// Parses and checks a configuration file's beacon list, each beacon with its own parameters.
    public func beaconEntries(_ text: String) throws(ScenarioError) -> [(beacon: Beacon, parameters: BeaconParameters)] {
        try configuration(text).entries
    }

    /// Parses and checks a configuration file, its document composed once: the beacon list,
    /// each beacon with its own parameters, and its `metrics:` value (a string or a port
    /// number, as written; nil where it has none).
    public func configuration(_ text: String) throws(ScenarioError)
        -> (entries: [(beacon: Beacon, parameters: BeaconParameters)], metrics: String?, layouts: [String: String]) {
        let root = try document(text, empty: "the file is empty: expected 'beacons:', a list of beacons")
        let top = try mapping(root, "the configuration", keys: ["beacons", "metrics", "layouts"])
        var reader = self
        reader.layouts = try layouts(top["layouts"])
        let (entries, metrics) = try reader.configuration(top, root: root)
        return (entries, metrics, reader.layouts)
    }

    /// The configuration's beacons and metrics, its layouts read.
    private func configuration(_ top: Entries, root: Node) throws(ScenarioError)
        -> (entries: [(beacon: Beacon, parameters: BeaconParameters)], metrics: String?) {
        guard let list = top["beacons"] else { throw fail(root, "expected 'beacons': a list of beacons") }
        guard case let .sequence(entries) = list else {
            throw fail(list, "'beacons' must be a list of beacons (each a map of fields such as uuid, major, minor)")
        }
        guard !entries.isEmpty else { throw fail(list, "'beacons' is empty: list at least one beacon") }
        guard entries.count <= AdvertisingOptions.maximumBeacons else {
            throw fail(list, "'beacons' lists \(entries.count) beacons: an emitter carries at most \(AdvertisingOptions.maximumBeacons)")
        }
        var beacons: [(beacon: Beacon, parameters: BeaconParameters)] = []
        for (index, entry) in entries.enumerated() {
            let what = "beacon \(index + 1)"
            let (fields, parameters) = try split(try beaconFields(entry, what, crowds: true), entry, what)
            // A range for major or minor (minor: 1-200) makes a crowd: one beacon per value.
            let crowd: [[(key: String, value: String)]]
            do {
                crowd = try BeaconDescription.crowd(fields.sorted { $0.key < $1.key }, sharing: parameters)
            } catch {
                throw fail(entry, "\(what): \(error.message)")
            }
            for member in crowd {
                beacons.append((try beacon(Dictionary(member.map { ($0.key, $0.value) }) { $1 }, parameters, entry, what), parameters))
            }
            guard beacons.count <= AdvertisingOptions.maximumBeacons else {
                throw fail(entry, "\(what): the file's beacons come to \(beacons.count) with its crowds: an emitter "
                           + "carries at most \(AdvertisingOptions.maximumBeacons)")
            }
        }
        return (beacons, try top["metrics"].map { (node) throws(ScenarioError) in try string(node, "metrics (PORT or ADDRESS:PORT)") })
    }

    /// The configuration file's text with `power` as the measured power of the first beacon
    /// entry that `matches` (`calibrate --write`): its measured-power value replaced where it
    /// stands, or the key added to the entry (in a flow map before its `}`, quoted as the
    /// entry's keys are; in a block map on a line of its own under the entry's keys). The rest
    /// of the text stays as it was, comments included.
    /// - Throws: `ScenarioError` when the file does not read as a beacon list, or no entry matches.
    public func settingMeasuredPower(_ power: Int, in text: String,
                                     where matches: (Beacon) -> Bool) throws(ScenarioError) -> String {
        let root = try document(text, empty: "the file is empty: expected 'beacons:', a list of beacons")
        let top = try mapping(root, "the configuration", keys: ["beacons", "metrics", "layouts"])
        guard let list = top["beacons"], case let .sequence(entries) = list else {
            throw fail(root, "expected 'beacons': a list of beacons")
        }
        var reader = self
        reader.layouts = try layouts(top["layouts"])
        for (index, entry) in entries.enumerated() {
            let what = "beacon \(index + 1)"
            let (fields, parameters) = try reader.split(try reader.beaconFields(entry, what), entry, what)
            guard matches(try reader.beacon(fields, parameters, entry, what)), case let .mapping(map) = entry else { continue }
            let edited = try insertingMeasuredPower(power, into: map, at: entry, what, in: text)
            // The edit must leave a file that reads as before but for the value: else (a value
            // of several lines, say) it is left to the user.
            guard let read = try? beaconList(edited), read.count == entries.count else {
                throw fail(entry, "\(what): cannot put its measured power in without changing the rest: "
                           + "add measured-power: \(power) to it by hand")
            }
            return edited
        }
        throw fail(list, "no entry describes this beacon: add it to the file, or run calibrate with the beacon the file lists")
    }

    /// The text with the measured power of the beacon entry `map` (at `entry`) set: its value
    /// replaced where it stands, or the key added (in a flow map before its `}`, quoted as the
    /// entry's keys are; in a block map on a line of its own after the entry's last value).
    func insertingMeasuredPower(_ power: Int, into map: Node.Mapping, at entry: Node, _ what: String,
                                        in text: String) throws(ScenarioError) -> String {
        // Lines as the YAML reader counts them (CRLF is one line break).
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        func offset(_ node: Node) -> String.Index? {
            guard let mark = node.mark, mark.line >= 1, mark.line <= lines.count, mark.column >= 1 else { return nil }
            let line = lines[mark.line - 1]
            return line.index(line.startIndex, offsetBy: mark.column - 1, limitedBy: line.endIndex)
        }
        let unplaced = fail(entry, "\(what): cannot tell where to write its measured power")
        if let (_, value) = map.first(where: { key, _ in Self.plain(key.string ?? "") == "measuredpower" }) {
            // A plain number (one written as a string was refused, by beaconFields).
            guard case let .scalar(scalar) = value, let start = offset(value),
                  let end = text.index(start, offsetBy: scalar.string.count, limitedBy: text.endIndex) else { throw unplaced }
            return text.replacingCharacters(in: start..<end, with: String(power))
        }
        guard let start = offset(entry), let firstKey = map.keys.first, let keyStart = offset(firstKey) else { throw unplaced }
        if text[start] == "{" {
            guard let close = Self.closingBrace(of: start, in: text) else { throw unplaced }
            let key = text[keyStart] == "\"" ? "\"measuredPower\"" : "measured-power"
            return text.replacingCharacters(in: close..<close, with: ", \(key): \(power)")
        }
        // A block map: after the line of its last value, at its keys' indentation, with the
        // file's own line break.
        let lastLine = map.values.compactMap { $0.mark?.line }.max() ?? (firstKey.mark?.line ?? 0)
        guard lastLine >= 1, lastLine <= lines.count, let column = firstKey.mark?.column, column >= 1 else { throw unplaced }
        let lineBreak = text.contains("\r\n") ? "\r\n" : "\n"
        let at = lines[lastLine - 1].endIndex
        return text.replacingCharacters(in: at..<at, with: lineBreak + String(repeating: " ", count: column - 1)
                                        + "measured-power: \(power)")
    }

    /// The `}` that closes the flow map opening at `start`, past nested maps, lists and quoted text.
    static func closingBrace(of start: String.Index, in text: String) -> String.Index? {
        var depth = 0
        var quote: Character?
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == "\\" && open == "\"" { index = text.index(after: index) } else if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "{" || character == "[" {
                depth += 1
            } else if character == "}" || character == "]" {
                depth -= 1
                if depth == 0 { return index }
            }
            if index < text.endIndex { index = text.index(after: index) }
        }
        return nil
    }
}
