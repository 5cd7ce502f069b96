// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// The advertising core, as `ManagedSession` keeps it on the air: `advertise`'s beacons or a
/// scenario's coming and going.
extension ManagedAdvertiser {
    /// How long each beacon stays on the air when they take turns.
    public var rotationPeriod: Duration { options.rotationPeriod }
    /// Whether `instance` carries a beacon (losing it takes the beacon off the air).
    public func carriesBeacon(_ instance: UInt8) -> Bool { plan?.handles.contains(instance) == true }
}

/// Beacons kept on the air as advertising instances of the kernel's management interface,
/// watched through its events (an instance removed, the adapter powered off and on, removed
/// and added, a controller error) and, where the process may open one, a raw HCI socket that
/// shows a controller reset under the kernel (`hciconfig reset`), which no management event
/// reports and after which the kernel still counts its instances as on the air; and, where
/// the monitor channel opens, other programs writing our instances (`TakeoverWatch`): a
/// taken-over instance is forgotten, never removed, and its beacon moves to a free one.
package final class ManagedSession: AdvertisingSession {
    public let advertiser: ManagedAdvertiser
    private var client: MgmtClient { advertiser.client }
    /// Opens the raw socket on adapter N that watches for resets; nil where none can be opened.
    private let openMonitor: (UInt16) -> HCIController?
    /// The adapter's public address, when it was named by it (`--device AA:BB:...`): an adapter
    /// that comes back under another number is followed there, and another adapter that takes
    /// its number is not ours.
    private let follows: BluetoothAddress?
    /// Told the adapter's new name when it is followed to another number (the instance record moves).
    public var moved: ((String) -> Void)?
    /// What the user should see (the adapter followed to its new number).
    public var notice: ((String) -> Void)?
    private var monitor: HCIController?
    /// Watches other programs' management commands (nil where the monitor channel did not open).
    public private(set) var watch: TakeoverWatch?
    private var powered = true
    private var present = true
    private var pending: [SessionSignal] = []
    public private(set) var disruptionsSeen: (count: Int, last: Disruption?) = (0, nil)
    /// `--up`: an adapter that comes back after going away (unplugged) starts as the kernel
    /// makes it, powered off; it is switched on as the first one was. One that someone powers
    /// off is left off.
    private let bringsUpReturningAdapter: Bool
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?

    /// - Parameters:
    ///   - openMonitor: opens a raw HCI socket on the same adapter (nil when it cannot).
    ///   - bringsUpReturningAdapter: `--up`: LE and power switched on for an adapter that comes back.
    ///   - watch: the takeover watch, opened before the advertiser added anything.
    ///   - follows: the adapter's address, when it was named by it.
    public init(advertiser: ManagedAdvertiser, bringsUpReturningAdapter: Bool = false, watch: TakeoverWatch? = nil,
                follows: BluetoothAddress? = nil, openMonitor: @escaping (UInt16) -> HCIController?) {
        self.advertiser = advertiser
        self.bringsUpReturningAdapter = bringsUpReturningAdapter
        self.openMonitor = openMonitor
        self.follows = follows
        self.watch = watch
        attachMonitor()
    }

    public var plan: AdvertisingPlan? { advertiser.plan }
    public var rotationPeriod: Duration { advertiser.rotationPeriod }

    public func waitForAnswers(in loop: (any CommandWaitLoop)?) {
        client.loop = loop
    }

    private func attachMonitor() {
        monitor = openMonitor(client.index)
        monitor?.observer = { [weak self] packet in
            guard let self, self.powered, case let .commandComplete(complete) = packet,
                  complete.opcode == .reset, complete.status == .success else { return }
            self.disrupted(.controllerReset)
        }
    }

    private func disrupted(_ disruption: Disruption) {
        pending.append(.disrupted(disruption))
        disruptionsSeen = (disruptionsSeen.count + 1, disruption)
    }

    public func takeIn() throws(HostError) -> SessionSignal {
        if !pending.isEmpty { return pending.removeFirst() }
        try collect()
        return pending.isEmpty ? .quiet : pending.removeFirst()
    }

    /// Events that a command's wait kept (the kernel's Controller Error among them) and what
    /// the reset watcher has, taken in without waiting.
    public func catchUp(after failure: HostError) {
        try? collect()
    }

    /// The sockets whose input the session reads: the management socket, the reset watcher's
    /// raw socket and the takeover watch, where open.
    public var pollDescriptors: [Int32] {
        [client.transport.pollDescriptor, monitor?.transport.pollDescriptor, watch?.pollDescriptor].compactMap { $0 }
    }

    /// Reads what has arrived on every socket, without waiting, and turns it into `pending` signals.
    private func collect() throws(HostError) {
        while let event = try client.nextEvent(timeout: .zero) { handle(event) }
        checkTakeovers()
        if let monitor {
            do {
                _ = try monitor.nextEvent(timeout: .zero)
            } catch let .hardwareError(code) {
                disrupted(.hardwareError(code: code))
            } catch {
                self.monitor = nil  // the adapter went away: the management events say so
            }
        }
    }

    /// Reads the takeover watch: each instance of ours another program wrote is forgotten
    /// (never removed) and reported; the restore moves its beacon. A watch whose socket fails
    /// is dropped (the adapter's events still say what the kernel removes).
    private func checkTakeovers() {
        guard let watch else { return }
        let takeovers: [InstanceTakeover]
        do {
            takeovers = try watch.drain(ours: advertiser.claimed)
        } catch {
            log?("the takeover watch failed (\(error)): other programs' writes to our instances are no longer watched")
            watch.close()
            self.watch = nil
            return
        }
        for takeover in takeovers {
            // A beacon on the air is knocked off; one already off (its instance removed) simply
            // goes back elsewhere at the restore.
            let onAir = advertiser.ours.contains(takeover.instance) && advertiser.carriesBeacon(takeover.instance)
            advertiser.takenOver(takeover.instance)
            if onAir {
                disrupted(.instanceTakenOver(takeover.instance, by: takeover.process))
            } else {
                log?("\(takeover): not ours to take back")
            }
        }
    }

    /// Turns a management event about the adapter into what the run loop acts on.
    func handle(_ event: MgmtEvent) {
        switch event {
        case let .advertisingRemoved(instance):
            // Removed because another program wrote the number (Add Advertising on it): a
            // takeover, which the watch can read by now (its command came first). Taken for a
            // plain removal, it was reported as one, and the beacon was not back within 15 s.
            if advertiser.ours.contains(instance) { checkTakeovers() }
            let beacon = advertiser.ours.contains(instance) && advertiser.carriesBeacon(instance)
            advertiser.removedByKernel(instance)
            if beacon && powered { disrupted(.instanceRemoved(instance)) }
        case let .newSettings(settings):
            let nowPowered = settings.contains(.powered)
            if powered && !nowPowered { disrupted(.poweredOff) }
            if !powered && nowPowered { pending.append(.adapterBack) }
            powered = nowPowered
        case .indexRemoved:
            advertiser.adapterGone()
            present = false
            powered = false
            monitor = nil
            disrupted(.adapterRemoved)
        case .indexAdded:
            if let follows, let now = KernelSocketTransport.address(index: Int(client.index)), now != follows {
                // Another adapter took the number: not ours. Ours is looked for by its address.
                log?("\(client.adapter) is back, but it is another adapter (\(now)): waiting for \(follows)")
                return
            }
            present = true
            var settings = try? client.send(ReadControllerInformation()).currentSettings
            if bringsUpReturningAdapter, let current = settings {
                if !current.contains(.lowEnergy) {
                    log?("the adapter is back: switch LE on (bringing it up was asked)")
                    settings = (try? client.send(SetLowEnergy(enabled: true)))?.currentSettings ?? settings
                }
                if !current.contains(.powered) {
                    log?("the adapter is back: power it on (bringing it up was asked)")
                    settings = (try? client.send(SetPowered(powered: true), timeout: MgmtClient.powerOnTimeout))?.currentSettings ?? settings
                }
            }
            powered = settings?.contains(.powered) ?? false
            if powered { pending.append(.adapterBack) }
        case let .controllerError(code):
            disrupted(.hardwareError(code: code))
        default:
            break
        }
    }

    public func availability() -> AdapterAvailability {
        if !present, let follows, let index = KernelSocketTransport.index(of: follows), index != Int(client.index) {
            follow(to: UInt16(index))
        }
        return present ? (powered ? .usable : .down) : .gone
    }

    /// The adapter named by its address is back under another number: the client, the reset
    /// watcher, the takeover watch and the instance record move there, and it is taken in as
    /// an adapter that came back.
    private func follow(to index: UInt16) {
        let old = client.adapter
        client.follow(to: index)
        watch?.index = index
        monitor = nil
        moved?(client.adapter)
        notice?("the adapter \(follows.map { "\($0)" } ?? "") is back as \(client.adapter) (was \(old)): the beacons follow it")
        handle(.indexAdded)
    }

    public func restore() throws(HostError) {
        if monitor == nil { attachMonitor() }
        try advertiser.restore()
    }

    public func rotate() throws(HostError) { try advertiser.rotate() }

    /// Removes our instances, and no other: what arrived since the last wait is read first, so
    /// an instance taken over or removed just before is not touched.
    public func stop() throws(HostError) {
        try? collect()
        closeWatchers()
        guard present else { return }
        try advertiser.stop()
    }

    /// Closes the reset watcher and the takeover watch (the beacons stay as they are).
    public func closeWatchers() {
        monitor?.transport.close()
        monitor = nil
        watch?.close()
        watch = nil
    }
}
