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
}
