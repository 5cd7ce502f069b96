// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The loop a command's wait for its answer runs (`CommandEngine.loop`): the run loop that
/// owns the link's descriptor beside the others (`EventLoop`).
package protocol CommandWaitLoop: AnyObject {
    /// Returns once `descriptor` is readable or `deadline` has passed, having served meanwhile
    /// what may be served while a command is outstanding (nothing that sends a command).
    /// - Throws: `HostError` where the wait itself fails.
    func wait(for descriptor: Int32, until deadline: ContinuousClock.Instant) throws(HostError)
}
