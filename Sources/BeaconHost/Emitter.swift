// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What the emitter reports while it runs.
public enum EmitterEvent: Sendable {
    /// One step of the flow, for `--verbose`.
    case step(String)
    case controller(ControllerInfo)
    /// Advertising is on: the plan, time since start and command round trips so far.
    case advertising(AdvertisingPlan, elapsed: Duration, roundTrips: Int)
    /// Stopped, and whether advertising was left on (`--keep`).
    case stopped(reason: String, keptOn: Bool)
}

/// Runs the advertising flow in the foreground until a signal or the duration ends, then
/// disables advertising (unless asked to keep it).
public final class Emitter {
    let controller: HCIController
    let ownsController: Bool
    let report: (EmitterEvent) -> Void
    let started: ContinuousClock.Instant

    /// - Parameters:
    ///   - ownsController: true for H4 links (the controller is reset first); false for kernel adapters.
    ///   - started: when the process started, for the time-to-advertising figure.
    public init(controller: HCIController, ownsController: Bool, started: ContinuousClock.Instant = .now,
                report: @escaping (EmitterEvent) -> Void) {
        self.controller = controller
        self.ownsController = ownsController
        self.started = started
        self.report = report
    }

    /// Sets up the controller and starts advertising.
    /// - Throws: `HostError`; advertising is off again when it throws.
    public func start(options: AdvertisingOptions) throws(HostError) -> Advertiser {
        if ownsController {
            report(.step("reset the controller and enable LE events"))
            try ControllerInfo.initialize(controller)
        }
        report(.step("read the controller's address, version, supported commands and LE features"))
        let info = try ControllerInfo.read(from: controller, dataLength: false)
        report(.controller(info))
        let advertiser = Advertiser(controller: controller, options: options)
        advertiser.log = { [report] in report(.step($0)) }
        let plan = try advertiser.start(info: info)
        report(.advertising(plan, elapsed: started.duration(to: .now), roundTrips: controller.roundTrips))
        return advertiser
    }

    private func checkHealth() throws(HostError) {
        do {
            try controller.transport.checkHealth()
        } catch {
            throw .transport(error, device: controller.transport.name)
        }
    }

    /// Keeps advertising until `interrupt` is readable or `duration` passes, rotating beacons
    /// when there are more than sets; then disables advertising unless `keep`.
    /// - Throws: `HostError` when the controller or the link fails; advertising is disabled
    ///   first where the link still allows it.
    public func run(_ advertiser: Advertiser, duration: Duration?, keep: Bool, interrupt: Int32?) throws(HostError) {
        let end = duration.map { ContinuousClock.now + $0 }
        var nextRotation = ContinuousClock.now + advertiser.options.rotationPeriod
        var nextHealthCheck = ContinuousClock.now + .seconds(1)
        var reason = "duration elapsed"
        do {
            while true {
                let now = ContinuousClock.now
                if let end, now >= end { break }
                var wait = max(.zero, now.duration(to: nextHealthCheck))
                if let end { wait = min(wait, now.duration(to: end)) }
                if advertiser.plan?.rotating == true { wait = min(wait, max(.zero, now.duration(to: nextRotation))) }
                let event = try controller.nextEvent(timeout: wait, interrupt: interrupt)
                if event == nil, let interrupt, PollProbe.readable(interrupt) {
                    reason = "received \(SignalWatcher.received ?? "a signal")"
                    break
                }
                if ContinuousClock.now >= nextHealthCheck {
                    try checkHealth()
                    nextHealthCheck = ContinuousClock.now + .seconds(1)
                }
                if advertiser.plan?.rotating == true, ContinuousClock.now >= nextRotation {
                    try advertiser.rotate()
                    nextRotation = ContinuousClock.now + advertiser.options.rotationPeriod
                }
            }
        } catch {
            try? advertiser.stop()
            throw error
        }
        if keep {
            report(.stopped(reason: reason, keptOn: true))
        } else {
            try advertiser.stop()
            report(.stopped(reason: reason, keptOn: false))
        }
    }

}
