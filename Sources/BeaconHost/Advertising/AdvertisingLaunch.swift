// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Starts supervised advertising on a device through the chosen way in, so that the CLI
/// (and other Swift code) only parses, calls and prints.
package enum AdvertisingLaunch {
    /// The way in for `device`: `--access` applies to kernel adapters; `auto` takes the
    /// management API where the kernel offers advertising instances through it and LE is on
    /// (or `bringingUp` switches it on), raw HCI otherwise (an adapter only brought up with
    /// `hciconfig`, where no one switched LE on for the management API), and raw HCI for
    /// `options` that choose HCI commands or an address (`--legacy`, `--extended`,
    /// `--random-address`, a beacon's own `address`), which only HCI commands can honour.
    /// - Throws: `HostError.unsupported` for a way in that does not go with the device.
    public static func resolve(_ access: KernelAccess, device: DeviceSpecification, bringingUp: Bool = false,
                               options: AdvertisingOptions? = nil) throws(HostError) -> KernelAccess {
        guard !device.ownsController else {
            guard access == .automatic || access == .raw else {
                throw .refused(Refusal(.kernelAccess(access), .notKernelAdapter(device: "\(device)")))
            }
            return .raw
        }
        guard access == .automatic else { return access }
        if let options, options.needsHCICommands { return .raw }
        guard case let .kernel(index) = try device.resolved() else { return .raw }
        return ManagementConnection.canAdvertise(index: index, bringingUp: bringingUp) ? .management : .raw
    }

    /// Starts the beacons as management instances on adapter `index` and returns the session
    /// that keeps them there, watching a raw socket for resets where one opens.
    /// - Parameter bringingUp: `--up`, applied again to an adapter that goes away and comes back.
    /// - Throws: `HostError`; nothing stays added when it throws.
    /// - Parameter ledger: where the instances are recorded while they are ours (nil: nowhere).
    ///   First, what runs that are over left on the adapter (recorded there, not `--keep`) is removed.
    /// - Parameter follows: the adapter's address, when it was named by it: followed to a new number.
    public static func startManaged(_ connection: ManagementConnection, options: AdvertisingOptions,
                                    bringingUp: Bool = false, follows: BluetoothAddress? = nil,
                                    started: ContinuousClock.Instant,
                                    ledger: InstanceLedger? = nil,
                                    report: @escaping (EmitterEvent) -> Void) throws(HostError) -> ManagedSession {
        connection.client.reportUnsolicited = { report(.ignored($0)) }
        if let ledger, let what = AdvertisingShutdown.removeWhatEndedRunsLeft(connection.client, directory: ledger.directory) {
            report(.warning(what))
        }
        // The watch opens first, so that it learns our socket from our first command and sees
        // any takeover from the moment an instance is ours.
        let watch = openTakeoverWatch(for: connection.client, report: report)
        let advertiser: ManagedAdvertiser
        do {
            advertiser = try Emitter.startManaged(client: connection.client, options: options, started: started,
                                                  prepare: { advertiser in
                // Recorded as each instance is added, before the run says it advertises.
                ledger?.follow(advertiser) { report(.warning($0)) }
            }, report: report)
        } catch {
            watch?.close()
            throw error
        }
        let session = ManagedSession(advertiser: advertiser, bringsUpReturningAdapter: bringingUp, watch: watch,
                                     follows: follows) { index in
            (try? KernelSocketTransport.open(index: Int(index))).map { HCIController(transport: $0, sharedWithKernel: true) }
        }
        session.log = { report(.step($0)) }
        session.notice = { report(.warning($0)) }
        session.moved = { ledger?.move(to: $0) }
        return session
    }

    /// Opens the monitor channel that shows other programs writing our instances, and tells
    /// `client` to show it our commands; where it cannot open (no CAP_NET_RAW), says once what
    /// is then not watched.
    static func openTakeoverWatch(for client: MgmtClient, report: @escaping (EmitterEvent) -> Void) -> TakeoverWatch? {
        do {
            let watch = TakeoverWatch(transport: try KernelSocketTransport.openMonitor(), index: client.index,
                                      process: ProcessName.current)
            watch.reportUnsolicited = { report(.ignored($0)) }
            client.sent = { [weak watch] packet in watch?.sent(packet) }
            return watch
        } catch {
            var why = error.description
            if case let .kernel(call, code, _, _) = error { why = "\(call): \(SystemCallError.message(code))" }
            report(.warning("another program that writes one of our advertising instances (bluetoothd, btmgmt) is not "
                            + "noticed: the kernel's monitor channel did not open (\(why)); with CAP_NET_RAW it is"))
            return nil
        }
    }

    /// Wraps an HCI advertiser started on `connection` in the session that keeps it on the
    /// air, reopening the link where that makes sense (`reconnection`).
    /// - Parameter bringingUp: `--up`, applied again to a kernel adapter that goes away and comes back.
    /// - Parameter follows: the kernel adapter's address, when it was named by it: reopened where it is.
    public static func supervise(_ advertiser: Advertiser, on connection: ControllerConnection, userChannel: Bool,
                                 bringingUp: Bool = false, follows: BluetoothAddress? = nil,
                                 report: @escaping (EmitterEvent) -> Void) -> HCISession {
        let session = self.session(advertiser, on: connection, userChannel: userChannel, bringingUp: bringingUp,
                                   follows: follows)
        session.log = { report(.step($0)) }
        session.notice = { report(.warning($0)) }
        return session
    }

    /// The session that keeps HCI advertising on `connection` on the air, for `advertise`'s
    /// beacons and a scenario's sets alike.
    static func session(_ advertiser: Advertiser, on connection: ControllerConnection, userChannel: Bool,
                        bringingUp: Bool, follows: BluetoothAddress?) -> HCISession {
        HCISession(advertiser: advertiser, kernelIndex: connection.sharedKernelIndex,
                   ownsController: connection.ownsController, bringsUpReturningAdapter: bringingUp, follows: follows,
                   reconnect: reconnection(for: connection, userChannel: userChannel, follows: follows))
    }

    /// How a closed link to `connection`'s controller is opened again: a raw socket on a kernel
    /// adapter that went away and came back (where it is now, when it is `follows`), a TCP
    /// bridge or serial port, a user channel. Nil for the private virtual controller, which
    /// ends with its link.
    static func reconnection(for connection: ControllerConnection, userChannel: Bool,
                             follows: BluetoothAddress?) -> (() throws(HostError) -> HCIController)? {
        let device = connection.device
        let trace = connection.controller.trace
        if let index = connection.sharedKernelIndex {
            return { () throws(HostError) -> HCIController in
                let now = follows.flatMap { KernelSocketTransport.index(of: $0) } ?? index
                return HCIController(transport: try KernelSocketTransport.open(index: now), sharedWithKernel: true)
            }
        }
        guard connection.virtualController == nil else { return nil }
        return { () throws(HostError) -> HCIController in
            let controller = try ControllerConnection.open(device, userChannel: userChannel).controller
            controller.trace = trace
            return controller
        }
    }
}
