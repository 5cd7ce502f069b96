// SPDX-License-Identifier: GPL-2.0-or-later

@testable import BeaconEmitter
import BeaconRig
import Foundation
import Testing

/// Every command's help ends with examples (`HelpExamples`), and each example runs: those that
/// name no adapter here as they are, the others on the virtual radio.
@Suite struct HelpExamplesTests {
    static let commands = BeaconEmit.configuration.subcommands.map { $0.configuration.commandName ?? $0._commandName }

    static let offline = HelpExamples.byCommand.values.joined().filter { !$0.contains("hci0") && !$0.contains("hci1") }
        .filter { !$0.contains(" control ") && !$0.hasPrefix("beacon-emit stop") }

    @Test func everyCommandsHelpEndsWithItsExamples() throws {
        let (helpCommand, _) = try Readme.run("beacon-emit help encode")
        #expect(helpCommand.hasSuffix(HelpExamples.block("encode") + "\n"), "help NAME ends the same way: \(helpCommand)")
        for command in Self.commands {
            let examples = HelpExamples.byCommand[command] ?? []
            #expect(examples.count >= 2, "\(command): two or three examples")
            let (help, status) = try Readme.run("beacon-emit \(command) --help")
            #expect(status == 0)
            let tail = help.components(separatedBy: "EXAMPLES:\n").dropFirst().last ?? ""
            #expect(tail.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == examples,
                    "\(command)'s help ends with its examples, one per line: \(tail)")
            #expect(examples.allSatisfy { $0.count <= 78 }, "an example fits a terminal's line: \(examples)")
        }
    }

    /// `advertise --help` names every key a beacon may carry of its own (`--beacon` and
    /// `--config` entries), as BeaconDescription reads them: a new one reaches the help.
    @Test func advertiseHelpNamesEveryOwnSetting() throws {
        let (help, status) = try Readme.run("beacon-emit advertise --help")
        #expect(status == 0)
        // The sentence that lists them: "... may carry its own interval, tx-power, ...".
        let start = try #require(help.range(of: "carry its own"))
        let sentence = help[start.upperBound...].prefix { $0 != "." }
        let words = Set(sentence.split(whereSeparator: { !$0.isLetter && $0 != "-" }).map { $0.lowercased().replacingOccurrences(of: "-", with: "") })
        for key in BeaconDescription.parameterKeys.sorted() {
            #expect(words.contains(key), "advertise --help names '\(key)'")
        }
    }

    /// Those that need no controller, as a user types them (doctor on a machine without
    /// Bluetooth finds a check failing: 1; info --all finds no adapter there: 69, and lists
    /// them in the VM check `info-all`).
    @Test(arguments: offline)
    func anExampleRuns(_ example: String) throws {
        let workspace = try Readme.workspace()
        defer { try? FileManager.default.removeItem(at: workspace) }
        let (output, status) = try Readme.run(example, in: workspace)
        let allowed: Set<Int32> = example.hasPrefix("beacon-emit doctor") ? [0, 1]
            : example == "beacon-emit info --all" && !DoctorCommandTests.kernelHasBluetooth ? [69] : [0]
        #expect(allowed.contains(status), "\(example): exit \(status)\n\(output)")
    }
}

extension Rig {
/// The examples that name adapters, on the virtual radio: hci0 and hci1 its two devices; a
/// command that runs until stopped is interrupted (SIGINT) after a few seconds.
@Suite struct HelpExamplesRigTests {
    static let examples = HelpExamples.byCommand.values.joined().filter {
        $0.contains("hci0") || $0.contains("hci1") || $0.hasPrefix("beacon-emit stop")
    }

    @Test(.notUnderEmulation("several runs of several seconds"), arguments: examples)
    func anExampleRunsOnTheVirtualRadio(_ example: String) throws {
        // doctor and stop look at kernel adapters only: one that is not there (what they say of
        // it is theirs to say; a usage error would be the example's).
        let kernelOnly = example.hasPrefix("beacon-emit doctor") || example.hasPrefix("beacon-emit stop")
        let device = kernelOnly ? "hci9" : "tcp:127.0.0.1:\(rigPort ?? 0)"
        let command = example.replacingOccurrences(of: "hci0", with: device).replacingOccurrences(of: "hci1", with: device)
        let workspace = try Readme.workspace()
        defer { try? FileManager.default.removeItem(at: workspace) }
        let (output, status) = try Readme.run("timeout --preserve-status -s INT 4 " + command, in: workspace)
        // What the radio holds decides 0 or 1 (an audit of nothing, a beacon not heard); a
        // usage error, input refused, or a crash would be the example's fault.
        #expect(![64, 65].contains(status) && status < 124, "\(command): exit \(status)\n\(output)")
        #expect(!output.contains("Fatal error") && !output.contains("Usage:"), "\(command)\n\(output)")
    }

    /// The control examples, against an emitter started with that socket.
    @Test func theControlExamplesRun() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("help-\(UUID().uuidString).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--duration", "6",
                                                        "--control", socket, "--uuid", "random", "--major", "1", "--minor", "1"])
        defer { _ = emitter.wait() }
        Thread.sleep(forTimeInterval: 1)
        for example in HelpExamples.byCommand["control"] ?? [] {
            let (output, status) = try Readme.run(example.replacingOccurrences(of: "/tmp/beacons.sock", with: socket))
            #expect(status == 0, "\(example): exit \(status)\n\(output)")
        }
    }
}
}

extension Rig {
/// docs/test-rigs.md's Python harness, run as the page shows it against an emitter started as
/// it says (on the virtual radio), printing what the page says it prints.
@Suite struct PythonControlExampleTests {
    @Test func thePythonExampleDrivesTheEmitter() throws {
        let page = try String(contentsOf: Readme.root.appendingPathComponent("docs/test-rigs.md"), encoding: .utf8)
        let program = try #require(page.components(separatedBy: "```python\n").dropFirst().first?
            .components(separatedBy: "```").first, "the page's Python example")
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("python-\(UUID().uuidString).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--duration", "6", "--control",
                                                        socket, "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2",
                                                        "--major", "1", "--minor", "1"])
        defer { _ = emitter.wait() }
        Thread.sleep(forTimeInterval: 1)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(UUID().uuidString).py").path
        try program.replacingOccurrences(of: "/tmp/beacons.sock", with: socket).write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (output, status) = try Readme.run("python3 \(file)")
        #expect(status == 0, "\(output)")
        #expect(output == "[1, 8]\n", "the page says it prints [1, 8]: \(output)")
        #expect(page.contains("It prints `[1, 8]`"))
    }
}
}

/// The argument parser's own options (what packaging runs for completions and the manual) are
/// no unknown options.
@Suite struct BuiltInOptionTests {
    @Test(arguments: ["--generate-completion-script bash", "--generate-completion-script=zsh", "--experimental-dump-help"])
    func theParsersOwnOptionsRun(arguments: String) throws {
        let result = try runBeaconEmit(arguments.split(separator: " ").map(String.init))
        #expect(result.status == 0 && !result.stdout.isEmpty, "\(arguments): \(result.stderr)")
    }
}
