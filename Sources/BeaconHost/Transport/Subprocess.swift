// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starting helper programs (python3, rootcanal) with posix_spawn.
enum Subprocess {
    /// Starts `arguments[0]` (searched on PATH), with output to `/dev/null` unless captured.
    /// - Returns: the child's pid and, when `capture` is set, the read end of its stdout.
    /// - Parameter ownProcessGroup: start it in a process group of its own, so a Ctrl-C at the
    ///   terminal reaches only this program, which then stops the child in order.
    static func spawn(_ arguments: [String], capture: Bool = false, quiet: Bool = true,
                      ownProcessGroup: Bool = false) throws(HostError) -> (pid: pid_t, output: Int32?) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Children start with no signal blocked, whatever this process inherited.
        var flags = Int32(POSIX_SPAWN_SETSIGMASK)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        if ownProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        if capture {
            guard pipe(&pipeFDs) == 0 else { throw .virtualController("pipe: \(SystemCallError.message(errno))") }
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        } else if quiet {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, environ)
        if capture { Descriptor(pipeFDs[1]).close() }
        guard status == 0 else {
            if capture { Descriptor(pipeFDs[0]).close() }
            throw .virtualController("cannot start \(arguments[0]): \(SystemCallError.message(status))")
        }
        return (pid, capture ? pipeFDs[0] : nil)
    }

    /// Runs a program to completion. Returns its exit status and captured standard output.
    static func run(_ arguments: [String], quiet: Bool = true) throws(HostError) -> (status: Int32, output: String) {
        let (pid, output) = try spawn(arguments, capture: true, quiet: quiet)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        if let output {
            let pipe = Descriptor(output)
            // Until the program closes its end (a failed read ends it too: what came is kept).
            while case let .done(count) = (try? pipe.read(into: &buffer)) ?? .done(0), count > 0 {
                bytes += buffer[0..<count]
            }
            pipe.close()
        }
        return (wait(pid), String(decoding: bytes, as: UTF8.self))
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        _ = try? SystemCall.blocking("waitpid") { waitpid(pid, &status, 0) }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
