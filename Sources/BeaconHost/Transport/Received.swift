// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What waiting for a packet ended with.
package enum Received<Packet: Hashable & Sendable>: Hashable, Sendable {
    case packet(Packet)
    case timedOut
}
