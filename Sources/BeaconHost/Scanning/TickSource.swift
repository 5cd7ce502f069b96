// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import LinuxSystem

/// Work on a schedule as a source of the loop: `action` every `period`, the first a period
/// from now. No descriptor: the loop's deadline is its due time.
package final class TickSource: RunLoopSource {
    private let period: Duration
    private let action: () -> Void
    private var next: ContinuousClock.Instant

    package init(every period: Duration, _ action: @escaping () -> Void) {
        self.period = period
        self.action = action
        next = .now + period
    }

    package var descriptors: [Int32] { [] }
    package var due: ContinuousClock.Instant? { next }

    package func serve() {
        next = .now + period
        action()
    }
}
