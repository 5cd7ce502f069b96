// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// What a replay asks of the controller at its busiest, estimated from its steps before it
/// starts: at each instant the advertisers going are disabled by one command, and each one
/// coming takes up to three (its parameters, address and data; a scan response one more)
/// before one enable for all. A controller answers a command in about `commandSeconds`.
public struct ReplayPace: Sendable, Equatable {
    /// When the busiest instant is due, in the replay's seconds.
    public var at: Double
    /// How many advertisers go or come then.
    public var changes: Int
    /// The HCI commands that takes, at most.
    public var commands: Int
    /// The time to the next instant after it, nil for the last.
    public var room: Double?
    /// The instants whose commands would take longer than the time to the next one.
    public var crowded: Int

    /// What a virtual controller (rootcanal) takes to answer a command; a controller on USB
    /// or UART answers in about a millisecond or two.
    public static let commandSeconds = 0.005

    /// The HCI commands a change takes at most: a stop of several, one disable; an advertise of
    /// n, three each and one enable; none for anything else.
    public static func commands(_ action: Scenario.Action) -> Int {
        switch action {
        case .stop(_?): 1
        case let .advertise(names): 3 * names.count + 1
        default: 0
        }
    }

    /// The busiest instant's commands at `commandSeconds` each.
    public var seconds: Double { Double(commands) * Self.commandSeconds }

    /// Whether the plan expects to keep to the capture's clock: no instant's commands longer
    /// than the time to the next (else it runs long, each instant later than the one before).
    public var keepsUp: Bool { crowded == 0 }

    /// The pace of `scenario`'s first round (a replay's scenario: paced waits between instants
    /// of stops and advertises); nil for one that changes nothing.
    public init?(of scenario: Scenario) {
        var steps = scenario.steps
        if let round = steps.lazy.compactMap({ step -> [Scenario.Step]? in
            if case let .repeatSteps(_, inner) = step.action { inner } else { nil }
        }).first {
            steps = round
        }
        var instants: [(at: Double, changes: Int, commands: Int)] = []
        var now = 0.0
        var open = false
        for step in steps {
            switch step.action {
            case let .wait(seconds, _):
                now += seconds
                open = false
            case let .stop(names?), let .advertise(names):
                if !open { instants.append((now, 0, 0)) }
                open = true
                instants[instants.count - 1].changes += names.count
                instants[instants.count - 1].commands += Self.commands(step.action)
            default:
                continue
            }
        }
        guard let busiest = instants.indices.max(by: { instants[$0].commands < instants[$1].commands }) else { return nil }
        at = instants[busiest].at
        changes = instants[busiest].changes
        commands = instants[busiest].commands
        room = busiest + 1 < instants.count ? instants[busiest + 1].at - at : nil
        crowded = zip(instants, instants.dropFirst()).filter { Double($0.0.commands) * Self.commandSeconds > $0.1.at - $0.0.at }.count
    }

    /// The `pace` JSON line, or the text line.
    public func line(json: Bool) -> String {
        let seconds = (self.seconds * 1000).rounded() / 1000
        guard json else {
            return "busiest: \(changes) advertiser\(changes == 1 ? "" : "s") change at " + String(format: "%.1f s", at)
                + ", up to \(commands) HCI commands (" + String(format: "%.2f s", seconds) + " at "
                + "\(Int(Self.commandSeconds * 1000)) ms a command)"
        }
        var object = JSONObject()
        object.add("event", literal: "pace")
        object.add("at", number: "\((at * 1000).rounded() / 1000)")
        object.add("changes", changes)
        object.add("commands", commands)
        object.add("seconds", number: "\(seconds)")
        object.add("crowded", crowded)
        object.add("keepsUp", keepsUp)
        return object.line
    }

    /// The warning for a plan that does not expect to keep up; nil where it does.
    public var warning: String? {
        guard !keepsUp else { return nil }
        return "the replay cannot keep to the capture's clock: at \(crowded) instant\(crowded == 1 ? "" : "s") its changes "
            + "take the controller longer than the time to the next (at \(Int(Self.commandSeconds * 1000)) ms a command; "
            + "fewer at once with --sets, longer --turn, or a lower --speed spread them)"
    }
}
