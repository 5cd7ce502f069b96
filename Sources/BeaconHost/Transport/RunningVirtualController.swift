// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A rootcanal started by `VirtualController.launch`, stopped with it.
package final class RunningVirtualController {
    private let child: ChildProcess

    init(child: ChildProcess) { self.child = child }
    deinit { stop() }

    public var port: UInt16 { VirtualController.hciPort }

    /// Terminates rootcanal and reaps it (SIGKILL if it has not gone within a second).
    public func stop() {
        child.stop(grace: .seconds(1))
        child.closeDescriptors()
    }
}
