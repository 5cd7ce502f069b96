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
        ("minor=1-3,address=C0:11:22:33:44:55", "address=C0:11:22:33:44:55 would give the crowd's 3 beacons one address: "
         + "address=static or non-resolvable gives each an address of its own"),
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
        // One given address for a crowd is refused there too; a made-up kind gives each its own.
        try (text + "  - {uuid: \(Self.uuid), major: 9, minor: 1-2, address: 'C0:11:22:33:44:55'}\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect { try ScenarioParser.loadBeaconEntries(path: path) } throws: { "\($0)".contains("one address") }
        try (text + "  - {uuid: \(Self.uuid), major: 9, minor: 1-2, address: static}\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ScenarioParser.loadBeaconEntries(path: path).suffix(2).allSatisfy { $0.parameters.address == .generatedStaticRandom })
    }
}

/// A scenario's `replay` step: the capture's advertisers as beacons of the scenario's, on the
/// capture's timeline, read from the scenario's folder.
@Suite struct ReplayStepTests {
    @Test func aReplayStepAddsTheCapturesAdvertisers() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replay-step-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop")
        try FileManager.default.copyItem(at: fixture, to: folder.appendingPathComponent("lobby.btsnoop"))
        let path = folder.appendingPathComponent("rig.yaml").path
        try """
            beacons:
              own: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 5, minor: 5}
            steps:
              - advertise: own
              - replay: {file: lobby.btsnoop, speed: 2}
              - replay: lobby.btsnoop
              - replay: {file: lobby.btsnoop, loop: 3}
              - stop: own
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let scenario = try ScenarioParser.load(path: path)
        #expect(scenario.beacons.map(\.name) == ["own", "replay1-a1", "replay1-a2", "replay2-a1", "replay2-a2",
                                                 "replay3-a1", "replay3-a2"])
        // loop: 3 is three rounds of the capture's timeline; both advertisers are there from its
        // start to its end, so they stay on the air from round to round (one phase throughout).
        guard case let .repeatSteps(1, looped) = scenario.steps[3].action, looped.count == 3,
              case .advertise(["replay3-a1", "replay3-a2"]) = looped[0].action, case let .repeatSteps(3, round) = looped[1].action,
              case .stop(["replay3-a1", "replay3-a2"]) = looped[2].action else {
            Issue.record("\(scenario.steps[3].action)")
            return
        }
        #expect(!round.contains { if case .advertise = $0.action { true } else { false } }, "\(round.map(\.action))")
        guard case let .repeatSteps(1, steps) = scenario.steps[1].action else { Issue.record("\(scenario.steps[1].action)"); return }
        // Both advertisers come at once (as one change: they came within ReplayPlan.together), stay
        // 1.57 s at twice the speed (0.785 s + a period), and go as one.
        // (The first step starts the capture's clock: a paced wait of none.)
        #expect(steps.count == 4, "\(steps.map(\.action))")
        if case let .wait(seconds, paced) = steps[0].action { #expect(seconds == 0 && paced) } else { Issue.record("\(steps[0])") }
        if case .advertise(["replay1-a1", "replay1-a2"]) = steps[1].action {} else { Issue.record("\(steps[1])") }
        if case let .wait(seconds, paced) = steps[2].action { #expect(abs(seconds - 0.832) < 0.01 && paced, "\(seconds)") }
        else { Issue.record("\(steps[2])") }
        if case .stop(["replay1-a1", "replay1-a2"]) = steps[3].action {} else { Issue.record("\(steps[3])") }
        #expect(scenario.beacons[1].fields["ad"] == "0201060303AAFE0F16AAFE10EE016578616D706C650078")
        try "beacons:\n  own: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 5, minor: 5}\nsteps:\n  - replay: {file: lobby.btsnoop, loop: 0}\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect { try ScenarioParser.load(path: path) } throws: { "\($0)".contains("a whole number from 1 to 1000, got 0") }
        // A capture that is not there is the scenario's mistake, at its place.
        try "beacons:\n  own: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 5, minor: 5}\nsteps:\n  - replay: none.btsnoop\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try ScenarioParser.load(path: path)
            Issue.record("loaded")
        } catch {
            #expect(error.description.contains("rig.yaml:4:13: replay ") && error.description.contains("none.btsnoop"),
                    "\(error.description)")
        }
    }
}
