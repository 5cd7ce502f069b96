// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem

/// Why a box could not be reached when the run began: the run does not start.
public struct RemoteBoxError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
