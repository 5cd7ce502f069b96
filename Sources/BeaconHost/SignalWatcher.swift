// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns SIGINT and SIGTERM into a readable descriptor (the self-pipe trick), so a wait on
/// the controller ends the moment a stop is asked for, and the stop can disable advertising
/// before the process lets go of the controller. Also ignores SIGPIPE, so a closed link is
/// an error to report rather than a silent death.
public enum SignalWatcher {
    nonisolated(unsafe) private static var pipeDescriptors: [Int32] = [-1, -1]
    nonisolated(unsafe) private static var lastSignal: Int32 = 0

    /// Installs the handlers (once) and returns the descriptor that becomes readable on a signal.
    public static func install() -> Int32 {
        if pipeDescriptors[0] >= 0 { return pipeDescriptors[0] }
        guard let fds = makePipe() else { return -1 }
        pipeDescriptors = fds
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started this process with the signals blocked; unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber) { received in
                SignalWatcher.lastSignal = received
                var byte: UInt8 = 1
                _ = write(SignalWatcher.pipeDescriptors[1], &byte, 1)
            }
        }
        return fds[0]
    }

    nonisolated(unsafe) private static var reloadDescriptors: [Int32] = [-1, -1]

    /// Turns SIGHUP into a readable descriptor of its own (installed once): a request to
    /// reload, not to stop.
    public static func installReload() -> Int32 {
        if reloadDescriptors[0] >= 0 { return reloadDescriptors[0] }
        guard let fds = makePipe() else { return -1 }
        reloadDescriptors = fds
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGHUP)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        signal(SIGHUP) { _ in
            var byte: UInt8 = 1
            _ = write(SignalWatcher.reloadDescriptors[1], &byte, 1)
        }
        return fds[0]
    }

    /// A pipe for a signal handler to write to: non-blocking (a handler must never wait),
    /// closed on exec.
    private static func makePipe() -> [Int32]? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return fds
    }

    /// Empties the reload pipe; true when a SIGHUP had arrived.
    public static func drainReload() -> Bool {
        var byte: UInt8 = 0
        var any = false
        while read(reloadDescriptors[0], &byte, 1) == 1 { any = true }
        return any
    }

    /// The name of the last signal received ("SIGTERM"), if any.
    public static var received: String? {
        switch lastSignal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: nil
        }
    }
}
