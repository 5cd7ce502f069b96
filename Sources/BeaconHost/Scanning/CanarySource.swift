// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking

/// `advertise --canary DEVICE`: a scanner on another device that listens for the emitter's own
/// beacons while they advertise, on the emitter's run loop (a `RunLoopSource`), and proves
/// they are on the air (`CanaryWatch`): when each was last heard, for the service's status and
/// the control socket; a beacon not heard for `after` hands the supervisor a
/// `Disruption.notHeard` (the beacons are reprogrammed once, through the normal restore), is
/// reported again every `after` while it stays unheard, and is reported when heard again.
package final class CanarySource: RunLoopSource {
    /// The canary's device in messages.
    public let device: String
    private let scanner: AdvertisementScanner
    private let connection: ControllerConnection?
    private let beacons: () -> [Beacon]
    private var watch: CanaryWatch
    private var pending: [Disruption] = []
    private var nextStatus: ContinuousClock.Instant
    /// When the scan is next switched off and on (`AdvertisementScanner.cycle`), every quarter
    /// of the bound (at least a second): some controllers report an advertiser only when a
    /// scan starts.
    private var nextCycle: ContinuousClock.Instant
    private let cyclePeriod: Duration
    private var failed = false
    /// How often the last-heard times go to `report` (the service's status).
    static let statusPeriod = Duration.seconds(5)
    /// What the canary reports (set once the run's report exists).
    public var report: (EmitterEvent) -> Void = { _ in }

    /// Opens `device` (a second adapter, an H4 link; `virtual`: a second device on the
    /// emitter's own virtual radio, `emitter` its connection) and starts a passive scan that
    /// keeps every report.
    /// - Parameters:
    ///   - beacons: the beacons advertised now (they change through control and reloads).
    ///   - after: how long a beacon may go unheard (`CanaryWatch.defaultAfter`).
    /// - Throws: `HostError` naming the canary's device; nothing stays open when it throws.
    public init(device specification: DeviceSpecification, emitter: ControllerConnection?,
                beacons: @escaping () -> [Beacon], after: Duration,
                log: @escaping (String) -> Void) throws(HostError) {
        if specification == .virtual && emitter?.virtualController == nil {
            throw .refused(Refusal(.secondDevice, .needsVirtualDevice))
        }
        let controller: HCIController
        (controller, connection) = try ControllerConnection.openScanner(specification, beside: emitter)
        device = specification.description
        scanner = AdvertisementScanner(controller: controller)
        scanner.log = { log("canary \(specification): \($0)") }
        self.beacons = beacons
        let now = ContinuousClock.now
        watch = CanaryWatch(beacons: beacons(), after: after, now: now)
        nextStatus = now + Self.statusPeriod
        cyclePeriod = max(.seconds(1), after / 4)
        nextCycle = now + cyclePeriod
        do {
            try scanner.start(options: .init(intervalUnits: 0x0010, windowUnits: 0x0010),
                              ownsController: specification.ownsController)
        } catch {
            close()
            throw error
        }
        watch.back(now: .now)  // the watch starts once the scan is on
    }

    public var after: Duration { watch.after }

    public var descriptor: Int32 { scanner.controller.transport.pollDescriptor ?? -1 }

    public var descriptors: [Int32] { [descriptor] }

    public var due: ContinuousClock.Instant? {
        min(watch.nextCheck ?? nextStatus, nextStatus, failed ? nextStatus : nextCycle)
    }

    /// Takes in every report waiting (none blocks), then judges what is due.
    public func serve() {
        let now = ContinuousClock.now
        watch.track(beacons(), now: now)
        if !failed {
            do {
                while let report = try scanner.nextReport(timeout: .zero) {
                    for outcome in watch.heard(report, now: ContinuousClock.now) { tell(outcome) }
                }
                if ContinuousClock.now >= nextCycle {
                    try scanner.cycle()
                    nextCycle = ContinuousClock.now + cyclePeriod
                }
            } catch {
                // The beacons are not judged by a canary that cannot listen.
                failed = true
                watch.offAir(now: .now)
                report(.warning("the canary on \(device) failed: \(error); it listens no more, and no beacon is judged"))
            }
        }
        for outcome in watch.check(now: ContinuousClock.now) { tell(outcome) }
        if ContinuousClock.now >= nextStatus {
            report(.canary(.lastHeard(watch.states(now: ContinuousClock.now).map(\.lastHeard))))
            nextStatus = ContinuousClock.now + Self.statusPeriod
        }
    }

    private func tell(_ outcome: CanaryWatch.Outcome) {
        switch outcome {
        case let .notHeard(indices, duration):
            pending.append(.notHeard(beacons: indices.map { $0 + 1 }, for: duration))
        case let .stillNotHeard(index, duration):
            report(.canary(.stillNotHeard(beacon: index + 1, for: duration)))
        case let .heardAgain(index, duration):
            report(.canary(.heardAgain(beacon: index + 1, after: duration)))
        }
    }

    public func takeDisruption() -> Disruption? {
        pending.isEmpty ? nil : pending.removeFirst()
    }

    /// Follows the emitter's events: nothing is judged while the beacons are off the air, and
    /// each has `after` again once they are back.
    public func note(_ event: EmitterEvent) {
        guard !failed else { return }
        switch event {
        case .offAir, .waiting: watch.offAir(now: .now)
        case .restored: watch.back(now: .now)
        default: break
        }
    }

    /// Each beacon, in order: how long ago it was heard, and whether it is unheard.
    public var states: [CanaryWatch.BeaconState] { watch.states(now: .now) }

    /// Reports heard in all, and of those, reports of the emitter's own beacons.
    public var counts: (heard: Int, own: Int) { (watch.reportsHeard, watch.ownReportsHeard) }

    /// Stops the scan and closes the canary's device.
    public func close() {
        scanner.stop()
        if let connection { connection.close() } else { scanner.controller.transport.close() }
    }
}
