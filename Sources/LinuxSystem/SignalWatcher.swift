// SPDX-License-Identifier: GPL-2.0-or-later

import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns SIGINT and SIGTERM into a readable descriptor (the self-pipe trick), so a wait on
/// the controller ends the moment a stop is asked for, and the stop can disable advertising
/// before the process lets go of the controller. Also ignores SIGPIPE, so a closed link is
/// an error to report rather than a silent death.
///
/// The handler is C (`clinux_signal_to_pipe`, installed with sigaction): it saves errno and
/// only writes a byte, so no Swift code runs inside a signal. The run loop reads the pipe.
public enum SignalWatcher {
    /// Read end, write end; set once, on the main thread, before any handler can fire.
    nonisolated(unsafe) private static var pipeDescriptors: (read: Int32, write: Int32)?
    nonisolated(unsafe) private static var reloadDescriptors: (read: Int32, write: Int32)?

    /// Installs the handlers (once) and returns the descriptor that becomes readable on a signal.
    public static func install() -> Int32 {
        if let pipeDescriptors { return pipeDescriptors.read }
        guard let fds = makePipe() else { return -1 }
        pipeDescriptors = fds
        ignoreBrokenPipes()
        // A parent may have started this process with the signals blocked: they are unblocked.
        for signalNumber in [SIGINT, SIGTERM] { _ = clinux_signal_to_pipe(signalNumber, fds.write) }
        return fds.read
    }

    /// A write to a pipe or socket whose reader left fails with EPIPE instead of ending the process.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Turns SIGHUP into a readable descriptor of its own (installed once): a request to
    /// reload, not to stop.
    public static func installReload() -> Int32 {
        if let reloadDescriptors { return reloadDescriptors.read }
        guard let fds = makePipe() else { return -1 }
        reloadDescriptors = fds
        _ = clinux_signal_to_pipe(SIGHUP, fds.write)
        return fds.read
    }

    /// A pipe for a signal handler to write to: non-blocking (a handler must never wait),
    /// closed on exec.
    private static func makePipe() -> (read: Int32, write: Int32)? {
        try? WakePipe.pair()
    }

    /// Empties the reload pipe; true when a SIGHUP had arrived.
    public static func drainReload() -> Bool {
        guard let reloadDescriptors else { return false }
        return WakePipe.drain(reloadDescriptors.read)
    }

    /// The name of the last signal received ("SIGTERM"), if any.
    public static var received: String? {
        switch clinux_last_signal() {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: nil
        }
    }
}
