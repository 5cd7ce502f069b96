// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import LinuxSystem
import Foundation

/// Why the control socket could not be opened or used: what, and what to do.
public struct ControlError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
