// SPDX-License-Identifier: GPL-2.0-or-later

import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program started with its standard input, output and error on pipes of ours (or output
/// and error discarded), in a process group of its own, reaped by `waitpid` when asked (never
/// by a thread of its own): the one way this package starts and stops a child process.
/// Foundation's `Process` is not used for this: it takes a child closing its inherited
/// descriptors (as ssh does at start) for the child's end and then blocks in `waitpid` until
/// that child exits, which stalls every other child's termination behind it.
public final class ChildProcess {
    public let pid: pid_t
    /// Writes to the child's standard input.
    public let input: Descriptor
    /// Reads the child's standard output, and its standard error (nil where discarded).
    public let output: Descriptor?
    public let errors: Descriptor?
    private var ended: Termination?
    /// A descriptor readable once the child ends (pidfd), opened at the first wait; -1 before,
    /// or where the kernel has none (before 5.3), where waiting checks every 5 ms instead.
    private var processDescriptor: Int32 = -1
    private var triedProcessDescriptor = false
    private var inputOpen = true
    private var closed = false
    /// The guard (`endsWithThisProcess`): a shell in the child's process group that kills the
    /// group when it reads the end of `guardLine`, whose writing end only this process holds.
    private var guardPID: pid_t = 0
    private var guardLine: Int32 = -1

    /// Where one of the child's output streams goes.
    public enum Stream: Sendable {
        /// A pipe this process reads (`output`, `errors`).
        case pipe
        /// /dev/null: what the child says there is discarded (nothing to read, nothing to block on).
        case discard
    }

    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case let .exited(status): "exit \(status)"
            case let .signalled(number): "killed by signal \(number)"
            }
        }

        /// A shell's status: the exit status, or 128 + the signal.
        public var status: Int32 {
            switch self {
            case let .exited(status): status
            case let .signalled(number): 128 + number
            }
        }
    }

    /// Starts `arguments[0]`, found on PATH, with this process's environment.
    /// - Parameters:
    ///   - output: where the child's standard output goes; `errors`, its standard error.
    ///   - ownProcessGroup: a process group of its own, so that a Ctrl-C at the terminal
    ///     reaches this process alone (which then ends what it started in order); false for a
    ///     helper that should stop with the terminal's Ctrl-C as this process does.
    ///   - endsWithThisProcess: the child's whole process group ends when this process does,
    ///     however it ends (a signal it does not catch, SIGKILL, a crash): a guard, a shell in
    ///     the group, waits for the end of a pipe whose writing end only this process holds,
    ///     which the kernel closes with it, then kills the group. Being in the group, the guard
    ///     also keeps the group's number from being reused while anything of it runs. (A
    ///     program that leaves the group, as a daemon does, is beyond it.)
    /// - Throws: `SystemCallError` when the pipes cannot be made or the program cannot start.
    public init(arguments: [String], output outputStream: Stream = .pipe, errors errorStream: Stream = .pipe,
                ownProcessGroup: Bool = true, endsWithThisProcess: Bool = false) throws(SystemCallError) {
        precondition(!arguments.isEmpty, "a program to start")
        // The child's end and ours of each pipe, or -1; every one of them closed after a failure.
        var ends: [(child: Int32, ours: Int32)] = []
        var childEnds: [Int32] = []
        defer { for fd in childEnds { system_close(fd) } }
        var started = false
        defer { if !started { for end in ends where end.ours >= 0 { system_close(end.ours) } } }
        for (index, stream) in [Stream.pipe, outputStream, errorStream].enumerated() {
            guard stream == .pipe else {
                ends.append((-1, -1))
                continue
            }
            var pair: [Int32] = [-1, -1]
            _ = try SystemCall.blocking("pipe") { pipe(&pair) }
            // Not inherited by other children (the dup2 of the child's ends clears it there).
            for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // Standard input: the child reads pair[0]; output and error: it writes pair[1].
            let end = index == 0 ? (child: pair[0], ours: pair[1]) : (child: pair[1], ours: pair[0])
            ends.append(end)
            childEnds.append(end.child)
        }
        let child = try Self.spawn(arguments, stdio: ends.map(\.child), group: ownProcessGroup ? 0 : nil)
        started = true
        pid = child
        input = Descriptor(ends[0].ours)
        output = ends[1].ours >= 0 ? Descriptor(ends[1].ours) : nil
        errors = ends[2].ours >= 0 ? Descriptor(ends[2].ours) : nil
        guard endsWithThisProcess && ownProcessGroup else { return }
        do {
            (guardPID, guardLine) = try Self.startGuard(group: child)
        } catch {
            // Not guarded, it does not run: the group is ended now, and this child with it.
            kill(-child, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
            ended = .signalled(SIGKILL)
            closeDescriptors()
            throw error
        }
    }

    /// Starts `arguments[0]` (found on PATH, or a path) with `stdio[n]` as its descriptor n (-1:
    /// /dev/null, for writing), in process group `group` (nil: this process's; 0: one of its
    /// own; else that one). The signals this process ignores or catches are the child's defaults
    /// again, and none is blocked, whatever this process inherited.
    /// - Returns: its pid.
    private static func spawn(_ arguments: [String], stdio: [Int32], group: pid_t?) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, descriptor) in stdio.enumerated() {
            if descriptor >= 0 {
                posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(number))
            } else {
                posix_spawn_file_actions_addopen(&actions, Int32(number), "/dev/null", O_WRONLY, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, number) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if let group {
            posix_spawnattr_setpgroup(&attributes, group)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, environ)
        guard status == 0 else { throw SystemCallError(call: "posix_spawnp(\(arguments[0]))", errno: status) }
        return child
    }

    /// Starts the guard of process group `group` (`endsWithThisProcess`): `sh` in that group,
    /// reading a pipe to its end, then killing the group (itself with it).
    /// - Returns: the guard's pid and the pipe's writing end (close-on-exec: no other child has it).
    private static func startGuard(group: pid_t) throws(SystemCallError) -> (pid: pid_t, line: Int32) {
        var pair: [Int32] = [-1, -1]
        _ = try SystemCall.blocking("pipe") { pipe(&pair) }
        for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { system_close(pair[0]) }
        do {
            // `read` returns at the pipe's end (nothing is ever written); `kill -9 0` is the group.
            let guardPID = try spawn(["/bin/sh", "-c", "read -r line; kill -9 0"], stdio: [pair[0], -1, -1], group: group)
            return (guardPID, pair[1])
        } catch {
            system_close(pair[1])
            throw error
        }
    }

    /// Ends the guard, and reaps it: killed, where the caller is ending the group it kept
    /// itself; else left to end the group (its line closed), as it does when this process ends.
    private func endGuard(killing: Bool = true) {
        guard guardPID > 0 else { return }
        if guardLine >= 0 { system_close(guardLine) }
        guardLine = -1
        if killing { kill(guardPID, SIGKILL) }
        var status: Int32 = 0
        _ = waitpid(guardPID, &status, 0)
        guardPID = 0
    }

    /// Runs a program to completion, its standard error discarded, in this process's group (a
    /// Ctrl-C at the terminal stops it too).
    /// - Returns: how it ended and what it wrote to its standard output.
    /// - Throws: `SystemCallError` when it cannot be started.
    public static func run(_ arguments: [String]) throws(SystemCallError) -> (termination: Termination, output: String) {
        let child = try ChildProcess(arguments: arguments, output: .pipe, errors: .discard, ownProcessGroup: false)
        child.closeInput()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        if let output = child.output {
            // Until the program closes its end (a failed read ends it too: what came is kept).
            while case let .done(count) = (try? output.read(into: &buffer)) ?? .done(0), count > 0 {
                bytes += buffer[0..<count]
            }
        }
        var status: Int32 = 0
        let reaped = (try? SystemCall.blocking("waitpid") { waitpid(child.pid, &status, 0) }) == child.pid
        child.ended = reaped ? Self.termination(status) : .exited(255)
        return (child.ended ?? .exited(255), String(decoding: bytes, as: UTF8.self))
    }

    /// How the child ended, or nil while it runs (asked without waiting).
    public var termination: Termination? {
        if ended == nil {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { ended = Self.termination(status) }
        }
        return ended
    }

    /// Waits until the child ends or `deadline` passes; how it ended, or nil. The wait is on a
    /// descriptor of the child's (pidfd), woken when it ends; a kernel without one is asked
    /// every 5 ms.
    public func wait(until deadline: ContinuousClock.Instant) -> Termination? {
        while termination == nil && ContinuousClock.now < deadline {
            // (Readable and still not reaped: someone else reaped it; asked again in 5 ms.)
            if let descriptor = endDescriptor, (try? Poll.wait(for: descriptor, until: deadline)) != true { continue }
            if termination == nil { _ = Poll.pause(.milliseconds(5), interrupt: nil) }
        }
        return termination
    }

    /// Whether waiting is woken by the child's end (a pidfd), not a 5 ms check.
    public var waitsOnItsEnd: Bool { endDescriptor != nil }

    /// The child's pidfd, opened once (nil where the kernel has none).
    private var endDescriptor: Descriptor? {
        if !triedProcessDescriptor {
            triedProcessDescriptor = true
            let fd = clinux_pidfd_open(pid)
            if fd >= 0 { processDescriptor = fd }
        }
        return processDescriptor >= 0 ? Descriptor(processDescriptor) : nil
    }

    /// Asks the child to end (SIGTERM), then, after `grace`, makes it (SIGKILL); reaps it.
    /// - Parameter group: its whole process group (a child started in a group of its own: a
    ///   shell's pipeline, what it started), which is also made to end (SIGKILL) once the child
    ///   has, so that nothing it started outlives it; the call returns once the group is gone
    ///   (its members reaped by whoever adopted them) or a second has passed, since a signal
    ///   is delivered, and a killed process torn down, after `kill` returns.
    public func stop(grace: Duration = .seconds(2), group: Bool = false) {
        let target = group ? -pid : pid
        if termination == nil {
            kill(target, SIGTERM)
            if wait(until: .now + grace) == nil {
                kill(target, SIGKILL)
                var status: Int32 = 0
                if waitpid(pid, &status, 0) == pid { ended = Self.termination(status) }
            }
        }
        guard group else { return endGuard() }
        kill(target, SIGKILL)
        endGuard()
        let deadline = ContinuousClock.now + .seconds(1)
        while kill(target, 0) == 0 && ContinuousClock.now < deadline {
            _ = Poll.pause(.milliseconds(5), interrupt: nil)
        }
    }

    /// Closes the child's standard input: it reads the end (once).
    public func closeInput() {
        guard inputOpen else { return }
        inputOpen = false
        input.close()
    }

    /// Closes our ends of the pipes (once).
    public func closeDescriptors() {
        guard !closed else { return }
        closed = true
        closeInput()
        output?.close()
        errors?.close()
    }

    deinit {
        endGuard(killing: false)
        closeDescriptors()
        if processDescriptor >= 0 { system_close(processDescriptor) }
    }

    private static func termination(_ status: Int32) -> Termination {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }
}
