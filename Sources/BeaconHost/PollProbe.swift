// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Non-blocking readiness checks.
public enum PollProbe {
    /// Whether `descriptor` has something to read right now.
    public static func readable(_ descriptor: Int32) -> Bool {
        var fd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) > 0 && fd.revents & Int16(POLLIN) != 0
    }

    /// What waiting for a descriptor ended with.
    enum Outcome {
        case readable, timedOut, interrupted
    }

    /// Waits until `descriptor` has something to read (or has failed), `interrupt` is readable,
    /// or `deadline` passes; EINTR is retried.
    /// - Throws: `TransportError.system` naming `poll(name)`.
    static func wait(for descriptor: Int32, interrupt: Int32?, until deadline: ContinuousClock.Instant,
                     name: String) throws(TransportError) -> Outcome {
        while true {
            // A deadline already past still looks once, without waiting: "receive with timeout
            // zero" reads what is there.
            let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let interrupt { fds.append(pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0)) }
            let milliseconds = remaining == .zero ? 0 : Int32(clamping: (remaining.components.seconds * 1000)
                                     + Int64(remaining.components.attoseconds / 1_000_000_000_000_000) + 1)
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(call: "poll(\(name))", errno: errno)
            }
            if ready == 0 {
                if ContinuousClock.now >= deadline { return .timedOut }
                continue
            }
            if fds.count > 1, fds[1].revents & Int16(POLLIN) != 0 { return .interrupted }
            if fds[0].revents != 0 { return .readable }
        }
    }

    /// Waits until one of `descriptors` is readable (or has failed) or `deadline` passes.
    /// - Returns: which are ready; all false on timeout. EINTR counts as a timeout (the
    ///   caller's loop polls again).
    static func waitAny(_ descriptors: [Int32], until deadline: ContinuousClock.Instant) -> [Bool] {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
        let milliseconds = Int32(clamping: (remaining.components.seconds * 1000)
                                 + Int64(remaining.components.attoseconds / 1_000_000_000_000_000) + 1)
        guard poll(&fds, nfds_t(fds.count), remaining == .zero ? 0 : milliseconds) > 0 else {
            return descriptors.map { _ in false }
        }
        return fds.map { $0.revents != 0 }
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
