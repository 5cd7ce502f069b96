// SPDX-License-Identifier: GPL-2.0-or-later

@testable import BeaconEmitter
import Foundation
import Testing

/// The exit statuses as documented: `beacon-emit --help` (and so the man page, generated from
/// the same text), docs/troubleshooting.md and `ExitStatus.meanings` give one table, and each
/// status in it has a case here that really exits with it.
@Suite struct ExitStatusDocumentationTests {
    static let guide = Readme.root.appendingPathComponent("docs/troubleshooting.md").path

    /// A documented status and a command that exits with it (`{device}`: a misbehaving
    /// controller's address, when `misbehaviour` is given).
    struct Case: CustomStringConvertible, Sendable {
        var status: Int32
        var command: String
        var misbehaviour: MisbehavingController.Misbehaviour? = nil
        var description: String { "\(status): \(command)" }
    }

    static let reference = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"
    static let capture = "Tests/BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop"

    static let cases: [Case] = [
        Case(status: 0, command: "beacon-emit decode \(reference)"),
        Case(status: 1, command: "beacon-emit decode --expect minor=3 \(reference)"),
        Case(status: 1, command: "beacon-emit audit --replay \(capture) --uuid 00000000-0000-0000-0000-000000000001"),
        Case(status: 3, command: "beacon-emit audit --replay Tests/BeaconEmitterTests/Fixtures/pcap/rootcanal-scan-h4.pcap"),
        Case(status: 64, command: "beacon-emit --uuid 39ED98FF-2900-441A-802F-9C398FC199D2 --major 70000 --minor 1 --check"),
        Case(status: 65, command: "beacon-emit decode zz"),
        Case(status: 69, command: "beacon-emit info --device tcp:127.0.0.1:1"),
        Case(status: 74, command: "beacon-emit audit --replay \(capture) --junit /nonexistent-directory/report.xml"),
        Case(status: 75, command: "beacon-emit info --device {device}", misbehaviour: .neverAnswers),
        Case(status: 76, command: "beacon-emit info --device {device}", misbehaviour: .commandStatusError),
        Case(status: 77, command: "SSH_ORIGINAL_COMMAND='rm -rf /' beacon-emit control /nonexistent/control --session"),
    ]

    /// The guide's table: its rows under "## Exit status".
    static func guideTable() throws -> [(status: Int32, meaning: String)] {
        let text = try String(contentsOfFile: guide, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Exit status\n").dropFirst().first)
        return section.components(separatedBy: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4, let status = Int32(cells[1]) else { return nil }
            return (status, cells[2])
        }
    }

    @Test func theHelpTheGuideAndTheCodeGiveOneTable() throws {
        let table = try Self.guideTable()
        #expect(table.map(\.status) == ExitStatus.meanings.map(\.status))
        #expect(table.map(\.meaning) == ExitStatus.meanings.map(\.meaning))
        let (help, status) = try Readme.run("beacon-emit --help")
        #expect(status == 0)
        let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for (code, meaning) in ExitStatus.meanings {
            let line = "\(code) \(meaning)".split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains(line), "--help lacks: \(line)")
        }
    }

    @Test func everyDocumentedStatusHasACase() {
        #expect(Set(Self.cases.map(\.status)) == Set(ExitStatus.meanings.map(\.status)))
    }

    @Test(arguments: cases)
    func theCaseExitsWithItsStatus(_ example: Case) throws {
        var command = example.command
        var controller: MisbehavingController? = nil
        if let misbehaviour = example.misbehaviour {
            let running = try MisbehavingController(misbehaviour)
            command = command.replacingOccurrences(of: "{device}", with: running.device)
            controller = running
        }
        defer { controller?.stop() }
        let (output, status) = try Readme.run(command)
        #expect(status == example.status, "\(command)\n\(output)")
        if example.status != 0 {
            #expect(output.hasPrefix("beacon-emit: ") || output.hasPrefix("Error: ") || output.contains("\nbeacon-emit: "),
                    "one line saying why: \(output)")
        }
    }
}
