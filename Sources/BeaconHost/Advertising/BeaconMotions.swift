// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What changes on running beacons by itself, scheduled once for every way beacons run
/// (`advertise` through `MotionSource`, a scenario's stage through `SetStage`), on the
/// caller's clock (seconds), made through the one change path (`LiveAdvertising`):
/// - every Eddystone-TLM beacon's counters advance every `telemetryPeriod` (`MovingTelemetry`);
/// - a beacon whose address rotates (`rotate-address=S`) gets a new made-up address every S
///   seconds (`RenewalSchedule`; one that gains or loses its rotation is scheduled anew);
/// - an Eddystone-EID beacon gets its next identifier when its period ends, and with it a new
///   address where its address is made up (the specification: "rotate BD_ADDR in addition to
///   the EID"); through the kernel, which chooses the addresses, the identifier changes on the
///   address the instance has, said once per beacon (`IdentifierSchedule`).
///
/// A change the controller refuses, or that finds the beacons off the air, is said and tried
/// again: a TLM update at the next period, an address a period later, an identifier
/// `IdentifierSchedule.retryPeriod` later. Nothing here ends a run.
package final class BeaconMotions {
    /// How often TLM counters are set anew, in seconds.
    package static let telemetryPeriod = 5.0

    /// What a report is about, for the caller to say it its way.
    package enum Motion: Sendable {
        case telemetry, address, identifier
    }

    private let beacons: any LiveAdvertising
    private let telemetry: MovingTelemetry
    private var telemetryPeriods: PeriodCount
    private var renewals = RenewalSchedule<BeaconID>()
    private var identifiers = IdentifierSchedule<BeaconID>()
    /// The EID beacons told that their address stays (the kernel's), so as to say it once.
    private var addressKept: Set<BeaconID> = []
    private let label: (BeaconID) -> String
    private let report: (Motion, String) -> Void

    /// - Parameters:
    ///   - intervalUnits: the run's advertising interval (0.625 ms units), for TLM PDU counts.
    ///   - start: the caller's clock now (the first TLM period ends `telemetryPeriod` after it).
    ///   - label: how a beacon is named in reports ("beacon 3", a scenario's name).
    ///   - report: each new address and identifier, and each change that failed.
    package init(beacons: any LiveAdvertising, intervalUnits: UInt32, start: Double = 0,
                 label: @escaping (BeaconID) -> String = { "beacon \($0)" },
                 report: @escaping (Motion, String) -> Void) {
        self.beacons = beacons
        telemetry = MovingTelemetry(intervalUnits: intervalUnits)
        telemetryPeriods = PeriodCount(period: Self.telemetryPeriod, from: start)
        self.label = label
        self.report = report
    }

    /// When the next change is due on the caller's clock; nil when none will be.
    package func nextDue(now: Double) -> Double? {
        let running = beacons.running
        follow(running, now: now)
        let moving = running.contains { MovingTelemetry.moves($0.beacon) } ? telemetryPeriods.next : nil
        return [moving, renewals.nextDue, identifiers.nextDue].compactMap { $0 }.min()
    }

    /// Makes every change due by `now`.
    package func perform(now: Double) {
        follow(beacons.running, now: now)
        moveTelemetry(now: now)
        renewAddresses(now: now)
        rotateIdentifiers(now: now)
    }

    /// The schedules follow the beacons running now: one new starts, one gone is dropped.
    private func follow(_ running: [RunningBeacon], now: Double) {
        renewals.follow(Self.rotationPeriods(running), now: now)
        var frames: [BeaconID: EddystoneEID] = [:]
        for beacon in running {
            if let frame = beacon.beacon.rotatingIdentifier { frames[beacon.id] = frame }
        }
        identifiers.follow(frames, now: now)
    }

    private static func rotationPeriods(_ running: [RunningBeacon]) -> [BeaconID: Double] {
        Dictionary(running.compactMap { beacon in beacon.parameters.addressRotation.map { (beacon.id, $0) } }) { first, _ in first }
    }

    /// Advances every TLM beacon's counters by the whole periods passed, on the air in place.
    private func moveTelemetry(now: Double) {
        let periods = telemetryPeriods.passed(at: now)
        guard periods > 0 else { return }
        for beacon in beacons.running {
            guard let moved = telemetry.moved(beacon.beacon, by: Double(periods) * Self.telemetryPeriod) else { continue }
            do {
                try beacons.update(beacon.id, to: moved)
            } catch {
                report(.telemetry, "\(label(beacon.id)): counters not moved: \(error); tried again in "
                       + "\(Int(Self.telemetryPeriod)) s")
            }
        }
    }

    /// Gives each beacon whose address rotates and whose time has come a new address.
    private func renewAddresses(now: Double) {
        let periods = Self.rotationPeriods(beacons.running)
        for id in renewals.takeDue(at: now, periods: periods) {
            do {
                let address = try beacons.renewAddress(id)
                report(.address, "\(label(id)): new address \(address)")
            } catch {
                report(.address, "\(label(id)): no new address: \(error); tried again in \(periods[id] ?? 0) s")
            }
        }
    }

    /// Gives each EID beacon whose period ended its next identifier, and a new address with
    /// it where its address is made up.
    private func rotateIdentifiers(now: Double) {
        for (id, frame) in identifiers.takeDue(at: now) {
            let eid = HexText.format(frame.eid)
            do {
                try beacons.update(id, to: .eddystone(.eid(frame)))
            } catch {
                report(.identifier, "\(label(id)): EID \(eid) not put on the air: \(error); tried again in "
                       + "\(Int(IdentifierSchedule<BeaconID>.retryPeriod)) s")
                identifiers.failed(id, now: now)
                continue
            }
            guard beacons.running(id)?.parameters.address?.isMadeUp ?? false else {
                if addressKept.insert(id).inserted {
                    report(.identifier, "\(label(id)): EID \(eid); the address stays the one it has (a new one with "
                           + "each EID needs a made-up address: address=non-resolvable, on HCI advertising sets)")
                } else {
                    report(.identifier, "\(label(id)): EID \(eid)")
                }
                continue
            }
            do {
                let address = try beacons.renewAddress(id)
                report(.identifier, "\(label(id)): EID \(eid) from \(address)")
            } catch {
                report(.identifier, "\(label(id)): EID \(eid), but no new address: \(error)")
            }
        }
    }
}

