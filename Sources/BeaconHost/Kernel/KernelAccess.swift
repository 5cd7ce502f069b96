// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How beacon-emit reaches a kernel adapter (`--access`).
public enum KernelAccess: String, CaseIterable, Sendable {
    /// The management API where the kernel offers advertising instances through it; raw otherwise.
    case automatic = "auto"
    /// The kernel's management API (`HCI_CHANNEL_CONTROL`): instances beside everyone else's.
    case management = "mgmt"
    /// A raw HCI socket: HCI commands beside the kernel's, on sets the kernel does not use.
    case raw
    /// The exclusive user channel (`HCI_CHANNEL_USER`): the adapter taken from the kernel.
    case userChannel = "user-channel"
}

