// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What becomes of an event that answers no command the host waits for.
package struct PassedOver {
    /// Kept for `nextEvent`.
    public var keep = false
    /// Counted as input nobody asked for.
    public var unsolicited: (kind: UnsolicitedInput, detail: String)?
    /// Handed to the wire's observer.
    public var observed = false

    public init(keep: Bool = false, unsolicited: (kind: UnsolicitedInput, detail: String)? = nil, observed: Bool = false) {
        self.keep = keep
        self.unsolicited = unsolicited
        self.observed = observed
    }
}
