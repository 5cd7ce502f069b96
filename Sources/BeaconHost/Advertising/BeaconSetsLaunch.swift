// SPDX-License-Identifier: GPL-2.0-or-later

/// Beacons put on and taken off the air one at a time (a scenario's stage), on a device
/// opened the way `advertise` opens it: the kernel's advertising instances through the
/// management API (recorded while ours, what ended runs left removed first), or advertising
/// sets through HCI commands.
package final class BeaconSetsLaunch {
    /// The sets or instances.
    public let sets: any BeaconSets
    /// What the beacons are, for the progress line ("hci0: beacons as the kernel's advertising
    /// instances").
    public let summary: String
    /// The way into a kernel adapter taken (nil for a controller of our own: H4, virtual).
    public let access: KernelAccess?
    /// The HCI link, where the beacons go through HCI commands (a scanner beside it may need it).
    public let connection: ControllerConnection?
    private let management: ManagementConnection?

    private init(sets: any BeaconSets, summary: String, access: KernelAccess?, connection: ControllerConnection?,
                 management: ManagementConnection?) {
        self.sets = sets
        self.summary = summary
        self.access = access
        self.connection = connection
        self.management = management
    }

    /// Opens `device` and readies its sets.
    /// - Parameters:
    ///   - intervalUnits: the beacons' advertising interval, in 0.625 ms units.
    ///   - rotationPeriod: each turn on the last set, where more beacons than sets take turns on it.
    ///   - trace: where each command and step goes (`--verbose`); nil for nowhere.
    ///   - progress: what the launch says on its way (what ended runs left, a record not written).
    ///   - unsolicited: what a controller sends that nobody asked for, as it is counted.
    /// - Throws: `HostError`; nothing stays open when it throws.
    public static func open(device: DeviceSpecification, access: KernelAccess, bringUp: Bool, intervalUnits: UInt32,
                            rotationPeriod: Duration = .seconds(1),
                            trace: ((String) -> Void)?, progress: @escaping (String) -> Void,
                            unsolicited: ((UnsolicitedInputReport) -> Void)? = nil) throws(HostError)
        -> BeaconSetsLaunch {
        let follows = device.adapterAddress
        let device = try device.resolved()
        let way = try AdvertisingLaunch.resolve(access, device: device, bringingUp: bringUp)
        // The launch `advertise` goes through, with no beacons yet: what it reports goes to
        // the trace (each step), the progress (warnings) and the count of input nobody asked for.
        let report: (EmitterEvent) -> Void = { event in
            switch event {
            case let .step(text): trace?(text)
            case let .warning(text): progress(text)
            case let .ignored(what): unsolicited?(what)
            default: break
            }
        }
        let options = AdvertisingOptions(beacons: [], intervalUnits: intervalUnits, rotationPeriod: rotationPeriod)
        if way == .management, case let .kernel(index) = device {
            let management = try ManagementConnection.open(index: index, powerOn: bringUp)
            do {
                let adapter = management.client.adapter
                management.client.trace = trace
                // Recorded while on the air, so that the next run or `beacon-emit stop` can
                // remove what a killed run left; the takeover watch and the session as `advertise`'s.
                let session = try AdvertisingLaunch.startManaged(management, options: options, bringingUp: bringUp,
                                                                 follows: follows, started: .now,
                                                                 ledger: InstanceLedger(adapter: adapter),
                                                                 report: report)
                return BeaconSetsLaunch(sets: SupervisedSets(instances: session, device: adapter),
                                        summary: "\(adapter): beacons as the kernel's advertising instances", access: .management,
                                        connection: nil, management: management)
            } catch {
                management.close()
                throw error
            }
        }
        let connection = try ControllerConnection.open(device, bringUp: bringUp, userChannel: way == .userChannel)
        do {
            connection.controller.trace = trace
            let advertiser = try Emitter(controller: connection.controller, ownsController: connection.ownsController,
                                         report: report).start(options: options)
            // Watched and put back after a reset, a Hardware Error, another program's change, a
            // link that closed (opened again as `advertise`'s is).
            let supervised = SupervisedSets(advertiser: advertiser, on: connection, userChannel: way == .userChannel,
                                            bringingUp: bringUp, follows: follows)
            return BeaconSetsLaunch(sets: supervised,
                                    summary: "\(connection.device): beacons on advertising sets through HCI commands",
                                    access: connection.sharedKernelIndex != nil ? way : nil,
                                    connection: connection, management: nil)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Closes the device (the sets' beacons are the caller's to remove first).
    public func close() {
        (sets as? SupervisedSets)?.close()
        connection?.close()
        management?.close()
    }
}
