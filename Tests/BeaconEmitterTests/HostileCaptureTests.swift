// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconReports
import Foundation
import Testing

/// Captures holding what anyone in radio range can send, or what a file can say: numbers at
/// the ends of their ranges. `scan --replay` and `monitor --replay` read each to the end.
@Suite struct HostileCaptureTests {
    /// A btsnoop file (H4, datalink 1002) of the given events, each at `timestamp`.
    func btsnoop(_ events: [String], timestamp: Int64 = 0x00E0_3AB4_4A67_6000) throws -> String {
        try writeBtsnoop(events, timestamp: timestamp)
    }

    /// The issue's event: an iBeacon whose measured power is +1 dBm (0x01), RSSI -60 (0xC4).
    static let positivePower = "043e2a020103001122334455661e0201061aff4c000215000102030405060708090a0b0c0d0e0f0065000201c4"

    @Test(arguments: [["--json"], []])
    func positiveMeasuredPowerHasNoDistance(mode: [String]) throws {
        let path = try btsnoop([Self.positivePower])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path] + mode)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        if mode.isEmpty {
            #expect(result.stdout.contains("measuredPower=1dBm"))
            #expect(result.stdout.contains("distance ?"))
        } else {
            #expect(result.stdout.contains(#""measuredPower":1,"#))
            #expect(result.stdout.contains(#""accuracy":null,"proximity":"unknown""#))
        }
    }

    /// A capture of an active scan: the scan response is shown as one, from its advertiser;
    /// the advertising report beside it is not.
    @Test func aCapturedScanResponseIsMarked() throws {
        let advertising = "043e0f02010300112233445566" + "03020106" + "c4"   // ADV_NONCONN_IND: Flags
        let response = "043e1002010400112233445566" + "0403094869" + "c4"    // SCAN_RSP: name "Hi"
        let path = try btsnoop([advertising, response])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 2, "\(result.stdout)")
        #expect(result.stdoutLines.first?.contains("scanResponse") == false)
        #expect(result.stdoutLines.last?.contains(#""data":"03094869","scanResponse":true"#) == true, "\(result.stdout)")
    }

    /// A capture of advertisements none of which is a beacon: decode says what it holds (it said
    /// "no beacon in 3 packets without advertising data"), exit 65.
    @Test func aCaptureWithoutBeaconsSaysWhatItHolds() throws {
        let first = "043e0f02010300112233445566" + "03020106" + "c4"    // 66:55:44:33:22:11, Flags
        let second = "043e0f02010300aabbccddeeff" + "03020106" + "c4"   // FF:EE:DD:CC:BB:AA, Flags
        let path = try btsnoop([first, second, first])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["decode", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("no beacon in 3 advertising reports from 2 advertisers (scan --replay FILE shows what "
                                       + "they hold)"), "\(result.stderr)")
    }

    /// RSSI 127 is "not available" in HCI: no RSSI, no distance.
    @Test func rssiNotAvailableHasNoDistance() throws {
        let path = try btsnoop([String(Self.positivePower.dropLast(6)) + "02c57f"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""measuredPower":-59,"#))
        #expect(result.stdout.contains(#""rssi":null"#))
        #expect(result.stdout.contains(#""accuracy":null"#))
    }

    /// The farthest a distance can be: -128 dBm received from a beacon calibrated at -1 dBm.
    @Test func largestDistanceIsWritten() throws {
        let path = try btsnoop([String(Self.positivePower.dropLast(6)) + "02ff80"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""accuracy":1"#))
        #expect(result.stdout.contains(#""proximity":"far""#))
    }

    /// btsnoop timestamps are signed 64-bit microseconds: every extreme is read, and the scan
    /// and the region monitor carry on.
    @Test(arguments: [Int64.min, -1, 0, Int64.max])
    func timestampsAtTheEndsOfTheRange(timestamp: Int64) throws {
        let ordinary = String(Self.positivePower.dropLast(6)) + "02c5c4"
        let path = try btsnoop([ordinary, ordinary], timestamp: timestamp)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scan = try runBeaconEmit(["scan", "--replay", path, "--json", "--duplicates"])
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stdoutLines.count == 2)
        let monitor = try runBeaconEmit(["monitor", "--replay", path, "--uuid", "00010203-0405-0607-0809-0A0B0C0D0E0F"])
        #expect(monitor.status == 0, "\(monitor.stderr)")
    }

    @Test(arguments: [-Double.infinity, -1e300, -9.3e12, .nan, 9.3e12, 1e300, .infinity])
    func timestampTextForAnyTime(unix: Double) {
        let text = Timestamp.iso8601(unix)
        #expect(text.hasSuffix("Z"), "\(text)")
        if unix.isNaN { #expect(text == "1970-01-01T00:00:00.000Z") }
    }

    @Test func distanceTextForAnyValue() {
        #expect(Distance.metres(1.5) == "1.50")
        #expect(Distance.metres(nil) == "?")
        for value in [-1, .nan, .infinity, 1e300] { #expect(Distance.metres(value) == "?", "\(value)") }
        #expect(Distance.hundredths(1.6e16) == 1_600_000_000_000_000_000)
    }

    /// A duration typed as 1e300 once overflowed a count of milliseconds.
    @Test(arguments: [["scan", "--duration", "1e300"],
                      ["monitor", "--uuid", "00010203-0405-0607-0809-0A0B0C0D0E0F", "--duration", "1e300"],
                      ["--uuid", "00010203-0405-0607-0809-0A0B0C0D0E0F", "--major", "1", "--minor", "2", "--duration", "1e300"]])
    func hugeDurationIsAUsageError(arguments: [String]) throws {
        let result = try runBeaconEmit(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--duration must be a positive number of seconds (under 10^9)"))
    }
}
