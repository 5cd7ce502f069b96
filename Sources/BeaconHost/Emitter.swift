// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What the emitter reports while it runs.
public enum EmitterEvent: Sendable {
    /// One step of the flow, for `--verbose`.
    case step(String)
    /// What the controller offers, when the flow had to ask (not with `--legacy`).
    case capabilities(AdvertisingCapabilities)
    /// Advertising is on: the plan (with the address advertised from), time from start to the
    /// enable's completion and the command round trips up to it.
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

    /// Sets up the controller and starts advertising, asking the controller only what the flow
    /// needs: an owned controller is reset (event masks stay at their defaults: advertising
    /// needs no LE events) and not disabled again; capabilities are read (nothing with
    /// `--legacy`) as `AdvertisingCapabilities.read` describes; the public address, which only
    /// the report shows, is read after advertising is on.
    /// - Throws: `HostError`; advertising is off again when it throws.
    public func start(options: AdvertisingOptions) throws(HostError) -> Advertiser {
        if ownsController {
            report(.step("reset the controller (HCI Reset)"))
            try controller.send(Reset())
        }
        let capabilities: AdvertisingCapabilities
        if options.mode == .legacy {
            capabilities = AdvertisingCapabilities(supportsExtendedAdvertising: false)  // nothing to ask
        } else {
            report(.step("read the supported commands and LE features"
                         + (options.beacons.count > 1 ? ", and the number of advertising sets" : "")))
            capabilities = try AdvertisingCapabilities.read(from: controller, for: options)
            report(.capabilities(capabilities))
        }
        let advertiser = Advertiser(controller: controller, options: options)
        advertiser.log = { [report] in report(.step($0)) }
        var plan = try advertiser.start(capabilities: capabilities, controllerWasReset: ownsController)
        let elapsed = started.duration(to: .now)
        let roundTrips = controller.roundTrips
        if plan.address == nil {
            report(.step("read the controller's public address (Read BD_ADDR)"))
            do {
                plan.address = try controller.send(ReadBDAddr()).address
            } catch {
                try? advertiser.stop()
                throw error
            }
        }
        report(.advertising(plan, elapsed: elapsed, roundTrips: roundTrips))
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
