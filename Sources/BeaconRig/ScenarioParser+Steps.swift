// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem
import Yams

/// A scenario's steps, each read into its action.
extension ScenarioParser {
    /// `replay: FILE` or `replay: {file: FILE, speed: X, only: [ADDRESS, ...], loop: N, gap: S}`:
    /// a capture's advertisers (`ReplayPlan`) put on the air beside the scenario's beacons, as
    /// beacons of their own (`replay1-a1`, ...), advertised and stopped on the capture's
    /// timeline, each going at every silence `Presence.isGoing` calls one (`gap`, as
    /// `replay --gap`), N rounds of it (1 to 1000; 1 by default); the steps after it come when
    /// the last round ends. FILE is read from the scenario's folder.
    func replay(_ node: Node, scenario: inout Scenario) throws(ScenarioError) -> Scenario.Action {
        var path: String
        var speed = 1.0
        var only = Set<BluetoothAddress>()
        var rounds = 1
        var gap = Presence.defaultGap
        if case .scalar = node {
            path = try string(node, "replay")
        } else {
            let map = try mapping(node, "replay", keys: ["file", "speed", "only", "loop", "gap"])
            if let gapNode = map["gap"] {
                gap = try number(gapNode, "replay's gap")
                guard Presence.gaps.contains(gap) else {
                    throw fail(gapNode, "gap is the shortest silence taken as a going: \(Presence.gaps.lowerBound) to "
                               + "\(Int(Presence.gaps.upperBound)) seconds, got \(gap)")
                }
            }
            if let loopNode = map["loop"] {
                let value = try number(loopNode, "replay's loop")
                guard value == value.rounded(), value >= 1, value <= 1000 else {
                    throw fail(loopNode, "loop is how many rounds of the capture: a whole number from 1 to 1000, got \(value)")
                }
                rounds = Int(value)
            }
            guard let fileNode = map["file"] else { throw fail(node, "replay needs 'file: CAPTURE' (or 'replay: CAPTURE')") }
            path = try string(fileNode, "replay's file")
            if let speedNode = map["speed"] {
                speed = try number(speedNode, "replay's speed")
                guard speed >= 0.01 && speed <= 100 else { throw fail(speedNode, "speed must be from 0.01 to 100, got \(speed)") }
            }
            if let onlyNode = map["only"] {
                let texts: [String]
                if case let .sequence(items) = onlyNode {
                    texts = try items.map { (item) throws(ScenarioError) in try string(item, "replay's only") }
                } else {
                    texts = [try string(onlyNode, "replay's only")]
                }
                for text in texts {
                    guard let address = try? BluetoothAddress(parsing: text) else {
                        throw fail(onlyNode, "only takes addresses AA:BB:CC:DD:EE:FF, got '\(text)'")
                    }
                    only.insert(address)
                }
            }
        }
        path = beside(path)
        let plan: ReplayPlan
        do {
            plan = try ReplayPlan(try CaptureSurvey.read(path: path, gap: gap).survey.advertisers, speed: speed,
                                      only: ScanFilter(addresses: only))
        } catch {
            throw fail(node, "replay \(path): \(error)")
        }
        // Its advertisers count toward the beacons an emitter carries, as the scenario's own do.
        guard scenario.beacons.count + plan.entries.count <= AdvertisingOptions.maximumBeacons else {
            throw fail(node, "replay \(path): its \(plan.entries.count) advertisers and the scenario's \(scenario.beacons.count) "
                       + "beacons make more than \(AdvertisingOptions.maximumBeacons), the most an emitter carries: replay "
                       + "fewer (only: [ADDRESS, ...]) or fewer times")
        }
        var round = 1
        while scenario.beacons.contains(where: { $0.name.hasPrefix("replay\(round)-") }) { round += 1 }
        let replayed: Scenario
        do {
            replayed = try plan.scenario(device: nil, prefix: "replay\(round)-", rounds: rounds)
        } catch {
            throw fail(node, "replay \(path): \(error)")
        }
        scenario.beacons += replayed.beacons
        return .repeatSteps(times: 1, steps: replayed.steps)
    }

    static let stepKinds = ["advertise", "update", "stop", "wait", "expect", "repeat", "ramp", "replay"]

    func steps(_ node: Node, scenario: inout Scenario) throws(ScenarioError) -> [Scenario.Step] {
        guard case let .sequence(sequence) = node else {
            throw fail(node, "'steps' must be a list (each item '- advertise: NAME', '- wait: SECONDS', ...)")
        }
        var steps: [Scenario.Step] = []
        for item in sequence {
            let map = try mapping(item, "a step", keys: Self.stepKinds)
            guard map.entries.count == 1, let (kind, value) = map.entries.first else {
                throw fail(item, "a step has exactly one of \(Self.stepKinds.joined(separator: ", ")); got "
                           + (map.entries.isEmpty ? "none" : map.entries.map(\.0).joined(separator: " and ")))
            }
            steps.append(Scenario.Step(try action(kind, value, scenario: &scenario), place: place(item)))
        }
        return steps
    }

