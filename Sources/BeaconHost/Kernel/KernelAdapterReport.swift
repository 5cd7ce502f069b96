// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What `info` says about a kernel adapter beyond the controller: which ways in are open
/// and what the kernel already advertises through its management API.
package struct KernelAdapterReport: Sendable {
    /// Read Advertising Features, when the management API answered.
    public var features: ReadAdvertisingFeatures.ReturnParameters?
    /// Why the management API is not available (nil when it is).
    public var managementProblem: String?
    /// Whether Set Advertising (which takes precedence over every instance) is on.
    public var setAdvertisingOn: Bool
    /// Whether LE is on for the management API.
    public var lowEnergyOn: Bool
    /// Whether LE privacy is on (the kernel advertises from resolvable private addresses).
    public var privacyOn = false
    public var up: Bool

    /// The address beacons go out from through the management API. Measured on Linux 6.1: a
    /// non-connectable instance gets a new non-resolvable random address from the kernel each
    /// time it is set up (added, or put back after a reset or a power cycle), kept while it
    /// runs and through changes of its data; a connectable one goes out from the public address.
    /// The management API has no way to choose a non-connectable instance's address.
    public var beaconAddress: String {
        privacyOn ? "privacy is on: the kernel's resolvable private addresses, renewed on its timer"
            : "the kernel's: a new non-resolvable random address at each add and restore (the public one for "
              + "connectable advertising; raw HCI access keeps the public address or a random one chosen)"
    }

    /// The way `--access auto` takes.
    public var automaticChoice: KernelAccess {
        (features?.maximumInstances ?? 0) > 0 && lowEnergyOn ? .management : .raw
    }

    /// One line per way in, with whether it is available now.
    public var waysIn: [(access: KernelAccess, available: Bool, note: String)] {
        let mgmtNote: String
        if let features {
            mgmtNote = features.maximumInstances == 0 ? "no advertising instances offered"
                : "up to \(features.freeInstanceCount) of \(features.maximumInstances) instances free"
                  + (features.acceptsIntervals ? "" : ", kernel's default interval only")
                  + (setAdvertisingOn ? "; Set Advertising is on and takes precedence" : "")
                  + (lowEnergyOn ? "" : "; LE is off (bringing the adapter up switches it on)")
        } else {
            mgmtNote = managementProblem ?? "not available"
        }
        return [
            (.management, (features?.maximumInstances ?? 0) > 0 && !setAdvertisingOn, mgmtNote),
            (.raw, up, up ? "HCI commands beside the kernel's" : "the adapter is down (bringing it up would do)"),
            (.userChannel, !up, up ? "needs the adapter down first" : "the adapter is down: it can be taken"),
        ]
    }

    /// Reads adapter `index` through the management API and the kernel's device list.
    public static func read(index: Int) -> KernelAdapterReport {
        var report = KernelAdapterReport(features: nil, managementProblem: nil, setAdvertisingOn: false,
                                         lowEnergyOn: false, up: KernelSocketTransport.isUp(index: index))
        do {
            let socket = try KernelSocketTransport.openManagement()
            defer { socket.close() }
            let client = MgmtClient(transport: socket, index: UInt16(index), commandTimeout: .seconds(1))
            let settings = try client.send(ReadControllerInformation()).currentSettings
            report.setAdvertisingOn = settings.contains(.advertising)
            report.lowEnergyOn = settings.contains(.lowEnergy)
            report.privacyOn = settings.contains(.privacy)
            report.features = try client.send(ReadAdvertisingFeatures())
        } catch {
            report.managementProblem = error.description
        }
        return report
    }
}
