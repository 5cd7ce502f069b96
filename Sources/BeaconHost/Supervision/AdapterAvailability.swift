// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether the adapter can take advertising now.
public enum AdapterAvailability: Hashable, Sendable {
    case usable
    /// Present but down or powered off.
    case down
    /// Not there at all (unplugged), or the link to it is closed.
    case gone
}
