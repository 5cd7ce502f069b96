// SPDX-License-Identifier: GPL-2.0-or-later

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

    @Test func badExpectationsAreUsageErrors() throws {
        for arguments in [["--expect", "major"], ["--expect", "=1"], ["--expect", ","], ["--expect-any"]] {
            let result = try runBeaconEmit(["decode"] + arguments + [Self.reference])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("--expect"), "\(result.stderr)")
        }
    }
}
