// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failure to open the endpoint, naming the address and the reason.
public struct MetricsError: Error, CustomStringConvertible {
    public let description: String
    /// Whether the port is in use (EADDRINUSE).
    public let portInUse: Bool
}
