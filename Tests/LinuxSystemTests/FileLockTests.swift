// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
import Testing

/// One install at a time into a shared cache: while a process holds the lock, another process
/// (util-linux's `flock -n`, not asking this code) cannot take it; once it is released, it can.
@Suite struct FileLockTests {
    @Test func anotherProcessWaitsWhileTheLockIsHeld() throws {
        let directory = try #require(FileSystem.makePrivateTemporaryDirectory(prefix: "beacon-emit-lock-test"))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lock = directory + "/install.lock"
        func othersTry() throws -> ChildProcess.Termination? {
            let other = try ChildProcess(arguments: ["flock", "--nonblock", "--conflict-exit-code", "9", lock, "true"],
                                         output: .discard, errors: .discard)
            return other.wait(until: .now + .seconds(30))
        }
        let held = try FileSystem.withExclusiveLock(lock) { try? othersTry() }
        #expect(held == .exited(9), "held: the other process is refused")
        #expect(try othersTry() == .exited(0), "released: the other process takes it")
        #expect(FileSystem.kind(atPath: lock) == .regularFile)
    }
}
