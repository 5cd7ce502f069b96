// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconReports
import BeaconRig
import LinuxSystem
import Foundation

/// `beacon-emit control PATH COMMAND`: the client of `advertise --control PATH`.
struct Control: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the beacons of a running `advertise --control PATH`: add, remove, update, list, status.",
        discussion: """
            Commands: list; status; add KEY=VALUE,... (the --beacon keys); remove ID; update ID \
            KEY=VALUE,... (only the fields given change, in place on the air); send JSON (a request \
            as the socket takes it, one object). Prints the reply, one JSON object; exits 1 when it \
            says ok: false (the error also on standard error), 69 when the socket does not answer. \
            A reply that says retry (the beacons were off the air; nothing changed) is retried \
            for up to --retry-for seconds. With --session instead of a command: one connection \
            kept open, requests read as JSON lines from standard input and each reply written as a \
            line to standard output, until standard input ends (what an SSH forced-command key \
            runs on a beacon box for `run` elsewhere; under such a key, any other command the \
            client asks for is refused, exit 77).
            """ + guide("test-rigs.md#live-control-of-a-running-emitter") + HelpExamples.text("control")
    )

    @Argument(help: "The socket given to --control.")
    var path: String

    @Argument(help: "list, status, add, remove, update or send (none with --session).")
    var command: String?

    @Argument(help: "What the command takes: KEY=VALUE,...; an ID; an ID and KEY=VALUE,...; a JSON object.")
    var values: [String] = []

    @Option(name: .customLong("retry-for"), help: "Seconds to keep sending a request answered retry (0: never).")
    var retryFor: Double = 30

    @Flag(help: "Relay JSON lines: requests from standard input, replies to standard output, one connection.")
    var session = false

    func validate() throws {
        let counts = ["list": 0, "status": 0, "add": 1, "remove": 1, "update": 2, "send": 1]
        guard retryFor >= 0, retryFor <= 3600 else {
            throw ValidationError("--retry-for \(retryFor): expected 0 to 3600 seconds")
        }
        if session {
            guard command == nil else { throw ValidationError("--session takes no command: requests come on standard input") }
            return
        }
        guard let command else { throw ValidationError("give a command: list, status, add, remove, update or send") }
        guard let count = counts[command] else {
            throw ValidationError("unknown command '\(command)': expected list, status, add, remove, update or send")
        }
        guard values.count == count else {
            throw ValidationError("\(command) takes \(count == 0 ? "nothing" : count == 1 ? "one value" : "two values")"
                                  + (command == "update" ? ": an ID and KEY=VALUE,..." : ""))
        }
        if command == "remove" || command == "update", Int(values[0]) == nil {
            throw ValidationError("\(command): '\(values[0])' is not a beacon ID (a number; see list)")
        }
    }

    func run() throws {
        if session { return try relay() }
        let request: String
        switch command ?? "" {
        case "send": request = values[0]
        case "add": request = ControlRequest.add(beacon: .string(values[0])).line
        case "remove": request = ControlRequest.remove(id: Int(values[0]) ?? 0).line
        case "update": request = ControlRequest.update(id: Int(values[0]) ?? 0, fields: .string(values[1])).line
        case "status": request = ControlRequest.status.line
        default: request = ControlRequest.list.line
        }
        let reply: String
        do {
            reply = try ControlClient.request(request, to: path, retryingFor: .milliseconds(Int64(retryFor * 1000))) {
                Console.error("retrying: \(Self.error(in: $0) ?? $0)")
            }
        } catch {
            Console.error("\(error)")
            throw ExitCode(69)
        }
        print(reply)
        if ControlReply(line: reply)?.ok != true {
            Console.error(Self.error(in: reply) ?? "the request failed")
            throw ExitCode.failure
        }
    }

    /// `--session`: standard input to the socket, replies to standard output.
    private func relay() throws {
        if let refusal = ControlSession.refusal(originalCommand: ProcessInfo.processInfo.environment["SSH_ORIGINAL_COMMAND"]) {
            Console.error(refusal)
            throw ExitCode(77)
        }
        do {
            _ = try ControlSession.relay(path: path, input: Descriptor(0), output: Descriptor(1))
        } catch {
            Console.error("\(error)")
            throw ExitCode(69)
        }
    }

    private static func error(in reply: String) -> String? {
        ControlReply(line: reply)?.error
    }
}
