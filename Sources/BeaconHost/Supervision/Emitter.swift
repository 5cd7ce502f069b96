// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

extension RunLoopSource {
    public func serve(ready: [Int32]) { serve() }
    public var due: ContinuousClock.Instant? { nil }
    public func takeDisruption() -> Disruption? { nil }
    public var servesWhileCommandWaits: Bool { false }
    public func serveWhileCommandWaits(ready: [Int32]) { serve(ready: ready) }
    public var hasEnded: Bool { false }
}

/// Runs the advertising flow in the foreground until a signal or the duration ends, then
/// disables advertising (unless asked to keep it).
package final class Emitter {
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
        controller.reportUnsolicited = { report(.ignored($0)) }
    }

    /// Sets up the controller and starts advertising, asking the controller only what the flow
    /// needs: an owned controller is reset (event masks stay at their defaults: advertising
    /// needs no LE events) and not disabled again; capabilities are read (nothing with
    /// `--legacy`) as `AdvertisingCapabilities.read` describes; the public address, which only
    /// the report shows, is read after advertising is on.
    /// With no beacons in `options` (they come later: a scenario's stage), the number of sets is
    /// read whatever comes, and the public address is not (nothing shows it).
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
                         + (options.beacons.count != 1 ? ", and the number of advertising sets" : "")))
            capabilities = try AdvertisingCapabilities.read(from: controller, for: options)
            report(.capabilities(capabilities))
        }
        let options = options.givingRotatingIdentifiersAddresses(sets: capabilities.supportsExtendedAdvertising
                                                                 ? capabilities.numberOfAdvertisingSets ?? 1 : 1)
        let advertiser = Advertiser(controller: controller, options: options, sharedWithKernel: !ownsController)
        advertiser.log = { [report] in report(.step($0)) }
        var plan = try advertiser.start(capabilities: capabilities, controllerWasReset: ownsController)
        let elapsed = started.duration(to: .now)
        let roundTrips = controller.roundTrips
        if plan.address == nil && !options.beacons.isEmpty {
            report(.step("read the controller's public address (Read BD_ADDR)"))
            do {
                plan.address = try controller.send(ReadBDAddr()).address
            } catch {
                try? advertiser.stop()
                throw error
            }
        }
        report(.advertising(plan, elapsed: elapsed, roundTrips: roundTrips, ownAddresses: advertiser.running.map(\.ownAddress)))
        return advertiser
    }

    /// Starts advertising through the kernel's management interface (`ManagedAdvertiser`).
    /// - Throws: `HostError`; nothing stays added when it throws.
    /// - Parameter prepare: called with the advertiser before it adds anything (to record its instances).
    public static func startManaged(client: MgmtClient, options: AdvertisingOptions,
                                    started: ContinuousClock.Instant = .now,
                                    prepare: (ManagedAdvertiser) -> Void = { _ in },
                                    report: @escaping (EmitterEvent) -> Void) throws(HostError) -> ManagedAdvertiser {
        let advertiser = ManagedAdvertiser(client: client, options: options)
        advertiser.log = { report(.step($0)) }
        advertiser.warn = { report(.warning($0)) }
        prepare(advertiser)
        let plan = try advertiser.start()
        report(.advertising(plan, elapsed: started.duration(to: .now), roundTrips: client.roundTrips,
                            ownAddresses: advertiser.running.map(\.ownAddress)))
        return advertiser
    }

    /// Keeps an HCI advertiser running (see `run(_:duration:keep:interrupt:failFast:device:report:)`)
    /// on a link that ends the run if it closes.
    public func run(_ advertiser: Advertiser, duration: Duration?, keep: Bool, interrupt: Int32?) throws(HostError) {
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: ownsController, reconnect: nil)
        try Self.run(session, duration: duration, keep: keep, interrupt: interrupt, report: report)
    }

    /// How long after a disruption (or the adapter coming back) the beacons are put back: what
    /// knocked them off (a reset, the kernel powering on) is then done.
    public static let settleTime = Duration.milliseconds(100)

    /// Keeps the beacons on the air until `interrupt` is readable or `duration` passes,
    /// rotating beacons when there are more than sets; then takes them off unless `keep`.
    ///
    /// Whatever knocks them off (a controller reset, a hardware error, another program
    /// removing them, the adapter powered off or gone, a link closing) is reported, waited
    /// out while the adapter is unusable, and the same beacons are put back `settleTime` after
    /// it is usable again; a failed attempt is retried with a growing delay (up to 5 s).
    /// - Parameter failFast: end with the error instead of waiting when the adapter itself
    ///   becomes unusable (down, powered off, gone, link closed).
    /// - Throws: `HostError` when the controller or the link fails beyond recovery; the
    ///   beacons are taken off first where the link still allows it.
    /// - Parameter sources: each served whenever its descriptor is readable (requests that
    ///   change the beacons, moving telemetry); a signal still ends the run.
    public static func run(_ session: AdvertisingSession, duration: Duration?, keep: Bool, interrupt: Int32?,
                           failFast: Bool = false, device: String = "the controller", sources: [any RunLoopSource] = [],
                           report: @escaping (EmitterEvent) -> Void) throws(HostError) {
        let run = EmitterRun(session, duration: duration, keep: keep, interrupt: interrupt, failFast: failFast,
                             device: device, sources: sources, report: report)
        defer { run.close() }
        var reason = "duration elapsed"
        do throws(HostError) {
            while try run.turn() {
                if try run.loop.wait(beside: session.pollDescriptors, until: run.deadline) {
                    reason = "received \(SignalWatcher.received ?? "a signal")"
                    break
                }
            }
        } catch {
            run.abandon()
            throw error
        }
        try run.finish(reason: reason)
    }
}
