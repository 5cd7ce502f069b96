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

    public func add(_ fd: Int32) {
        _ = clinux_epoll_add(descriptor, fd)
    }

    public func remove(_ fd: Int32) {
        _ = clinux_epoll_remove(descriptor, fd)
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
