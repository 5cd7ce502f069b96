// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Yams
import Testing

/// The README's and docs/'s examples, run as they show them: each `$ COMMAND` line in a code
/// block, with the output printed below it (standard output and error together), and each
/// scenario block run on the private virtual radio. The documents cannot drift from the program.
struct Readme {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let path = root.appendingPathComponent("README.md").path
    /// The README and every page in docs/.
    static let documents: [String] = [path] + ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
        ?? []).filter { $0.hasSuffix(".md") }.sorted().map { root.appendingPathComponent("docs").appendingPathComponent($0).path }

    struct Block {
        var language: String
        var line: Int
        var lines: [String]
    }

    /// The fenced code blocks of a document (the README's by default), with their language and first line.
    static func blocks(of document: String = path) throws -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        // A block in a list item is indented: its fence's indentation is taken off its lines.
        var indent = 0
        for (number, line) in try String(contentsOfFile: document, encoding: .utf8).components(separatedBy: "\n").enumerated() {
            let spaces = line.prefix { $0 == " " }.count
            if line.dropFirst(spaces).hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    indent = spaces
                    open = Block(language: String(line.dropFirst(spaces + 3)), line: number + 1, lines: [])
                }
            } else {
                open?.lines.append(String(line.dropFirst(min(indent, spaces))))
            }
        }
        return blocks
    }

    struct Example: CustomStringConvertible, Sendable {
        var document: String
        var line: Int
        var command: String
        var output: [String]
        var description: String { "\(URL(fileURLWithPath: document).lastPathComponent):\(line): \(command)" }
    }

    /// Every `$ COMMAND` line and the output the documents show after it.
    static func examples() throws -> [Example] {
        try documents.flatMap { try examples(in: $0) }
    }

    static func examples(in document: String) throws -> [Example] {
        var examples: [Example] = []
        for block in try blocks(of: document) {
            for (offset, line) in block.lines.enumerated() {
                if line.hasPrefix("$ ") {
                    examples.append(Example(document: document, line: block.line + offset + 1, command: String(line.dropFirst(2)),
                                            output: []))
                } else if !examples.isEmpty, examples[examples.count - 1].line > block.line {
                    examples[examples.count - 1].output.append(line)
                }
            }
        }
        return examples
    }

    /// A directory to run examples in, laid out as a checkout for them (`Tests`, `examples`
    /// and `docs` linked to this one's), so that files they write stay out of the checkout.
    static func workspace() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["Tests", "examples", "docs"] {
            try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(name),
                                                       withDestinationURL: root.appendingPathComponent(name))
        }
        return directory
    }

    /// Runs `command` with `sh` in `directory` (the checkout by default), this build's
    /// beacon-emit first on the PATH; the output (both streams, in order) and the exit status.
    static func run(_ command: String, in directory: URL? = nil) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "{ " + command + "\n} 2>&1"]
        if let directory { process.currentDirectoryURL = directory }
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
        #expect(try Readme.examples(in: Readme.path).count >= 2)
        let rigs = try #require(Readme.documents.first { $0.hasSuffix("docs/test-rigs.md") })
        #expect(try Readme.blocks(of: rigs).contains { $0.language == "yaml" && $0.lines.contains("steps:") })
        let ci = try #require(Readme.documents.first { $0.hasSuffix("docs/ci.md") })
        #expect(try !Readme.examples(in: ci).isEmpty)
    }

    /// Each page of docs/: its `$` lines print what it shows, run in order in one directory (a
    /// line may use a file an earlier one wrote).
    @Test(arguments: Readme.documents.dropFirst())
    func theExamplesPrintWhatTheDocumentShows(document: String) throws {
        let directory = try Readme.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        for example in try Readme.examples(in: document) {
            let (output, _) = try Readme.run(example.command, in: directory)
            let expected = example.output.joined(separator: "\n")
            #expect(output.trimmingCharacters(in: .newlines) == expected.trimmingCharacters(in: .newlines),
                    "\(example)\n--- the document shows:\n\(expected)\n--- the program printed:\n\(output)")
        }
    }

    /// The commands the documents show without output that need no adapter (on the virtual
    /// one): each runs as written and exits 0. (Those that need an adapter run in the VM
    /// checks; the apt, tarball, service and container lines in scripts/release-test,
    /// container-test and package-test.)
    @Test func theVirtualDeviceCommandsRunAsShown() throws {
        var ran = 0
        for document in Readme.documents {
            for block in try Readme.blocks(of: document) where block.language == "sh" {
                for line in block.lines where line.hasPrefix("beacon-emit ")
                    && (line.contains("--device virtual") || line.contains("-i virtual")) {
                    let (output, status) = try Readme.run(line)
                    #expect(status == 0 && output.contains("advertising off"), "\(document): \(line)\n\(output)")
                    ran += 1
                }
            }
        }
        #expect(ran >= 1, "the README's first beacon on the virtual device")
    }

    /// The README's `$` lines, each alone (the README's own order does not matter).
    @Test(arguments: try Readme.examples(in: Readme.path))
    func anExamplePrintsWhatTheReadmeShows(example: Readme.Example) throws {
        let (output, _) = try Readme.run(example.command)
        let expected = example.output.joined(separator: "\n")
        #expect(output.trimmingCharacters(in: .newlines) == expected.trimmingCharacters(in: .newlines),
                "\(example)\n--- the README shows:\n\(expected)\n--- the program printed:\n\(output)")
    }
}

