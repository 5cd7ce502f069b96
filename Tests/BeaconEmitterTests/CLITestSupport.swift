// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
import Testing

/// The result of running the built `beacon-emit`.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// The `beacon-emit` binary built beside this test bundle.
func beaconEmitPath() throws -> String {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    // The test binary may sit inside a bundle directory (NAME.xctest/...); walk up to the build folder.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("beacon-emit").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw CLITestError.binaryNotFound(testBinary.path)
}

enum CLITestError: Error {
    case binaryNotFound(String)
}

/// Runs `beacon-emit` with `arguments`, feeding `input` on standard input: through a pipe, or
/// with `fromFile` from a file (so reads return large chunks, as with `< capture.txt`).
func runBeaconEmit(_ arguments: [String], input: String = "", fromFile: Bool = false,
                   environment extra: [String: String] = [:], executable: String? = nil) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try executable ?? beaconEmitPath())
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    var inputFile: URL? = nil
    if fromFile {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-emit-input-\(UUID().uuidString)")
        try Data(input.utf8).write(to: url)
        inputFile = url
        process.standardInput = try FileHandle(forReadingFrom: url)
    } else {
        process.standardInput = stdin
    }
    defer { if let inputFile { try? FileManager.default.removeItem(at: inputFile) } }
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // Input is written and standard error read on threads of their own, so that a large input
    // or a lot of output cannot fill a pipe while this thread waits on another.
    let done = DispatchGroup()
    if !fromFile {
        let writer = stdin.fileHandleForWriting
        let bytes = Data(input.utf8)
        DispatchQueue.global().async(group: done) {
            writer.write(bytes)
            try? writer.close()
        }
    }
    nonisolated(unsafe) var err = Data()
    let errorReader = stderr.fileHandleForReading
    DispatchQueue.global().async(group: done) { err = errorReader.readDataToEndOfFile() }
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    done.wait()
    process.waitUntilExit()
    return RunResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                     stderr: String(decoding: err, as: UTF8.self))
}

/// A btsnoop file (H4, datalink 1002) of the given events (hex, without the H4 type byte),
/// each at `timestamp`, written to a temporary file; its path.
func writeBtsnoop(_ events: [String], timestamp: Int64 = 0x00E0_3AB4_4A67_6000, spacing: Int64 = 0) throws -> String {
    var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    for (index, event) in events.enumerated() {
        let body = try HexText.parse(event)
        let length = UInt32(body.count)
        for field in [length, length, 3, 0] { bytes += withUnsafeBytes(of: field.bigEndian, Array.init) }
        bytes += withUnsafeBytes(of: (timestamp + Int64(index) * spacing).bigEndian, Array.init)
        bytes += body
    }
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID().uuidString).btsnoop")
    try Data(bytes).write(to: url)
    return url.path
}
