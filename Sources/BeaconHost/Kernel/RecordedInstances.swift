// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// An advertiser of kernel instances whose instances an `InstanceLedger` records.
package protocol RecordedInstances: AnyObject {
    /// Called with the instances that are ours whenever they change.
    var instancesChanged: (([UInt8]) -> Void)? { get set }
    /// What each instance of ours carries.
    var instanceData: [UInt8: [UInt8]] { get }
}
