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

/// Pings systemd's watchdog from the emitter's run loop (a `RunLoopSource`): a loop stuck in
/// a wait that never ends sends nothing more, and systemd restarts the service.
package final class WatchdogSource: RunLoopSource {
    private let notifier: ServiceNotifier
    private let timer: PeriodicTimer
    public var descriptor: Int32 { timer.descriptor }
    public var descriptors: [Int32] { [descriptor] }

    public init(notifier: ServiceNotifier, interval: Duration) throws(HostError) {
        self.notifier = notifier
        do {
            timer = try PeriodicTimer(period: interval)
        } catch {
            throw .kernel(call: error.call, errno: error.errno, adapter: nil, adapters: [])
        }
    }

    public func serve() {
        guard timer.expirations() > 0 else { return }
        notifier.notify(["WATCHDOG=1"])
    }

    /// The ping goes out while a command waits (Set Powered may take 10 s).
    public var servesWhileCommandWaits: Bool { true }
}

/// SIGHUP as a run-loop source: `reload` runs on the loop's own thread when it arrives.
package final class ReloadSource: RunLoopSource {
    public let descriptor: Int32
    public var descriptors: [Int32] { [descriptor] }
    private let reload: () -> Void

    public init(reload: @escaping () -> Void) {
        descriptor = SignalWatcher.installReload()
        self.reload = reload
    }

    public func serve() {
        guard SignalWatcher.drainReload() else { return }
        reload()
    }
}

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
