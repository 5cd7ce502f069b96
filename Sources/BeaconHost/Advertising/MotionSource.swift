// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// A running emitter's `BeaconMotions` in its loop: a `RunLoopSource` with no descriptor,
/// whose `due` is the next change, on the machine's monotonic clock.
package final class MotionSource: RunLoopSource {
    private let motions: BeaconMotions
    private let origin = ContinuousClock.now

    package init(_ motions: BeaconMotions) {
        self.motions = motions
    }

    /// None: its work is on a schedule (`due`).
    package var descriptors: [Int32] { [] }

    package var due: ContinuousClock.Instant? {
        motions.nextDue(now: now).map { origin + .seconds($0) }
    }

    package func serve() { motions.perform(now: now) }

    /// Seconds since `origin`.
    private var now: Double { origin.duration(to: .now).inSeconds }
}