extension Rig {
/// The documents' scenarios, run as written on the private virtual radio: they pass (one across
/// boxes is checked here and run in scripts/multibox-test's lab).
@Suite struct ReadmeScenarioTests {
    @Test func theDocumentsScenariosPass() throws {
        var scenarios = 0
        for document in Readme.documents {
        for block in try Readme.blocks(of: document) where block.language == "yaml" && block.lines.contains(where: { $0.hasPrefix("steps:") }) {
            scenarios += 1
            // In a folder laid out as a checkout (a replay step reads examples/ from the scenario's folder).
            let workspace = try Readme.workspace()
            defer { try? FileManager.default.removeItem(at: workspace) }
            let file = workspace.appendingPathComponent("readme-\(getpid())-\(block.line).yaml")
            try block.lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            // A scenario across boxes runs in scripts/multibox-test's lab; one on a real adapter
            // with a phone (docs/app-testing.md's) needs both: here they are checked.
            let acrossBoxes = block.lines.contains { $0.hasPrefix("hosts:") }
            let onHardware = block.lines.contains { $0.hasPrefix("device: ") && $0 != "device: virtual" }
            let (output, status) = try Readme.run("beacon-emit run '\(file.path)'" + (acrossBoxes || onHardware ? " --check" : ""))
            #expect(status == 0, "\(document):\(block.line): the scenario fails as written:\n\(output)")
            if onHardware {
                // What it would start here: each phone's log command, named.
                let phones = block.lines.filter { $0.hasPrefix("    log: ") }.count
                #expect(output.components(separatedBy: ": phone '").count - 1 == phones, "\(document):\(block.line): \(output)")
            }
            if acrossBoxes {
                // The summary, then the ssh session each box's host starts here (a scenario is code).
                let lines = output.split(separator: "\n")
                #expect(lines.count == 3 && lines[0].hasSuffix("2 beacons, 7 steps, 2 hosts: valid"), "\(output)")
                #expect(lines.dropFirst().allSatisfy { $0.contains(": host '") && $0.contains(" runs ssh -T -o BatchMode=yes") }, "\(output)")
            }
        }
        }
        #expect(scenarios >= 2, "docs/test-rigs.md's scenarios")
    }
}
}

/// docs/ci.md's pipeline jobs: valid YAML, their report kept whatever the outcome, and each
/// `beacon-emit` command they run passing in a repository laid out as they expect.
@Suite struct PipelineExampleTests {
    static let page = Readme.root.appendingPathComponent("docs/ci.md").path

    /// The jobs' YAML blocks, parsed.
    func jobs() throws -> [[String: Any]] {
        try Readme.blocks(of: Self.page).filter { $0.language == "yaml" }.map {
            try #require(try Yams.load(yaml: $0.lines.joined(separator: "\n")) as? [String: Any])
        }
    }

