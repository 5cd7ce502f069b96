// SPDX-License-Identifier: GPL-2.0-or-later

/// How early a paced timeline starts the changes due at an instant, so that they are made
/// around their deadline rather than after it: the goings (one disable) are made at once, the
/// comings only when their sets are readied and enabled, so an instant starts half its
/// commands' time early. The time a command takes is learned from the changes made so far
/// (it starts at `ReplayPace.commandSeconds`).
struct ChangeLead {
    /// The time a command has taken, on average, lately.
    private(set) var secondsPerCommand = ReplayPace.commandSeconds
    /// How much one change's measure moves the average.
    private static let weight = 0.3
    /// Never more than this early, however slow the controller has been.
    static let largest = 0.25

    /// How much earlier than their deadline to start `steps`: those up to the next wait.
    func lead<S: Sequence>(before steps: S) -> Double where S.Element == Scenario.Step {
        var commands = 0
        for step in steps {
            if case .wait = step.action { break }
            commands += ReplayPace.commands(step.action)
        }
        return min(Self.largest, secondsPerCommand * Double(commands) / 2)
    }

    /// Learns from a change of `action` made `seconds` after its step started.
    mutating func note(_ action: Scenario.Action, took seconds: Double) {
        let commands = ReplayPace.commands(action)
        guard commands > 0, seconds >= 0 else { return }
        let measured = min(seconds / Double(commands), 0.1)
        secondsPerCommand += Self.weight * (measured - secondsPerCommand)
    }
}
