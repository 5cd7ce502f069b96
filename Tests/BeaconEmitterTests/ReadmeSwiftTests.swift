// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
import Testing

/// The README's Swift examples are programs of the package (`Examples/`), compiled by every
/// build: each block must be one of them line for line, and they run.
enum SwiftExamples {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Examples").standardized.path

    /// Each example's lines after its header comment (and the blank line after it).
    static func programs() throws -> [String: [String]] {
        var programs: [String: [String]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let text = try String(contentsOfFile: "\(directory)/\(name)/main.swift", encoding: .utf8)
            var lines = text.components(separatedBy: "\n")
            while let first = lines.first, first.hasPrefix("//") { lines.removeFirst() }
            programs[name] = trimmed(lines)
        }
        return programs
    }

    static func trimmed(_ lines: [String]) -> [String] {
        Array(lines.drop { $0.isEmpty }.reversed().drop { $0.isEmpty }.reversed())
    }

    /// The built example `name` (beside this build's beacon-emit).
    static func path(_ name: String) throws -> String {
        URL(fileURLWithPath: try beaconEmitPath()).deletingLastPathComponent().appendingPathComponent("Example\(name)").path
    }

    static func run(_ name: String, _ arguments: [String]) throws -> (output: String, status: Int32) {
        let background = try BackgroundProcess(try path(name), arguments)
        let status = background.wait(timeout: .seconds(20))
        return (background.stdout + background.stderr, status)
    }
}

@Suite struct ReadmeSwiftExampleTests {
    /// Every Swift block of the README and docs/ but the dependency line is an example program as written.
    @Test func everySwiftBlockIsACompiledExample() throws {
        let programs = try SwiftExamples.programs()
        var count = 0
        for document in Readme.documents {
            let blocks = try Readme.blocks(of: document)
                .filter { $0.language == "swift" && !($0.lines.first ?? "").hasPrefix(".package(") }
            for block in blocks {
                let lines = SwiftExamples.trimmed(block.lines)
                #expect(programs.values.contains(lines),
                        "\(document):\(block.line): this Swift block is not one of Examples/*/main.swift as written")
            }
            count += blocks.count
        }
        #expect(count >= 5)
    }

    @Test func theCodecExamplePrintsTheReferenceCommand() throws {
        let (output, status) = try SwiftExamples.run("Codec", [])
        #expect(status == 0, "\(output)")
        // HCI LE Set Advertising Data (0x2008) with the reference beacon's 30 bytes, padded to 31.
        #expect(output.hasPrefix("010820201E0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C500 "), "\(output)")
    }

    @Test func theReplayExampleReadsACapture() throws {
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/rootcanal-scan.btsnoop").path
        let (output, status) = try SwiftExamples.run("Replay", [capture])
        #expect(status == 0, "\(output)")
        #expect(output.contains("iBeacon"), "\(output)")
        #expect(output.contains(#""uuid":"#), "no JSON line: \(output)")
    }
}

extension Rig {
/// The README's host examples on the rootcanal radio, judged by an independent scanner.
@Suite struct ReadmeHostExampleTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }

    /// The blocking example and the async one: the same beacons, heard the same.
    @Test(arguments: ["Advertise", "Broadcast"])
    func theAdvertisingExampleIsHeardChangedThenGone(example name: String) throws {
        let scanner = try TestScanner(port: port)
        let example = try BackgroundProcess(try SwiftExamples.path(name), [device])
        let wanted = [threeBeaconData[0], threeBeaconData[2]]
        var reports = try scanner.collect(timeout: .seconds(4)) { reports in
            wanted.allSatisfy { data in reports.contains { Array($0.data) == data } }
        }
        for data in wanted { #expect(reports.contains { Array($0.data) == data }, "\(HexText.format(data)) not heard") }
        // Minor 2 is on the air for the moment between the start and the update; then never again.
        reports = try scanner.collect(timeout: .seconds(1)) { _ in false }
        #expect(!reports.isEmpty)
        #expect(!reports.contains { Array($0.data) == threeBeaconData[1] }, "minor 2 heard after it was changed to 3")
        #expect(example.wait(timeout: .seconds(10)) == 0, "\(example.stderr)")
        #expect(example.stdout == "advertising 2 beacons on \(device)\n")
        // What was heard before the end and is still queued goes first.
        _ = try scanner.collect(timeout: .milliseconds(500)) { _ in false }
        let after = try scanner.collect(timeout: .seconds(1)) { _ in false }
        #expect(!after.contains { wanted.contains(Array($0.data)) }, "still on the air after the example ended")
    }

    @Test func theScanExampleHearsABeacon() throws {
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "8"] + referenceArguments)
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let (output, status) = try SwiftExamples.run("Scan", [device])
        #expect(status == 0, "\(output)")
        #expect(output.contains("39ED98FF-2900-441A-802F-9C398FC199D2"), "\(output)")
        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0)
    }
}
}
