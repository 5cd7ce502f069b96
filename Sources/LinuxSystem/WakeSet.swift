// SPDX-License-Identifier: GPL-2.0-or-later

import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Several descriptors behind one (an epoll instance): readable when any of them is, so a
/// wait that takes one descriptor to end early can end for any of them.
public final class WakeSet {
    public let descriptor: Int32

    public init(_ descriptors: [Int32] = []) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        for fd in descriptors { add(fd) }
    }

    /// The descriptors `watch` last asked for.
    public private(set) var watched: Set<Int32> = []
    /// `Descriptor.closeCount` when `watch` last registered: while it is the same, no
    /// descriptor closed, so every one watched is still in the set.
    private var closesSeen: UInt64?
    /// How many registrations (epoll_ctl calls) `watch` made: a wait on the same descriptors
    /// makes none.
    public private(set) var registrations = 0

    public func add(_ fd: Int32) {
        _ = clinux_epoll_add(descriptor, fd)
    }

    /// Watches exactly `fds` now. Registrations persist between waits: only a descriptor new
    /// to the set is added and only one no longer asked for removed, unless a descriptor was
    /// closed since (anywhere in the process: it left every epoll set, and its number may have
    /// come back as another), when each of `fds` is added again.
    public func watch(_ fds: Set<Int32>) {
        let closes = Descriptor.closeCount
        for fd in watched.subtracting(fds) {
            remove(fd)
            registrations += 1
        }
        for fd in closes == closesSeen ? fds.subtracting(watched) : fds {
            add(fd)
            registrations += 1
        }
        watched = fds
        closesSeen = closes
    }

    public func remove(_ fd: Int32) {
        _ = clinux_epoll_remove(descriptor, fd)
    }

    /// Waits until one of the descriptors is readable or `deadline` passes.
    /// - Returns: the readable ones (none at the deadline).
    public func wait(until deadline: ContinuousClock.Instant) throws(SystemCallError) -> [Int32] {
        guard try Poll.waitAny([Descriptor(descriptor)], until: deadline).first == true else { return [] }
        return ready()
    }

    /// The descriptors ready now (without waiting).
    public func ready() -> [Int32] {
        var fds = [Int32](repeating: -1, count: 64)
        let count = clinux_epoll_ready(descriptor, &fds, 64, 0)
        return count > 0 ? Array(fds[..<Int(count)]) : []
    }

    public func close() {
        Descriptor(descriptor).close()
    }
}

/// A descriptor that is readable every period (a timerfd), for run-loop work on a schedule.
public final class PeriodicTimer {
    public let descriptor: Int32

    /// - Throws: `SystemCallError` naming `timerfd_create` when the kernel refuses a timer.
    public init(period: Duration) throws(SystemCallError) {
        let milliseconds = max(1, Int32(clamping: period.components.seconds * 1000
                                                  + period.components.attoseconds / 1_000_000_000_000_000))
        descriptor = try Descriptor(checking: clinux_timer(milliseconds), call: "timerfd_create").rawValue
    }

    /// How many periods passed since the last call.
    public func expirations() -> UInt64 {
        clinux_timer_expirations(descriptor)
    }

    deinit { Descriptor(descriptor).close() }
}

/// A pipe that wakes a wait from another thread: `wake()` writes a byte (never blocking), and
/// the read end, `descriptor`, is readable until `drain()` empties it. Both ends close on exec.
public final class WakePipe: Sendable {
    public let descriptor: Int32
    private let writeEnd: Int32

    /// - Throws: `SystemCallError` when the pipe cannot be made (no descriptors left).
    public init() throws(SystemCallError) {
        let (read, write) = try Self.pair()
        descriptor = read
        writeEnd = write
    }

    deinit {
        Descriptor(descriptor).close()
        Descriptor(writeEnd).close()
    }

    /// A non-blocking pipe closed on exec: read end, write end (what a signal handler writes to).
    public static func pair() throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try SystemCall.blocking("pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }

    /// Makes `descriptor` readable (a full pipe is readable already).
    public func wake() {
        var byte: UInt8 = 1
        _ = try? withUnsafeBytes(of: &byte) { bytes throws(SystemCallError) in
            try Descriptor(writeEnd).write(bytes, name: "write(wake pipe)")
        }
    }

    /// Empties the pipe; true when it had been woken.
    @discardableResult
    public func drain() -> Bool { Self.drain(descriptor) }

    /// Empties the non-blocking pipe whose read end is `descriptor` (this one's, or a signal's);
    /// true when anything was in it.
    public static func drain(_ descriptor: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var any = false
        while case .done(let count) = (try? Descriptor(descriptor).read(into: &buffer, name: "read(wake pipe)")) ?? .done(0),
              count > 0 {
            any = true
        }
        return any
    }
}
