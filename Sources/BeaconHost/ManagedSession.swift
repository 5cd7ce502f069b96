// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons kept on the air as advertising instances of the kernel's management interface,
/// watched through its events (an instance removed, the adapter powered off and on, removed
/// and added, a controller error) and, where the process may open one, a raw HCI socket that
/// shows a controller reset under the kernel (`hciconfig reset`), which no management event
/// reports and after which the kernel still counts its instances as on the air.
public final class ManagedSession: AdvertisingSession {
    public let advertiser: ManagedAdvertiser
    private var client: MgmtClient { advertiser.client }
    /// Opens the raw socket that watches for resets; nil where none can be opened.
    private let openMonitor: () -> HCIController?
    private var monitor: HCIController?
    private var powered = true
    private var present = true
    private var pending: [SessionSignal] = []
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?

    /// - Parameter openMonitor: opens a raw HCI socket on the same adapter (nil when it cannot).
    public init(advertiser: ManagedAdvertiser, openMonitor: @escaping () -> HCIController?) {
        self.advertiser = advertiser
        self.openMonitor = openMonitor
        attachMonitor()
    }

    public var plan: AdvertisingPlan? { advertiser.plan }
    public var rotationPeriod: Duration { advertiser.options.rotationPeriod }

    private func attachMonitor() {
        monitor = openMonitor()
        monitor?.observer = { [weak self] packet in
            guard let self, self.powered, case let .commandComplete(complete) = packet,
                  complete.opcode == .reset, complete.status == .success else { return }
            self.pending.append(.disrupted(.controllerReset))
        }
    }

    public func watch(timeout: Duration, interrupt: Int32?) throws(HostError) -> SessionSignal {
        if !pending.isEmpty { return pending.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        var wait = timeout
        if let monitorDescriptor = monitor?.transport.pollDescriptor, let control = client.transport.pollDescriptor {
            // Both sockets (and the signal pipe) at once; then each is read without waiting.
            let ready = PollProbe.waitAny([control, monitorDescriptor] + (interrupt.map { [$0] } ?? []), until: deadline)
            if ready.count > 2, ready[2] { return .interrupted }
            wait = .zero
        }
        if let event = try client.nextEvent(timeout: wait, interrupt: interrupt) { handle(event) }
        if let monitor {
            do {
                _ = try monitor.nextEvent(timeout: .zero)
            } catch let .hardwareError(code) {
                pending.append(.disrupted(.hardwareError(code: code)))
            } catch {
                self.monitor = nil  // the adapter went away: the management events say so
            }
        }
        if !pending.isEmpty { return pending.removeFirst() }
        if let interrupt, PollProbe.readable(interrupt) { return .interrupted }
        return .quiet
    }

    /// Turns a management event about the adapter into what the run loop acts on.
    func handle(_ event: MgmtEvent) {
        switch event {
        case let .advertisingRemoved(instance) where advertiser.plan?.handles.contains(instance) == true:
            if powered { pending.append(.disrupted(.instanceRemoved(instance))) }
        case let .newSettings(settings):
            let nowPowered = settings.contains(.powered)
            if powered && !nowPowered { pending.append(.disrupted(.poweredOff)) }
            if !powered && nowPowered { pending.append(.adapterBack) }
            powered = nowPowered
        case .indexRemoved:
            present = false
            powered = false
            monitor = nil
            pending.append(.disrupted(.adapterRemoved))
        case .indexAdded:
            present = true
            let settings = try? client.send(ReadControllerInformation()).currentSettings
            powered = settings?.contains(.powered) ?? false
            if powered { pending.append(.adapterBack) }
        case let .controllerError(code):
            pending.append(.disrupted(.hardwareError(code: code)))
        default:
            break
        }
    }

    public func availability() -> AdapterAvailability {
        present ? (powered ? .usable : .down) : .gone
    }

    public func restore() throws(HostError) {
        if monitor == nil { attachMonitor() }
        try advertiser.restore()
    }

    public func rotate() throws(HostError) { try advertiser.rotate() }

    public func stop() throws(HostError) {
        monitor?.transport.close()
        guard present else { return }
        try advertiser.stop()
    }
}
