// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

/// `decode --expect KEY=VALUE,...`: what every decoded beacon (or, with `--expect-any`, at
/// least one) must hold, in the keys of `--json`'s output. Each beacon is checked against its
/// own JSON object, written by the same code as `--json`, so the keys cannot drift apart.
public final class Expectation {
    struct Field: Equatable {
        var key: String
        var value: String
    }

    /// What was expected, and what a beacon held instead.
    struct Difference {
        var key: String
        var expected: String
        var found: String?
    }

    let fields: [Field]
    let any: Bool
    private(set) var beacons = 0
    private(set) var matching = 0
    /// The first few beacons that did not match, with where they came from.
    private(set) var misses: [(where: String, differences: [Difference])] = []
    private static let missesShown = 5

    /// Every key `--json` writes for a beacon (its format's and the sender's): what an
    /// expectation may name. (A test holds it to what the formatter writes.)
    public static let keys: Set<String> = [
        "type", "uuid", "major", "minor", "measuredPower", "companyId", "id1", "id2", "id3", "reserved", "namespace",
        "instance", "txPowerAt0m", "url", "version", "batteryMillivolts", "temperature", "advertisingPduCount",
        "uptimeSeconds", "encryptedTelemetry", "salt", "integrityCheck", "eid", "frameType", "frameData", "data",
        "scanResponse", "address", "addressType", "rssi", "txPower",
    ]

    /// Parses `type=ibeacon,major=101`.
    /// - Throws: a message for a part without `=`, with an empty key, or with a key `--json`
    ///   never writes (naming the nearest one).
    public init(_ text: String, any: Bool) throws(ExpectationError) {
        var fields: [Field] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = part.firstIndex(of: "=") else { throw ExpectationError(part: String(part)) }
            let key = part[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw ExpectationError(part: String(part)) }
            guard Self.keys.contains(key) else {
                throw ExpectationError(part: String(part), unknownKey: key, nearest: Self.nearest(to: key))
            }
            fields.append(Field(key: key, value: part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
        guard !fields.isEmpty else { throw ExpectationError(part: text) }
        self.fields = fields
        self.any = any
    }

    /// Checks one beacon, given as its `--json` object; `place` names it ("line 3").
    func check(_ sighting: BeaconSighting, place: String) {
        var object = JSONObject()
        SightingFormatter.add(sighting, to: &object)
        let json = JSONValue(parsing: object.line) ?? .null
        beacons += 1
        let differences = fields.compactMap { field -> Difference? in
            let found = json[field.key]?.text
            return found.map({ Self.same($0, field.value, key: field.key) }) == true
                ? nil : Difference(key: field.key, expected: field.value, found: found)
        }
        if differences.isEmpty {
            matching += 1
        } else if misses.count < Self.missesShown {
            misses.append((place, differences))
        }
    }

    /// Whether the expectation holds: every beacon matches (at least one with `any`), and
    /// there was a beacon at all.
    public var holds: Bool { beacons > 0 && (any ? matching > 0 : matching == beacons) }

    /// The verdict, for standard error: one line when it holds; otherwise the differing fields
    /// side by side.
    public var report: String {
        if holds {
            return any ? "expectation met: \(matching) of \(beacons) beacons match"
                : "expectation met: all \(beacons) beacon\(beacons == 1 ? "" : "s") match"
        }
        guard beacons > 0 else { return "expectation not met: no beacon was decoded" }
        var lines = [any ? "expectation not met: none of \(beacons) beacons matches"
                     : "expectation not met: \(beacons - matching) of \(beacons) beacons differ"]
        let width = max(8, fields.map(\.key.count).max() ?? 0)
        let valueWidth = max(8, fields.map(\.value.count).max() ?? 0)
        for miss in misses {
            lines.append("  \(miss.where):")
            lines.append("    " + "field".padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                         + "expected".padding(toLength: valueWidth, withPad: " ", startingAt: 0) + "  decoded")
            for difference in miss.differences {
                lines.append("    " + difference.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                             + difference.expected.padding(toLength: valueWidth, withPad: " ", startingAt: 0) + "  "
                             + (difference.found ?? "(no such field)"))
            }
        }
        if beacons - matching > misses.count {
            lines.append("  and \(beacons - matching - misses.count) more")
        }
        return lines.joined(separator: "\n")
    }

    /// A JSON value as the user would write it after `=`.
    /// Numbers compare as numbers (`-59` and `-59.0`), UUIDs, hex and addresses in any case,
    /// URLs exactly.
    /// UUIDs, hex and addresses also with or without their dashes, colons and spaces, as
    /// `--uuid` takes them.
    static func same(_ found: String, _ expected: String, key: String) -> Bool {
        if let left = Double(found), let right = Double(expected) { return left == right }
        if key == "url" { return found == expected }
        return found.caseInsensitiveCompare(expected) == .orderedSame
            || (isHex(found) && isHex(expected) && hexDigits(found) == hexDigits(expected))
    }

    private static func hexDigits(_ text: String) -> String {
        text.uppercased().filter { $0 != "-" && $0 != ":" && $0 != " " }
    }

    private static func isHex(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isHexDigit || $0 == "-" || $0 == ":" || $0 == " " }
    }

    /// The key nearest to `key`, when it is near enough to be meant.
    static func nearest(to key: String) -> String? { NearestWord.nearest(to: key, in: keys) }
}

