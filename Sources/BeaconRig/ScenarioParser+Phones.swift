// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Yams

/// `phones:` and a phone's expectations.
extension ScenarioParser {
    /// One phone: `log:` (a command) and the app's lines, or `preset: marker`; each pattern a
    /// regular expression that compiles, a `state:` one with groups `region` and `state`.
    func phone(_ node: Node, _ name: String) throws(ScenarioError) -> Scenario.PhoneDefinition {
        let what = "phone '\(name)'"
        let map = try mapping(node, what, keys: ["log", "enter", "exit", "state", "preset"])
        guard let logNode = map["log"] else { throw fail(node, "\(what) needs 'log: COMMAND' (its lines are the phone's log)") }
        let command = try string(logNode, "\(what)'s log")
        guard !command.trimmingCharacters(in: .whitespaces).isEmpty else { throw fail(logNode, "\(what)'s log is empty") }
        var phone = Scenario.PhoneDefinition(name: name, command: command, place: place(node))
        if let presetNode = map["preset"] {
            let preset = try string(presetNode, "\(what)'s preset")
            guard preset == "marker" else { throw fail(presetNode, "\(what): the one preset is 'marker', got '\(preset)'") }
            (phone.enter, phone.exit, phone.state) = Scenario.PhoneDefinition.marker
        }
        for (key, patternNode) in map.entries where ["enter", "exit", "state"].contains(key) {
            let pattern = try string(patternNode, "\(what)'s \(key)")
            do {
                _ = try PhoneLog.compile(pattern, key: key)
            } catch {
                throw fail(patternNode, "\(what)'s \(key): \(error)")
            }
            switch key {
            case "enter": phone.enter = pattern
            case "exit": phone.exit = pattern
            default: phone.state = pattern
            }
        }
        guard phone.enter != nil || phone.exit != nil || phone.state != nil else {
            throw fail(node, "\(what) needs the app's lines to match: 'enter:', 'exit:' and/or 'state:' (regular "
                       + "expressions with a group (?<region>...)), or 'preset: marker'")
        }
        return phone
    }

    /// `expect: {phone: NAME, region: NAME, event: enter|exit | state: inside|outside, within: S}`
    /// or `{phone: NAME, region: NAME, noEvent: true, for: S}`.
    func phoneExpectation(_ map: Entries, _ node: Node, scenario: Scenario) throws(ScenarioError) -> Scenario.Action {
        let phoneNode = map["phone"] ?? node
        let name = try string(phoneNode, "phone")
        guard let phone = scenario.phones.first(where: { $0.name == name }) else {
            throw fail(phoneNode, "no phone named '\(name)' (declare it under 'phones')" + known(scenario.phones.map(\.name)))
        }
        guard let regionNode = map["region"] else { throw fail(node, "expect phone needs 'region: NAME'") }
        let region = try string(regionNode, "region")
        guard scenario.region(named: region) != nil else {
            throw fail(regionNode, "no region named '\(region)' (declare it under 'regions', named as the app logs it)"
                       + known(scenario.regions.map(\.name)))
        }
        if let noEvent = map["noEvent"] {
            try only(map, ["phone", "region", "noEvent", "for"], node, "expect phone noEvent")
            guard try string(noEvent, "noEvent") == "true" else { throw fail(noEvent, "noEvent takes true") }
            guard phone.enter != nil || phone.exit != nil else {
                throw fail(node, "phone '\(name)' has no 'enter:' or 'exit:' line to watch for")
            }
            return .expectPhone(name, region: region, .noEvent, seconds: try required(map, "for", node, "expect phone noEvent"))
        }
        try only(map, ["phone", "region", "state", "event", "within"], node, "expect phone")
        let within = try required(map, "within", node, "expect phone")
        let expectation: Scenario.PhoneExpectation
        switch (map["state"], map["event"]) {
        case let (state?, nil):
            let text = try string(state, "state")
            guard text == "inside" || text == "outside" else { throw fail(state, "state must be inside or outside, got '\(text)'") }
            expectation = text == "inside" ? .inside : .outside
        case let (nil, event?):
            let text = try string(event, "event")
            guard text == "enter" || text == "exit" else { throw fail(event, "event must be enter or exit, got '\(text)'") }
            expectation = text == "enter" ? .enter : .exit
        default:
            throw fail(node, "expect phone needs one of 'event: enter|exit', 'state: inside|outside' or 'noEvent: true'")
        }
        let pattern: String? = switch expectation {
        case .enter: phone.enter
        case .exit: phone.exit
        default: phone.state ?? phone.enter ?? phone.exit
        }
        guard pattern != nil else {
            throw fail(node, "phone '\(name)' has no '\(expectation == .exit ? "exit" : expectation == .enter ? "enter" : "state")"
                       + ":' line to watch for")
        }
        return .expectPhone(name, region: region, expectation, seconds: within)
    }
}
