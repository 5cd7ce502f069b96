// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// systemd's notification protocol, without libsystemd: newline-separated assignments
/// (`READY=1`, `STATUS=...`, `WATCHDOG=1`, `RELOADING=1`, `STOPPING=1`) in one datagram to
/// the Unix socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
package final class ServiceNotifier {
    public let socketPath: String
    /// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`, when the watchdog is meant
    /// for this process (`$WATCHDOG_PID` unset or ours); nil without a watchdog.
    public let watchdogInterval: Duration?
    private let descriptor: Int32

    /// Nil when the process was not started with `$NOTIFY_SOCKET` (not under systemd's
    /// `Type=notify`).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else { return nil }
        socketPath = path
        if let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == CurrentProcess.id }) ?? true {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
        guard let socket = try? Descriptor.socket(domain: AF_UNIX, type: Int32(SOCK_DGRAM.rawValue)) else { return nil }
        descriptor = socket.rawValue
    }

    deinit { Descriptor(descriptor).close() }

    /// Sends the assignments as one datagram; false when it could not be sent.
    @discardableResult
    public func notify(_ assignments: [String]) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // the abstract namespace
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let message = Array(assignments.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { try? Descriptor(descriptor).send($0, to: socketAddress, length: length) }
            }
        }
        guard case let .done(count) = sent else { return false }
        return count == message.count
    }

    /// A status line for `systemctl status`: one line, no newlines.
    public static func status(_ text: String) -> String {
        "STATUS=" + text.replacingOccurrences(of: "\n", with: " ")
    }
}

