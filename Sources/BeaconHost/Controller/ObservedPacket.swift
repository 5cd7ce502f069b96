// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Something another program did on the controller, seen on a kernel HCI socket.
package enum ObservedPacket: Hashable, Sendable {
    /// A command another program sent.
    case command(HCICommandPacket)
    /// A Command Complete that answers no command of this host.
    case commandComplete(CommandComplete)
}
