// SPDX-License-Identifier: GPL-2.0-or-later

import Testing

/// The script a fake plays, written once for the fake controller (`ScriptedTransport`, HCI
/// bytes) and the fake kernel (`ScriptedKernel`, management packets): each step names the
/// command the host must send next and what answers it; a step without a command is what
/// arrives on its own. Anything else fails the test.
struct Script<Command: Equatable, Answer> {
    struct Step {
        /// The command expected, or nil for "no command, just these answers".
        var command: Command?
        var answers: [Answer]
    }

    private(set) var steps: [Step]
    private(set) var sent: [Command] = []
    /// What arrives next, oldest first.
    var queued: [Answer] = []

    init(_ steps: [Step]) {
        self.steps = steps
        deliverUnsolicited()
    }

    /// The host sent `command`: it must be the next step's; that step's answers are queued.
    /// - Parameter describe: a command as the failure message shows it.
    mutating func received(_ command: Command, describe: (Command?) -> String) {
        sent.append(command)
        guard let step = steps.first else {
            Issue.record("unexpected command after the script ended: \(describe(command))")
            return
        }
        #expect(describe(command) == describe(step.command), "command \(sent.count)")
        steps.removeFirst()
        queued += step.answers
        deliverUnsolicited()
    }

    /// The host sent `command`, answered with `answer` outside the script (a fake that answers
    /// everything).
    mutating func received(_ command: Command, answeredWith answer: Answer) {
        sent.append(command)
        queued.append(answer)
    }

    /// The oldest answer queued, if any.
    mutating func next() -> Answer? {
        queued.isEmpty ? nil : queued.removeFirst()
    }

    private mutating func deliverUnsolicited() {
        while let step = steps.first, step.command == nil {
            queued += step.answers
            steps.removeFirst()
        }
    }
}

extension Script.Step: Sendable where Command: Sendable, Answer: Sendable {}
