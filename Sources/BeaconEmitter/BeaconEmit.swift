// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost
import BeaconReports
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `beacon-emit`: BLE beacons from Linux.
@main
struct BeaconEmit: ParsableCommand {
    /// The root's help: the exit statuses are in its discussion for the manual page (what
    /// `--experimental-dump-help` gives `generate-manual`); `--help` prints them itself, as an
    /// aligned table after the subcommands (`main`).
    static var configuration: CommandConfiguration { CommandConfiguration(
        commandName: "beacon-emit",
        abstract: "Emit, encode and decode BLE beacons (iBeacon, AltBeacon, Eddystone).",
        discussion: """
            Without a subcommand, advertises: beacon-emit --uuid UUID --major 101 --minor 2. \
            Start with beacon-emit doctor on a new box.
            """ + (CommandLine.arguments.contains("--experimental-dump-help") ? "\n\n" + ExitStatus.help : ""),
        version: BuildVersion.text,
        subcommands: [Advertise.self, Scan.self, Audit.self, Verify.self, Calibrate.self, Monitor.self, Run.self, Replay.self, Control.self, Stop.self, Info.self,
                      Doctor.self,
                      Decode.self, Encode.self],
        defaultSubcommand: Advertise.self
    ) }

    /// A first word that is no command is named as one (`beacon-emit sacn` went to advertise,
    /// which asked for a beacon), and `help` of no command is an error (it printed the root
    /// help, exit 0); then the argument parser takes over.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = configuration.subcommands.compactMap { $0.configuration.commandName ?? $0._commandName }
        var word: String?
        if let first = arguments.first, !first.hasPrefix("-"), first != "help", !names.contains(first) { word = first }
        if arguments.first == "help", arguments.count > 1, !arguments[1].hasPrefix("-"), !names.contains(arguments[1]) {
            word = arguments[1]
        }
        if let word {
            Console.error("unknown command '\(word)'"
                          + (NearestWord.nearest(to: word, in: names).map { " (did you mean '\($0)'?)" } ?? "")
                          + ": the commands are " + names.joined(separator: ", ")
                          + "; without one, beacon-emit advertises (beacon-emit --help)")
            Self.exit(withError: ExitStatus.usage)
        }
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            print(helpMessage(columns: 80).trimmingCharacters(in: .newlines) + "\n\n" + ExitStatus.table(width: 80))
            Self.exit()
        }
        // A command's help ends with its examples.
        if let command = helpAsked(in: arguments, names: names) {
            let name = command.configuration.commandName ?? command._commandName
            print(helpMessage(for: command, columns: 80).trimmingCharacters(in: .newlines) + "\n\n"
                  + HelpExamples.block(name))
            Self.exit()
        }
        // The argument parser checks a command's values before it looks for options it does not
        // know: a parse that fails names an unknown option first, with the nearest one (the
        // command's help is rendered to learn its options then, never on a run's way in).
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            if let unknown = unknownOption(in: arguments, names: names) {
                Console.error(unknown)
                Self.exit(withError: ExitStatus.usage)
            }
            Self.exit(withError: error)
        }
        do {
            try command.run()
        } catch {
            Self.exit(withError: error)
        }
        Self.exit()
    }

    /// The command whose help is asked for: `help NAME`, or `NAME ... --help` (`-h`); nil
    /// for anything else.
    static func helpAsked(in arguments: [String], names: [String]) -> (any ParsableCommand.Type)? {
        func command(_ name: String) -> (any ParsableCommand.Type)? {
            configuration.subcommands.first { ($0.configuration.commandName ?? $0._commandName) == name }
        }
        if arguments.count == 2, arguments[0] == "help" { return command(arguments[1]) }
        let options = arguments.prefix { $0 != "--" }
        guard let first = arguments.first, options.contains("--help") || options.contains("-h") else { return nil }
        return command(first) ?? (first.hasPrefix("-") ? Advertise.self : nil)
    }

    /// An option its command does not take, named with the nearest it does (the argument
    /// parser checks the beacon first, and `--majr 1` said "missing --major"); nil when every
    /// `--option` before a lone `--` is one the command's help lists. Asked only once a parse
    /// has failed.
    static func unknownOption(in arguments: [String], names: [String]) -> String? {
        guard arguments.first != "help", !arguments.contains(where: { $0.hasPrefix("--experimental-") }) else { return nil }
        let command = arguments.first.flatMap { first in configuration.subcommands.first {
            ($0.configuration.commandName ?? $0._commandName) == first
        } } ?? Advertise.self
        let help = helpMessage(for: command, columns: 10_000)
        // The argument parser's own options, which no help lists.
        var known: Set<String> = ["--help", "--version", "--experimental-dump-help", "--generate-completion-script"]
        for match in help.matches(of: /--(\[no-\])?([a-z0-9][a-z0-9-]*)/) {
            known.insert("--" + match.output.2)
            if match.output.1 != nil { known.insert("--no-" + match.output.2) }
        }
        for argument in arguments.prefix(while: { $0 != "--" }) where argument.hasPrefix("--") && argument.count > 2 {
            let option = String(argument.prefix { $0 != "=" })
            guard !known.contains(option) else { continue }
            let name = command.configuration.commandName ?? command._commandName
            return "unknown option '\(option)'" + (NearestWord.nearest(to: option, in: known.sorted()).map { " (did you mean '\($0)'?)" } ?? "")
                + " for \(name == "advertise" ? "advertising" : name): beacon-emit \(name) --help lists them"
        }
        return nil
    }
}

