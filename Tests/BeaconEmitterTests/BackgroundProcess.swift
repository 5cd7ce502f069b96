// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// A `beacon-emit` (or other program) running while the test does something else, its output
/// collected as it arrives.
final class BackgroundProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var stdoutText = ""
    private var stderrText = ""
    private let done = DispatchGroup()

    /// - Parameter environment: variables set for the process, beside the test's own.
    init(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        for (pipe, isOut) in [(out, true), (err, false)] {
            done.enter()
            Thread.detachNewThread { [self] in
                while true {
                    let data = pipe.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    lock.withLock {
                        if isOut { stdoutText += String(decoding: data, as: UTF8.self) }
                        else { stderrText += String(decoding: data, as: UTF8.self) }
                    }
                }
                done.leave()
            }
        }
    }

    static func beaconEmit(_ arguments: [String]) throws -> BackgroundProcess {
        try BackgroundProcess(try beaconEmitPath(), arguments)
    }

    /// The process's id (a shell that `exec`s the program keeps it).
    var pid: Int32 { process.processIdentifier }

    var stdout: String { lock.withLock { stdoutText } }
    var stderr: String { lock.withLock { stderrText } }

    /// Waits until standard output contains `text`; false on timeout or exit.
    func waitForOutput(_ text: String, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if stdout.contains(text) { return true }
            if !process.isRunning { return stdout.contains(text) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Waits until standard error holds `text` (it is read on another thread, so a line the
    /// program wrote before a notification may arrive here after it).
    func waitForError(_ text: String, timeout: Duration = .seconds(3)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if stderr.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return stderr.contains(text)
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits until the program takes `signal` itself (caught by its handler, as /proc says), so
    /// that sending it tests the program's handling, not the default action of a program still
    /// starting; false on timeout or exit. A program that executes itself again (the virtual
    /// device's private namespace) is waited for in the image whose environment holds
    /// `environment` (`KEY=VALUE`): the first image's handler is gone with the exec. (Blocked is
    /// not taken: a thread of a program still starting has every signal blocked a moment.)
    func waitUntilHandles(_ signal: Int32, environment: String? = nil, timeout: Duration = .seconds(20)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let bit = UInt64(1) << UInt64(signal - 1)
        let pid = process.processIdentifier
        while ContinuousClock.now < deadline && process.isRunning {
            let reexecuted = environment.map { wanted in
                (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")))?.split(separator: 0)
                    .contains { String(decoding: $0, as: UTF8.self) == wanted } ?? false
            } ?? true
            if reexecuted, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) {
                let masks = status.split(separator: "\n").filter { $0.hasPrefix("SigCgt:") }
                    .compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
                if masks.contains(where: { $0 & bit != 0 }) { return true }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Waits for exit (killing it after `timeout`) and returns the exit status.
    @discardableResult
    func wait(timeout: Duration = .seconds(10)) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        if process.isRunning {
            Issue.record("process still running after \(timeout); killing it")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        done.wait()
        return process.terminationStatus
    }
}
