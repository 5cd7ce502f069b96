// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a session took in.
package enum SessionSignal: Hashable, Sendable {
    /// Nothing the emitter acts on.
    case quiet
    /// The beacons are (or may be) off the air.
    case disrupted(Disruption)
    /// The adapter says it is usable again (powered on, added back).
    case adapterBack
}
