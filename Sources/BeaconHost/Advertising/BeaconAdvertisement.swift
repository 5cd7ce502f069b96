// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons on the air from a Swift program, the way `beacon-emit advertise` puts them there:
/// the way in chosen (the kernel's advertising instances, or HCI advertising sets), the beacons
/// started, changed in place while they advertise, kept on the air through resets, takeovers
/// and an adapter that comes back, and taken off when done.
///
///     let beacons = try BeaconAdvertisement.start(.init(device: .kernel(index: 0), options: options))
///     try beacons.update(0, to: .iBeacon(newer))
///     try beacons.run(duration: .seconds(10))   // supervised; off the air at the end
///
/// The device `.virtual` needs the private network namespace the command enters first
/// (`VirtualController.enterPrivateNamespace`); a program passes a TCP controller instead.
public final class BeaconAdvertisement {
    /// Where and how to advertise.
    public struct Configuration: Sendable {
        public var device: DeviceSpecification
        /// How a kernel adapter is reached (`--access`).
        public var access: KernelAccess
        /// Bring a kernel adapter that is down up first, and again when it comes back (`--up`).
        public var bringUp: Bool
        public var options: AdvertisingOptions
        /// Record the kernel's instances while they are ours, so that a later run or
        /// `beacon-emit stop --recorded` removes what a killed run left (`InstanceLedger`).
        public var recordsInstances: Bool

        public init(device: DeviceSpecification = .kernel(index: nil), access: KernelAccess = .automatic,
                    bringUp: Bool = false, options: AdvertisingOptions, recordsInstances: Bool = true) {
            self.device = device
            self.access = access
            self.bringUp = bringUp
            self.options = options
            self.recordsInstances = recordsInstances
        }
    }

    /// The session that keeps the beacons on the air.
    package var session: any AdvertisingSession {
        switch kind {
        case let .managed(managed): managed
        case let .hci(hci): hci
        }
    }
    /// The beacons, changed as transactions (`LiveBeacons`).
    package let liveBeacons: LiveBeacons
    /// The beacons, changed as `LiveAdvertising` says: each change on the air in place, or not at all.
    public var live: any LiveAdvertising { liveBeacons }
    /// The device in messages: `hci0`, `tcp:127.0.0.1:6402`.
    public let device: String
    /// The HCI link, where the beacons go through HCI commands (nil through the management API).
    package let connection: ControllerConnection?
    /// The management client, where the beacons are the kernel's instances.
    package let management: ManagementConnection?
    /// The way into a kernel adapter taken (`.management`, `.raw`, `.userChannel`); nil for a
    /// controller of its own (H4, virtual).
    public let access: KernelAccess?
    /// Where the kernel's instances are recorded while ours (nil through HCI commands).
    private let ledger: InstanceLedger?
    /// The session by its kind.
    private let kind: Kind
    private enum Kind {
        case managed(ManagedSession)
        case hci(HCISession)
    }
    private var finished = false

    private init(session: Kind, device: String, access: KernelAccess?,
                 connection: ControllerConnection?, management: ManagementConnection?, ledger: InstanceLedger?) {
        kind = session
        switch session {
        case let .managed(managed): liveBeacons = managed.live
        case let .hci(hci): liveBeacons = hci.live
        }
        self.device = device
        self.access = access
        self.connection = connection
        self.management = management
        self.ledger = ledger
    }

    deinit { close() }

    /// Opens the device and puts the beacons on the air.
    /// - Parameters:
    ///   - opened: called with the link once it is open, before anything is sent (to trace it).
    ///   - report: what happens, as `advertise --json` reports it.
    /// - Throws: `HostError`; nothing is left on the air or open when it throws.
    public static func start(_ configuration: Configuration, started: ContinuousClock.Instant = .now,
                             report: @escaping (EmitterEvent) -> Void = { _ in }) throws(HostError) -> BeaconAdvertisement {
        try start(configuration, started: started, opened: { _, _ in }, report: report)
    }

    /// `start`, telling `opened` the connection before the beacons go on the air (the CLI's
    /// control server, the service's notifier).
    package static func start(_ configuration: Configuration, started: ContinuousClock.Instant = .now,
                              opened: (ControllerConnection?, ManagementConnection?) -> Void,
                              report: @escaping (EmitterEvent) -> Void = { _ in }) throws(HostError) -> BeaconAdvertisement {
        var configuration = configuration
        let follows = configuration.device.adapterAddress
        configuration.device = try configuration.device.resolved()
        let options = configuration.options
        let access = try AdvertisingLaunch.resolve(configuration.access, device: configuration.device,
                                                   bringingUp: configuration.bringUp, options: options)
        if access == .management, case let .kernel(index) = configuration.device {
            let management = try ManagementConnection.open(index: index, powerOn: configuration.bringUp)
            opened(nil, management)
            let adapter = management.client.adapter
            let ledger = configuration.recordsInstances ? InstanceLedger(adapter: adapter) : nil
            do {
                let session = try AdvertisingLaunch.startManaged(management, options: options,
                                                                 bringingUp: configuration.bringUp, follows: follows,
                                                                 started: started,
                                                                 ledger: ledger, report: report)
                return BeaconAdvertisement(session: .managed(session), device: adapter, access: .management,
                                           connection: nil, management: management, ledger: ledger)
            } catch {
                management.close()
                throw error
            }
        }
        let userChannel = access == .userChannel
        let connection = try ControllerConnection.open(configuration.device, bringUp: configuration.bringUp,
                                                       userChannel: userChannel)
        opened(connection, nil)
        do {
            let emitter = Emitter(controller: connection.controller, ownsController: connection.ownsController,
                                  started: started, report: report)
            let advertiser = try emitter.start(options: options)
            let session = AdvertisingLaunch.supervise(advertiser, on: connection, userChannel: userChannel,
                                                      bringingUp: configuration.bringUp, follows: follows, report: report)
            return BeaconAdvertisement(session: .hci(session), device: connection.device.description,
                                       access: connection.sharedKernelIndex != nil ? access : nil,
                                       connection: connection, management: nil, ledger: nil)
        } catch {
            connection.close()
            throw error
        }
    }

