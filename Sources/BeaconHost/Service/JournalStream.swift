// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether standard error goes to systemd's journal (`$JOURNAL_STREAM` names its device and
/// inode), where a line may begin with its syslog priority, `<3>` to `<7>`.
package enum JournalStream {
    public static func isStandardError(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let identity = FileSystem.identity(of: STDERR_FILENO) else { return false }
        return UInt64(parts[0]) == identity.device && UInt64(parts[1]) == identity.inode
    }

    /// Syslog priorities, as journald reads them from a `<N>` prefix.
    public enum Priority: Int, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }
}
