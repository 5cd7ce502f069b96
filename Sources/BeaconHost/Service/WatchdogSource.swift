// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
