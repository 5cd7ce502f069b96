// SPDX-License-Identifier: GPL-2.0-or-later

// The only Swift file that imports CHCI: kernel HCI sockets through libbluetooth.

import AdvertisementCodec
import CHCI
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Bluetooth SIG's company identifiers, as the system's libbluetooth names them.
package enum CompanyNames {
    /// The company `id` is assigned to ("Apple, Inc." for 0x004C); nil where the list has no
    /// name for it (not assigned, or newer than the installed libbluetooth).
    @Sendable public static func name(_ id: UInt16) -> String? {
        chci_company_name(Int32(id)).map { String(cString: $0) }
    }
}
