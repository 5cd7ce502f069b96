// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

/// Another program's command that replaced one of beacon-emit's advertising instances.
package struct InstanceTakeover: Hashable, Sendable, CustomStringConvertible {
    public var instance: UInt8
    /// The name of the process that sent it (as the kernel keeps it: 15 characters at most).
    public var process: String

    public init(instance: UInt8, process: String) {
        self.instance = instance
        self.process = process
    }

    public var description: String { "instance \(instance) taken over by \(process)" }
}
