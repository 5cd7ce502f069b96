// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