/// The exit statuses: `--help`, the man page and docs/troubleshooting.md give this table.
enum ExitStatus {
    /// Every status beacon-emit exits with, and what it means.
    static let meanings: [(status: Int32, meaning: String)] = [
        (0, "success (also after SIGINT/SIGTERM or --duration, once advertising is off)"),
        (1, "a check failed: audit (a rule failed, or the advertiser was not heard), verify (not heard, or a stated "
            + "field differs), calibrate (too few samples, or --write of samples that spread too much), decode --expect, run (an expectation failed, or a signal "
            + "ended it), control (the reply says ok: false), doctor (a check failed)"),
        (3, "audit: no rule failed, but one could not be judged (--allow-inconclusive makes it 0)"),
        (64, "usage error: an unknown option, a missing or out-of-range value, a combination refused before "
             + "anything is sent"),
        (65, "input that does not decode: hex, a capture (--replay), a scenario or configuration file"),
        (69, "no usable controller: no Bluetooth in the kernel, no such adapter, adapter down or powered off, a "
             + "feature the controller lacks, all advertising instances taken; run: a box cannot be reached; "
             + "control: no emitter answers"),
        (74, "the controller link failed or closed; a file could not be read or written (standard input, "
             + "a --config, scenario or capture file that does not open or is no regular file (a device, a directory; "
             + "a FIFO where a stream is not taken), --junit, calibrate --write)"),
        (75, "a command went unanswered within 2 s"),
        (76, "the controller or the kernel refused a command (the message names it, the status and the likely cause)"),
        (77, "missing permission (CAP_NET_RAW, CAP_NET_ADMIN: the message gives the setcap line); control --session: "
             + "a forced-command key asked for another command; stop --recorded: a record directory others could have "
             + "written (nothing removed)"),
    ]

    /// The table as `--help` shows it.
    static var help: String {
        "Exit status:\n" + meanings.map { "  \($0.status)".padding(toLength: 6, withPad: " ", startingAt: 0) + $0.meaning }
            .joined(separator: "\n")
    }

    /// The table as the root `--help` prints it: each status, its meaning wrapped to `width`
    /// columns under its own column.
    static func table(width: Int) -> String {
        let indent = 6
        var lines = ["EXIT STATUS:"]
        for (status, meaning) in meanings {
            var line = "  \(status)".padding(toLength: indent, withPad: " ", startingAt: 0)
            var first = true
            for word in meaning.split(separator: " ") {
                if !first && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = String(repeating: " ", count: indent)
                    first = true
                }
                line += (first ? "" : " ") + word
                first = false
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// EX_USAGE: bad arguments (ArgumentParser's validation errors use it too).
    static let usage = ExitCode(64)
    /// EX_DATAERR: input that does not decode, or holds no beacon.
    static let dataError = ExitCode(65)
    /// EX_UNAVAILABLE: no usable controller (no Bluetooth, no adapter, none up).
    static let unavailable = ExitCode(69)
    /// EX_IOERR: standard input could not be read.
    static let ioError = ExitCode(74)
    /// A gate that could not judge (`audit`: a rule inconclusive, `--allow-inconclusive` not given).
    static let inconclusive = ExitCode(3)
    /// EX_NOPERM: a permission missing, or a directory that cannot be trusted.
    static let permission = ExitCode(77)
}

extension HostError {
    /// The sysexits-style status `beacon-emit` exits with (the README's table).
    var exitStatus: Int32 {
        switch self {
        case .invalidDevice:
            return 64
        case let .kernel(_, code, _, _):
            return isPermission(code) ? 77 : 69
        case let .transport(error, _):
            if case let .system(_, code) = error {
                if isPermission(code) { return 77 }
                if code == ENETDOWN || code == ECONNREFUSED || code == ENOENT || code == ENODEV { return 69 }
            }
            return 74
        case .controllerRefused, .hardwareError, .malformedEvent:
            return 76
        case .commandTimeout, .managementTimeout:
            return 75
        case let .managementRefused(_, status, _, _):
            switch status {
            case .permissionDenied: return 77
            case .notPowered, .invalidIndex, .notSupported, .unknownCommand, .rfKilled: return 69
            default: return 76
            }
        case .unsupported, .refused, .unencodable, .virtualController, .userChannel:
            return 69
        case let .interrupted(_, error):
            return error.exitStatus
        }
    }

}

/// A missing capability or file permission.
private func isPermission(_ code: Int32) -> Bool { code == EPERM || code == EACCES }
