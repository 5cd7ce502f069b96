// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// A range for major or minor in a description makes a crowd: one beacon per value.
@Suite struct CrowdTests {
    static let uuid = "39ED98FF2900441A802F9C398FC199D2"

    @Test func aRangeMakesOneBeaconPerValue() throws {
        let crowd = try BeaconDescription.beaconsAndParameters(specification: "uuid=\(Self.uuid),major=3-4,minor=10-12,interval=200")
        #expect(crowd.count == 6)
        let identifiers = crowd.compactMap { entry -> String? in
            guard case let .iBeacon(beacon) = entry.beacon else { return nil }
            return "\(beacon.major).\(beacon.minor)"
        }
        #expect(identifiers == ["3.10", "3.11", "3.12", "4.10", "4.11", "4.12"])
        #expect(crowd.allSatisfy { $0.parameters.intervalUnits == 320 }, "each with the description's own parameters")
        #expect(try BeaconDescription.beaconsAndParameters(specification: "uuid=\(Self.uuid),major=1,minor=2").count == 1)
    }

    @Test(arguments: [
        ("minor=5-2", "minor takes a number from 0 to 65535 or a range FROM-TO of them (a crowd: minor=1-200), got '5-2'"),
        ("minor=1-70000", "got '1-70000'"),
        ("minor=1-300", "minor=1-300 makes 300 beacons: an emitter carries at most 256"),
    ])
    func aBadRangeSaysWhy(range: String, message: String) {
        do {
            _ = try BeaconDescription.beaconsAndParameters(specification: "uuid=\(Self.uuid),major=1,\(range)")
            Issue.record("built")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    /// In a configuration file too; a scenario names each beacon, so a range there is a mistake.
    @Test func aConfigurationFilesCrowd() throws {
        let text = "beacons:\n  - {uuid: \(Self.uuid), major: 7, minor: 1-30}\n  - {uuid: \(Self.uuid), major: 8, minor: 1}\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("crowd-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try ScenarioParser.loadBeaconEntries(path: path).count == 31)
    }
}
