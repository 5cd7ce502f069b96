// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waiting for descriptors with a deadline (`poll`). A deadline already past still looks
/// once, without waiting: "receive with timeout zero" reads what is there. EINTR is retried
/// with the time that remains.
public enum Poll {
    /// Waits until `descriptor` has one of `events` (or failed, or hung up), or `deadline`
    /// passes; true when it did.
    public static func wait(for descriptor: Descriptor, events: Int16 = Int16(POLLIN),
                            until deadline: ContinuousClock.Instant) throws(SystemCallError) -> Bool {
        try waitAny([descriptor], events: events, until: deadline).contains(true)
    }

    /// Waits until one of `descriptors` has one of `events` (or failed, or hung up), or
    /// `deadline` passes; which are ready, all false when none is. With no descriptors it
    /// sleeps until the deadline.
    public static func waitAny(_ descriptors: [Descriptor], events: Int16 = Int16(POLLIN),
                               until deadline: ContinuousClock.Instant) throws(SystemCallError) -> [Bool] {
        var fds = descriptors.map { pollfd(fd: $0.rawValue, events: events, revents: 0) }
        while true {
            let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
            let ready = try SystemCall.blocking("poll") {
                system_poll(&fds, remaining.pollMilliseconds)
            }
            if ready > 0 { return fds.map { $0.revents != 0 } }
            if ContinuousClock.now >= deadline { return fds.map { _ in false } }
        }
    }

    /// Waits `timeout`, or until `interrupt` (where there is one) is readable; true when it is.
    public static func pause(_ timeout: Duration, interrupt: Int32?) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let watched = interrupt.map { [Descriptor($0)] } ?? []
        guard let ready = try? waitAny(watched, until: deadline) else {
            // poll refused (it cannot for one descriptor or none): sleep instead.
            var request = timespec(tv_sec: Int(timeout.components.seconds),
                                   tv_nsec: Int(timeout.components.attoseconds / 1_000_000_000))
            nanosleep(&request, nil)
            return false
        }
        return ready.first == true
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Milliseconds for `poll`/`epoll_wait`, rounded up (a wait never ends before its
    /// deadline); 0 for none.
    public var pollMilliseconds: Int32 {
        guard self > .zero else { return 0 }
        return Int32(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 + 1)
    }
}
