// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

/// `decode --expect`: a CI check without jq.
@Suite struct DecodeExpectTests {
    static let reference = DecodeCommandTests.reference
    /// The same beacon with minor 3 (byte 27 of the advertising data).
    static let otherMinor = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650003C5"

    @Test func everyBeaconMatches() throws {
        let result = try runBeaconEmit(["decode", "--expect",
                                        "type=ibeacon, uuid=39ed98ff-2900-441a-802f-9c398fc199d2,major=101,measuredPower=-59",
                                        Self.reference, Self.reference])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "beacon-emit: expectation met: all 2 beacons match\n")
        #expect(result.stdoutLines.count == 2, "the beacons are still printed")
    }

    @Test func aDifferingBeaconFailsWithTheFieldsSideBySide() throws {
        let result = try runBeaconEmit(["decode", "--expect", "minor=2,rssi=-60", Self.reference, Self.otherMinor])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "beacon-emit: expectation not met: 2 of 2 beacons differ",
            "  argument 1:",
            "    field     expected  decoded",
            "    rssi      -60       (no such field)",
            "  argument 2:",
            "    field     expected  decoded",
            "    minor     2         3",
            "    rssi      -60       (no such field)",
        ])
    }

    @Test func anyNeedsOneMatch() throws {
        let one = try runBeaconEmit(["decode", "--expect", "minor=3", "--expect-any", Self.reference, Self.otherMinor])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stderr == "beacon-emit: expectation met: 1 of 2 beacons match\n")
        let none = try runBeaconEmit(["decode", "--expect", "minor=4", "--expect-any", Self.reference, Self.otherMinor])
        #expect(none.status == 1)
        #expect(none.stderr.hasPrefix("beacon-emit: expectation not met: none of 2 beacons matches\n"))
    }

    /// Reports from a capture carry the address and RSSI; a field of every line is checkable.
    @Test func capturedReportsOnStandardInput() throws {
        let dump = try String(contentsOf: DecodeSpellingTests.folder.appendingPathComponent("hcidump-R.txt"), encoding: .utf8)
        let address = try runBeaconEmit(["decode", "--expect", "address=da:4c:10:de:17:00,addressType=public"], input: dump)
        #expect(address.status == 0, "\(address.stderr)")
        #expect(address.stderr == "beacon-emit: expectation met: all 32 beacons match\n")
        let url = try runBeaconEmit(["decode", "--expect-any", "--expect", "url=https://www.example.com/x"], input: dump)
        #expect(url.status == 0, "\(url.stderr)")
        let upper = try runBeaconEmit(["decode", "--expect-any", "--expect", "url=HTTPS://www.example.com/x"], input: dump)
        #expect(upper.status == 1, "URLs compare exactly")
    }

    @Test func nothingDecodedIsNotAMatch() throws {
        let result = try runBeaconEmit(["decode", "--expect", "type=ibeacon", "020106"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("beacon-emit: expectation not met: no beacon was decoded"), "\(result.stderr)")
    }

    /// A UUID, hex or address in any spelling `--uuid` takes (it wanted dashes: a correct
    /// beacon failed, exit 1).
    @Test func aUUIDMatchesInEverySpelling() throws {
        for uuid in ["39ED98FF2900441A802F9C398FC199D2", "39ed98ff-2900-441a-802f-9c398fc199d2",
                     "39ED98FF-2900-441A-802F-9C398FC199D2"] {
            let result = try runBeaconEmit(["decode", "--expect", "uuid=\(uuid),major=101", Self.reference])
            #expect(result.status == 0, "\(uuid): \(result.stderr)")
        }
        #expect(try runBeaconEmit(["decode", "--expect", "uuid=39ED98FF2900441A802F9C398FC199D3", Self.reference]).status == 1)
    }

    /// A key `--json` never writes is a mistake in the expectation, named with the nearest key
    /// (it exited 1, as a beacon that differs does).
    @Test func anUnknownKeyIsAUsageErrorThatNamesTheNearest() throws {
        let result = try runBeaconEmit(["decode", "--expect", "majr=101", Self.reference])
        #expect(result.status == 64 && result.stdout.isEmpty, "\(result.status) \(result.stdout)")
        #expect(result.stderr.hasPrefix("beacon-emit: --expect: no beacon has a key 'majr' (did you mean 'major'?)"), "\(result.stderr)")
    }

    /// Every key `--json` writes for a beacon is one `--expect` takes: the list cannot fall behind
    /// the formatter (decode's JSON of every kind, read back).
    @Test func everyKeyOfTheJSONIsAnExpectationKey() throws {
        let input = StrictJSONOutputTests.data.joined(separator: "\n") + "\n" + StrictJSONOutputTests.report(StrictJSONOutputTests.data[0]) + "\n"
        let result = try runBeaconEmit(["decode", "--json"], input: input)
        var keys = Set<String>()
        for line in result.stdoutLines {
            // Data without a beacon is listed by its structures: --expect checks beacons only.
            if case let .object(members) = JSONValue(parsing: line), members["structures"] == nil { keys.formUnion(members.keys) }
        }
        #expect(keys.count > 20, "\(result.stdout)")
        #expect(keys.subtracting(BeaconReports.Expectation.keys).isEmpty, "keys --expect does not take: \(keys.subtracting(BeaconReports.Expectation.keys))")
    }

    @Test func badExpectationsAreUsageErrors() throws {
        for arguments in [["--expect", "major"], ["--expect", "=1"], ["--expect", ","], ["--expect-any"]] {
            let result = try runBeaconEmit(["decode"] + arguments + [Self.reference])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("--expect"), "\(result.stderr)")
        }
    }
}