    /// The beacons advertised now, in order, each with its id (the first given is 1).
    public var running: [RunningBeacon] { liveBeacons.running }

    /// The beacons advertised now, in order.
    public var beacons: [Beacon] { liveBeacons.beacons }

    /// How many beacons can be on the air at once with a set (or instance) of their own: the
    /// controller's sets, legacy advertising's one, the kernel's free instances. Asked of the
    /// controller or kernel where not known yet (nothing goes on the air).
    public func slotCapacity() throws(HostError) -> Int {
        switch kind {
        case let .managed(managed): try managed.advertiser.slotCapacity()
        case let .hci(hci): try hci.advertiser.slotCapacity()
        }
    }

    /// Whether each beacon can have an address of its own here (HCI sets: yes; through the
    /// management API the kernel chooses).
    public var makesAddresses: Bool { management == nil }

    /// Whether each beacon can have a TX power of its own here: extended advertising's sets, or
    /// a kernel that sets an instance's TX power.
    public var setsTXPowerPerBeacon: Bool {
        switch kind {
        case let .managed(managed):
            managed.advertiser.features.map { $0.supportedFlags.contains(.canSetTxPower) && $0.acceptsIntervals } ?? false
        case let .hci(hci): hci.advertiser.plan?.mode == .extended
        }
    }

    /// The beacons as a scenario's stage changes them (started with none, added and removed one
    /// at a time, the last one too), kept on the air by the same session and the same kind of
    /// run as `advertise`'s: one launch for `advertise`, `run` and the library. The caller's
    /// loop turns it (`EmitterRun.turn`).
    package func stageRun() -> EmitterRun {
        EmitterRun(stage: session, device: device)
    }

    /// What the beacons are on, for a progress line: "hci0: beacons as the kernel's advertising instances".
    public var summary: String {
        management != nil ? "\(device): beacons as the kernel's advertising instances"
            : "\(device): beacons on advertising sets through HCI commands"
    }

    /// How the beacons are on the air (sets or instances, turns), nil once stopped.
    public var plan: AdvertisingPlan? { session.plan }

    /// Changes beacon `id` in place (new data on its set or instance, no gap on the air); with
    /// `parameters`, its own interval and TX power too (a short gap for it alone).
    public func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters? = nil) throws(HostError) {
        try liveBeacons.update(id, to: beacon, parameters: parameters)
    }

    /// Adds a beacon while advertising, with its own interval and TX power if given.
    /// - Returns: its id.
    @discardableResult
    public func add(_ beacon: Beacon, parameters: BeaconParameters = .run) throws(HostError) -> BeaconID {
        try liveBeacons.add(beacon, parameters: parameters)
    }

    /// Takes beacon `id` off the air (not the last one: `stop` is how advertising stops).
    public func remove(_ id: BeaconID) throws(HostError) { try liveBeacons.remove(id) }

    /// Keeps the beacons on the air until `duration` passes or `interrupt` is readable
    /// (`SignalWatcher.install()` for SIGINT and SIGTERM), putting them back after whatever
    /// knocks them off; then takes them off unless `keep` (`Emitter.run`).
    /// - Parameter sources: served on the same loop (a control socket, moving telemetry).
    public func run(duration: Duration? = nil, keep: Bool = false, interrupt: Int32? = nil, failFast: Bool = false,
                    sources: [any RunLoopSource] = [], report: @escaping (EmitterEvent) -> Void = { _ in })
        throws(HostError) {
        defer { close() }
        try Emitter.run(session, duration: duration, keep: keep, interrupt: interrupt, failFast: failFast,
                        device: device, sources: sources, report: report)
        finish(kept: keep)
    }

    /// `run` as a source of a loop that serves other sessions too (the library's, `LibraryLoop`):
    /// the beacons stay on the air until `stop` is readable, then come off; `ended` is called
    /// once on the loop's thread, the device closed, with how the run ended.
    package func runSource(stop: Int32, sources: [any RunLoopSource], report: @escaping (EmitterEvent) -> Void,
                           ended: @escaping (Result<Void, HostError>) -> Void) -> EmitterRun.Source {
        let run = EmitterRun(session, duration: nil, keep: false, interrupt: nil, failFast: false, device: device,
                             sources: sources, report: report)
        return EmitterRun.Source(run, stop: stop) { [self] outcome in
            if case .success = outcome { finish(kept: false) }
            close()
            ended(outcome)
        }
    }

    /// Takes the beacons off the air now and closes the device.
    public func stop() throws(HostError) {
        defer { close() }
        try session.stop()
        finish(kept: false)
    }

    /// Closes the device, leaving on the air whatever is still there.
    public func close() {
        connection?.close()
        management?.close()
    }

    /// After a run that ended as asked: the record goes once nothing of ours is left (an
    /// instance the kernel would not remove while the adapter was down stays recorded, for
    /// `beacon-emit stop`). After a failure the record stays, for the next run to clean up.
    private func finish(kept: Bool) {
        guard !finished else { return }
        finished = true
        if let ledger, case let .managed(managed) = kind {
            ledger.finish(remaining: managed.advertiser.ours.sorted(), kept: kept)
        }
    }
}
