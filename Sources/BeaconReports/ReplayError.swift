// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem
import Dispatch
import Foundation

/// Why a capture could not be replayed, naming the file (and the byte offset for a malformed one).
public struct ReplayError: Error, CustomStringConvertible {
    public var message: String
    /// The file could not be opened at all (no such file, no permission): an I/O failure
    /// (exit 74), not a capture that does not decode (65).
    public var unreadable = false
    public var description: String { message }

    public init(message: String, unreadable: Bool = false) {
        self.message = message
        self.unreadable = unreadable
    }

    /// The exit status for `error` where a capture was read: 74 for a file that does not
    /// open, 65 for anything else (a capture that does not decode).
    public static func exitStatus(for error: any Error) -> Int32 {
        (error as? ReplayError)?.unreadable == true ? 74 : 65
    }
}
