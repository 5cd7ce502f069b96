// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program started with its standard input, output and error on pipes of ours, in a process
/// group of its own, reaped by
/// `waitpid` when asked (never by a thread of its own). Foundation's `Process` is not used for
/// this: it takes a child closing its inherited descriptors (as ssh does at start) for the
/// child's end and then blocks in `waitpid` until that child exits, which stalls every other
/// child's termination behind it.
public final class ChildProcess {
    public let pid: pid_t
    /// Writes to the child's standard input.
    public let input: Descriptor
    /// Reads the child's standard output, and its standard error.
    public let output: Descriptor
    public let errors: Descriptor
    private var ended: Termination?
    private var inputOpen = true
    private var closed = false

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
    }

    /// Starts `arguments[0]`, found on PATH, with this process's environment.
    /// - Throws: `SystemCallError` when the pipes cannot be made or the program cannot start.
    public init(arguments: [String]) throws(SystemCallError) {
        precondition(!arguments.isEmpty, "a program to start")
        var pipes: [Int32] = []
        defer { for fd in pipes { system_close(fd) } }  // the child's ends, and all of them after a failure
        for _ in 0..<3 {
            var pair: [Int32] = [-1, -1]
            _ = try SystemCall.blocking("pipe") { pipe(&pair) }
            pipes += pair
            // Not inherited by other children (the dup2 of the child's ends clears it there).
            for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        // The child reads pipes[0] and writes pipes[3] and pipes[5].
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[3], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[5], 2)
        // A process group of its own, so that a Ctrl-C at the terminal reaches this process
        // alone (which then ends what it started in order); the signals this process ignores or
        // catches are the child's defaults again.
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
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, environ)
        guard status == 0 else { throw SystemCallError(call: "posix_spawnp(\(arguments[0]))", errno: status) }
        pid = child
        input = Descriptor(pipes[1])
        output = Descriptor(pipes[2])
        errors = Descriptor(pipes[4])
        pipes = [pipes[0], pipes[3], pipes[5]]
    }

    /// How the child ended, or nil while it runs (asked without waiting).
    public var termination: Termination? {
        if ended == nil {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { ended = Self.termination(status) }
        }
        return ended
    }

    /// Waits until the child ends or `deadline` passes; how it ended, or nil.
    public func wait(until deadline: ContinuousClock.Instant) -> Termination? {
        while termination == nil && ContinuousClock.now < deadline {
            _ = Poll.pause(.milliseconds(5), interrupt: nil)
        }
        return termination
    }

    /// Asks the child to end (SIGTERM), then, after `grace`, makes it (SIGKILL); reaps it.
    public func stop(grace: Duration = .seconds(2)) {
        guard termination == nil else { return }
        kill(pid, SIGTERM)
        if wait(until: .now + grace) == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            if waitpid(pid, &status, 0) == pid { ended = Self.termination(status) }
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
        output.close()
        errors.close()
    }

    deinit {
        closeDescriptors()
    }

    private static func termination(_ status: Int32) -> Termination {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }
}