    /// The shell lines of a job's steps (GitHub's `run`) or script (GitLab's `script`).
    func commands(_ job: [String: Any]) -> [String] {
        var lines: [String] = []
        for case let workflow as [String: Any] in (job["jobs"] as? [String: Any])?.values.map({ $0 }) ?? [] {
            for case let step as [String: Any] in workflow["steps"] as? [Any] ?? [] {
                if let run = step["run"] as? String { lines += run.split(separator: "\n").map(String.init) }
            }
        }
        for case let gitlab as [String: Any] in job.values.map({ $0 }) {
            lines += (gitlab["script"] as? [Any] ?? []).compactMap { $0 as? String }
        }
        return lines
    }

    @Test func theJobsKeepTheReportAndTheirCommandsPass() throws {
        let jobs = try jobs()
        #expect(jobs.count == 2)
        let github = try #require(jobs.first { $0["jobs"] != nil })
        let steps = ((github["jobs"] as? [String: Any])?["beacons"] as? [String: Any])?["steps"] as? [[String: Any]] ?? []
        #expect(steps.contains { ($0["if"] as? String) == "always()" && ($0["with"] as? [String: Any])?["report_paths"] != nil })
        let gitlab = try #require(jobs.first { $0["beacons"] != nil }?["beacons"] as? [String: Any])
        let artifacts = gitlab["artifacts"] as? [String: Any]
        #expect(artifacts?["when"] as? String == "always" && (artifacts?["reports"] as? [String: Any])?["junit"] != nil)

        let directory = try Readme.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let captures = directory.appendingPathComponent("captures")
        try FileManager.default.createDirectory(at: captures, withIntermediateDirectories: true)
        try "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5\n"
            .write(to: captures.appendingPathComponent("lobby.hex"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: Readme.root.appendingPathComponent("Tests/BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop"),
                                         to: captures.appendingPathComponent("lobby.btsnoop"))
        var ran = 0
        for job in jobs {
            for command in commands(job) where command.hasPrefix("beacon-emit ") {
                let (output, status) = try Readme.run(command, in: directory)
                #expect(status == 0, "docs/ci.md: \(command)\n\(output)")
                ran += 1
            }
            let report = try JUnitCheck.read(directory.appendingPathComponent("beacon-audit.xml").path)
            #expect(report.failures == 0 && report.errors == 0 && report.suites == ["beacon-emit audit url=https://www.example.com/x"])
            try FileManager.default.removeItem(at: directory.appendingPathComponent("beacon-audit.xml"))
        }
        #expect(ran == 4)
    }
}

/// The guides' prose is whole: a paragraph before a heading ends with a full stop, and the first
/// one after a heading starts as a sentence does (a piece of another section's sentence moved
/// under a heading did neither).
@Suite struct GuideProseTests {
    @Test(arguments: Readme.documents)
    func paragraphsAroundHeadingsAreWhole(document: String) throws {
        let lines = try String(contentsOfFile: document, encoding: .utf8).components(separatedBy: "\n")
        var fenced = false
        var previous: (text: String, number: Int)?
        var afterHeading = false
        var broken: [String] = []
        func isProse(_ line: String) -> Bool {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard let first = text.first, !line.hasPrefix("    ") else { return false }
            return !"-|#<*!>[".contains(first) && !first.isNumber && !text.hasPrefix("```")
        }
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("```") {
                fenced.toggle()
                previous = nil
                afterHeading = false
                continue
            }
            guard !fenced else { continue }
            if line.hasPrefix("#") {
                if let previous, isProse(previous.text),
                   ![".", ".)", "?", "!"].contains(where: previous.text.trimmingCharacters(in: .whitespaces).hasSuffix) {
                    broken.append("line \(previous.number): a paragraph ends without a full stop before a heading: \(previous.text)")
                }
                previous = nil
                afterHeading = true
                continue
            }
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            if afterHeading, isProse(line), let first = line.first, first.isLowercase {
                broken.append("line \(index + 1): the first paragraph after a heading starts mid-sentence: \(line)")
            }
            afterHeading = false
            previous = (line, index + 1)
        }
        #expect(broken.isEmpty, "\(document):\n\(broken.joined(separator: "\n"))")
    }
}