    func action(_ kind: String, _ node: Node, scenario: inout Scenario) throws(ScenarioError) -> Scenario.Action {
        switch kind {
        case "replay":
            return try replay(node, scenario: &scenario)
        case "advertise":
            return .advertise(try names(node, "advertise", scenario: scenario))
        case "stop":
            if case let .scalar(scalar) = node, scalar.string == "all" { return .stop(nil) }
            return .stop(try names(node, "stop", scenario: scenario))
        case "wait":
            return .wait(seconds: try seconds(node, "wait"))
        case "update":
            let map = try mapping(node, "update", keys: nil)
            guard let beaconNode = map["beacon"] else { throw fail(node, "update needs 'beacon: NAME' and the fields to change") }
            let name = try beaconName(beaconNode, scenario: scenario)
            var fields: [String: String] = [:]
            for (key, value) in map.entries where key != "beacon" {
                fields[key] = try beaconField(key, value, "update of '\(name)'")
                try checkNumber(key, value, "update of '\(name)'")
            }
            guard !fields.isEmpty else { throw fail(node, "update of '\(name)' changes no field (give e.g. minor: 3)") }
            return .update(name, fields: fields)
        case "expect":
            let map = try mapping(node, "expect", keys: ["seen", "notSeen", "phone", "region", "state", "event", "noEvent",
                                                         "within", "for"])
            if map["phone"] != nil { return try phoneExpectation(map, node, scenario: scenario) }
            if let seen = map["seen"] {
                try only(map, ["seen", "within"], node, "expect seen")
                return .expectSeen(try beaconName(seen, scenario: scenario), within: try required(map, "within", node, "expect seen"))
            }
            if let notSeen = map["notSeen"] {
                try only(map, ["notSeen", "for"], node, "expect notSeen")
                return .expectNotSeen(try beaconName(notSeen, scenario: scenario), for: try required(map, "for", node, "expect notSeen"))
            }
            if let regionNode = map["region"] {
                try only(map, ["region", "state", "event", "within"], node, "expect region")
                let name = try string(regionNode, "region")
                guard scenario.region(named: name) != nil else {
                    throw fail(regionNode, "no region named '\(name)' (declare it under 'regions')"
                               + known(scenario.regions.map(\.name)))
                }
                let within = try required(map, "within", node, "expect region")
                switch (map["state"], map["event"]) {
                case let (state?, nil):
                    let text = try string(state, "state")
                    guard text == "inside" || text == "outside" else { throw fail(state, "state must be inside or outside, got '\(text)'") }
                    return .expectRegion(name, text == "inside" ? .inside : .outside, within: within)
                case let (nil, event?):
                    let text = try string(event, "event")
                    guard text == "enter" || text == "exit" else { throw fail(event, "event must be enter or exit, got '\(text)'") }
                    return .expectRegion(name, text == "enter" ? .enter : .exit, within: within)
                default:
                    throw fail(node, "expect region needs one of 'state: inside|outside' or 'event: enter|exit'")
                }
            }
            throw fail(node, "expect needs one of 'seen: NAME', 'notSeen: NAME', 'region: NAME' or 'phone: NAME'")
        case "repeat":
            let map = try mapping(node, "repeat", keys: ["times", "steps"])
            guard let timesNode = map["times"], let stepsNode = map["steps"] else {
                throw fail(node, "repeat needs 'times: N' and 'steps: [...]'")
            }
            let times = try integer(timesNode, "times")
            guard (1...100_000).contains(times) else { throw fail(timesNode, "times must be from 1 to 100000, got \(times)") }
            let inner = try steps(stepsNode, scenario: &scenario)
            guard !inner.isEmpty else { throw fail(stepsNode, "repeat's 'steps' is empty") }
            return .repeatSteps(times: times, steps: inner)
        case "ramp":
            let map = try mapping(node, "ramp", keys: ["beacon", "from", "to", "step", "every"])
            guard let beaconNode = map["beacon"], let fromNode = map["from"], let toNode = map["to"] else {
                throw fail(node, "ramp needs 'beacon: NAME', 'from: dBm' and 'to: dBm' (and optionally 'step: dB', 'every: seconds')")
            }
            let name = try beaconName(beaconNode, scenario: scenario)
            let from = try integer(fromNode, "from")
            let to = try integer(toNode, "to")
            for (value, valueNode) in [(from, fromNode), (to, toNode)] where !(-127...20).contains(value) {
                throw fail(valueNode, "TX power must be from -127 to 20 dBm, got \(value)")
            }
            let step = try map["step"].map { node throws(ScenarioError) in try integer(node, "step") } ?? 2
            guard step > 0 else { throw fail(map["step"] ?? node, "step must be a positive number of dB, got \(step)") }
            let every = try map["every"].map { node throws(ScenarioError) in try seconds(node, "every") } ?? 1
            return .ramp(name, from: from, to: to, step: step, every: every)
        default:
            throw fail(node, "unknown step '\(kind)'")
        }
    }

    /// The most steps `check` visits: far more than any scenario's steps, walked as below.
    static let maximumStepVisits = 1_000_000
}
