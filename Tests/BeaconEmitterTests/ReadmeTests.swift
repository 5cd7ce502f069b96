// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// The README's examples, run as it shows them: each `$ COMMAND` line in a code block, with the
/// output printed below it (standard output and error together), and each scenario block run
/// on the private virtual radio. The README cannot drift from the program.
enum Readme {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../README.md").standardized.path

    struct Block {
        var language: String
        var line: Int
        var lines: [String]
    }

    /// The fenced code blocks, with their language and first line.
    static func blocks() throws -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for (number, line) in try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n").enumerated() {
            if line.hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    open = Block(language: String(line.dropFirst(3)), line: number + 1, lines: [])
                }
            } else {
                open?.lines.append(line)
            }
        }
        return blocks
    }

    struct Example: CustomStringConvertible {
        var line: Int
        var command: String
        var output: [String]
        var description: String { "README.md:\(line): \(command)" }
    }

    /// Every `$ COMMAND` line and the output the README shows after it.
    static func examples() throws -> [Example] {
        var examples: [Example] = []
        for block in try blocks() {
            for (offset, line) in block.lines.enumerated() {
                if line.hasPrefix("$ ") {
                    examples.append(Example(line: block.line + offset + 1, command: String(line.dropFirst(2)), output: []))
                } else if !examples.isEmpty, examples[examples.count - 1].line > block.line {
                    examples[examples.count - 1].output.append(line)
                }
            }
        }
        return examples
    }

    /// Runs `command` with `sh`, this build's beacon-emit first on the PATH; the output (both
    /// streams, in order) and the exit status.
    static func run(_ command: String) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "{ " + command + "\n} 2>&1"]
        var environment = ProcessInfo.processInfo.environment
        let directory = URL(fileURLWithPath: try beaconEmitPath()).deletingLastPathComponent().path
        environment["PATH"] = directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }
}

@Suite struct ReadmeExampleTests {
    @Test func thereAreExamplesToRun() throws {
        #expect(try Readme.examples().count >= 2)
        #expect(try Readme.blocks().contains { $0.language == "yaml" && $0.lines.contains("steps:") })
    }

    /// Each `$` line prints what the README shows.
    @Test(arguments: try Readme.examples())
    func anExamplePrintsWhatTheReadmeShows(example: Readme.Example) throws {
        let (output, _) = try Readme.run(example.command)
        let expected = example.output.joined(separator: "\n")
        #expect(output.trimmingCharacters(in: .newlines) == expected.trimmingCharacters(in: .newlines),
                "\(example)\n--- the README shows:\n\(expected)\n--- the program printed:\n\(output)")
    }
}

extension Rig {
/// The README's scenarios, run as written on the private virtual radio: they pass (one across
/// boxes is checked here and run in scripts/multibox-test's lab).
@Suite struct ReadmeScenarioTests {
    @Test func theReadmesScenarioPasses() throws {
        for block in try Readme.blocks() where block.language == "yaml" && block.lines.contains("steps:") {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(getpid())-\(block.line).yaml")
            try block.lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            // A scenario across boxes runs in scripts/multibox-test's lab; here it is checked.
            let acrossBoxes = block.lines.contains { $0.hasPrefix("hosts:") }
            let (output, status) = try Readme.run("beacon-emit run '\(file.path)'" + (acrossBoxes ? " --check" : ""))
            #expect(status == 0, "README.md:\(block.line): the scenario fails as written:\n\(output)")
            if acrossBoxes { #expect(output.hasSuffix("2 beacons, 7 steps, 2 hosts: valid\n"), "\(output)") }
        }
    }
}
}
