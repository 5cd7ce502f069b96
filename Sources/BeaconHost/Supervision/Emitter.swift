// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What the emitter reports while it runs.
public enum EmitterEvent: Sendable {
    /// One step of the flow, for `--verbose`.
    case step(String)
    /// What the controller offers, when the flow had to ask (not with `--legacy`).
    case capabilities(AdvertisingCapabilities)
    /// Input nobody asked for was passed over (`UnsolicitedInput`): the first of a kind, then
    /// every power of ten of it.
    case ignored(UnsolicitedInputReport)
    /// Advertising is on: the plan (with the address advertised from), time from start to the
    /// enable's completion, the command round trips up to it, and each beacon's address of its
    /// own (nil: the plan's), in order.
    case advertising(AdvertisingPlan, elapsed: Duration, roundTrips: Int, ownAddresses: [BluetoothAddress?])
    /// Stopping (a signal, the duration): sent before the beacons are taken off.
    case stopping(reason: String)
    /// Stopped, and whether advertising was left on (`--keep`).
    case stopped(reason: String, keptOn: Bool)
    /// The beacons are off the air: why. The emitter puts them back once the adapter is usable.
    case offAir(Disruption)
    /// The adapter is not usable (down, powered off, gone): the emitter waits for it.
    case waiting(AdapterAvailability)
    /// Putting the beacons back failed; the emitter tries again after `retryIn`.
    case restoreFailed(HostError, retryIn: Duration)
    /// The beacons are back on the air: what had knocked them off, how long they were off,
    /// and how long it took from the adapter being usable again.
    case restored(Disruption, gap: Duration, afterUsable: Duration)
    /// At exit, the beacons could not be taken off (the adapter is down, the kernel refused):
    /// what went wrong; `beacon-emit stop` can finish the job once the adapter is back.
    case leftBehind(HostError)
    /// Something the user asked for that cannot be honoured as asked, or is not watched.
    case warning(String)
    /// What the canary (`advertise --canary`) heard of the beacons, beyond the `not-heard`
    /// disruption that has them reprogrammed.
    case canary(CanaryEvent)
}

/// What the canary, a scanner on another device listening for the emitter's own beacons,
/// reports besides the `Disruption.notHeard` that has them reprogrammed once.
public enum CanaryEvent: Hashable, Sendable {
    /// Beacon `beacon` (its number, from 1) is still not heard, `for` since it last was: it
    /// was reprogrammed once already, and is reported again every `--canary-after`.
    case stillNotHeard(beacon: Int, for: Duration)
    /// Beacon `beacon` is heard again after `after` unheard.
    case heardAgain(beacon: Int, after: Duration)
    /// How long ago each beacon, in order, was last heard (nil: not yet), every few seconds
    /// (for the service's status).
    case lastHeard([Duration?])
}

/// Something the run loop serves between its waits (`--control`'s socket): one of
/// `descriptors` is readable when there is work, or `due` has passed, and `serve()` does it on
/// the loop's own thread (so nothing else talks to the controller at the same time), without
/// blocking.
public protocol RunLoopSource: AnyObject {
    func serve()
    /// Every descriptor the source has work on (the control socket: its listener and each
    /// client), in the loop's one epoll set beside the others'; none for a source with work
    /// on a schedule only (`due`).
    var descriptors: [Int32] { get }
    /// Does the work of `ready`, the source's descriptors that are readable. Default: `serve()`.
    func serve(ready: [Int32])
    /// When the source has work that no descriptor announces (a request held while the beacons
    /// were off the air): the loop calls `serve()` once this has passed. Nil: none.
    var due: ContinuousClock.Instant? { get }
    /// A disruption the source found (the canary: beacons not heard), handed to the supervisor
    /// after the source was served, as if the session had seen it. Nil: none.
    func takeDisruption() -> Disruption?
    /// Whether the source is served while a command waits for its answer (`EventLoop`):
    /// only one whose work there sends no command (a watchdog's ping; a control client's
    /// `list`, its changes held for the loop). Default: false, its input waits for the command.
    var servesWhileCommandWaits: Bool { get }
    /// Does the work of `ready` while a command waits for its answer. Default: `serve(ready:)`.
    func serveWhileCommandWaits(ready: [Int32])
    /// Whether the source is done for good: the loop serves it no more and lets it go (a
    /// session on the library's shared loop that stopped). Default: false.
    var hasEnded: Bool { get }
}

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
