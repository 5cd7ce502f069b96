// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What changes on running beacons by itself, scheduled once for every way beacons run
/// (`advertise` through `MotionSource`, a scenario's stage through `SetStage`), on the
/// caller's clock (seconds), made through the one change path (`LiveAdvertising`):
/// - each beacon whose format's content moves (`Beacon.motion`: Eddystone-TLM's counters,
///   Eddystone-EID's identifier) gets its next state: a steady motion every `steadyPeriod` (by
///   whole periods), a stepped one when its step comes (by whole seconds), from the state and time the schedule first saw it at (or
///   saw it changed by someone else, an update); where the motion renews the address with each
///   step and the address is made up, a new address with it, in one step
///   (`LiveAdvertising.renewAddress(_:with:)`: nothing heard pairs the old address with the new
///   content or the reverse). Through the kernel, which chooses the addresses, the step is
///   taken on the address the instance has, said once per beacon;
/// - a beacon whose address rotates (`rotate-address=S`) gets a new made-up address every S
///   seconds (`RenewalSchedule`; one that gains or loses its rotation is scheduled anew); where
///   its content moves within `together` of that, both change in that one step;
/// - with telemetry interleaved (`--interleave-tlm`), each Eddystone-UID or -URL beacon's set
///   carries the TLM frame (the emitter's own counters, moving from the start) for one
///   advertising interval in every ten, as a beacon that sends both interleaves them.
///
/// A change the controller refuses, or that finds the beacons off the air, is said and tried
/// again: a steady motion at its next period, a step `retryPeriod` later, an address a period
/// later. Nothing here ends a run, and nothing here names a format.
package final class BeaconMotions {
    /// How often a steady motion (TLM counters) is set anew, in seconds.
    package static let steadyPeriod = 5.0
    /// How long after a step that failed it is tried again, in seconds.
    package static let retryPeriod = 1.0
    /// How close a beacon's new address and its content's next move come before they are made
    /// as one step (the address taken early or late by at most this), in seconds.
    package static let together = 0.5

    /// What a report is about, for the caller to say it its way.
    package enum Motion: Sendable, Equatable {
        /// A beacon's content moved (`ContentMotion.motionName`: `telemetry`, `eid`).
        case content(String)
        /// A beacon's address was renewed on its own period.
        case address
        /// A beacon's new identity (content with a new address) did not go on the air: off the
        /// air, or its old identity kept whole, until the next try (`EmitterEvent.withheld`).
        case withheld
    }

    /// One moving beacon: when it started, the motion of the state it started from, and what
    /// was last put on the air.
    private struct Entry {
        var origin: Double
        var motion: any ContentMotion
        /// The state last put on the air (or tried), and its seconds from `origin`.
        var last: Beacon
        var offset: Double
        /// When to try again, after a failure.
        var retry: Double?
        /// Whether its address, due a moment before its content, is renewed with its content's move.
        var renewWithMove = false

        /// When its content next moves: a steady motion a period after the last, a stepped one
        /// when the last state's step comes; a failure's retry when that is sooner.
        var due: Double? {
            let next: Double? = switch last.motion?.pace ?? motion.pace {
            case .steady: origin + offset + BeaconMotions.steadyPeriod
            case let .stepped(seconds): seconds.map { origin + offset + $0 }
            }
            guard let retry else { return next }
            return next.map { min($0, retry) } ?? retry
        }
    }

    private let beacons: any LiveAdvertising
    private let context: MotionContext
    private var moving: [BeaconID: Entry] = [:]
    private var renewals = RenewalSchedule<BeaconID>()
    /// The beacons told that their address stays (the kernel's), so as to say it once.
    private var addressKept: Set<BeaconID> = []
    private let label: (BeaconID) -> String
    private let report: (Motion, String) -> Void

    /// Telemetry interleaved on the beacons' sets: the frame as the run started with it, the
    /// advertising interval (seconds), and where the intervals are counted from.
    private struct Interleaving {
        let frame: Beacon
        let tick: Double
        /// The caller's time the intervals count from (the schedule's first look).
        var origin: Double?
        /// The interval the frame is on the sets for now, nil while the beacons are.
        var shownAt: UInt64?
        /// The last tenth interval the frame was shown on, or skipped (a loop late past it).
        var handled: UInt64 = 0
        /// Every tenth interval carries the frame.
        static let every: UInt64 = 10

        /// The intervals passed by `now`.
        func ticks(_ now: Double) -> UInt64 {
            // A nanosecond's slack: at the due time itself the division may fall just short.
            UInt64(max(0, ((now - (origin ?? now)) / tick + 1e-9).rounded(.down)))
        }

        /// When it next changes the sets: the frame's interval over, or the next tenth one.
        var due: Double {
            (origin ?? 0) + Double(shownAt.map { $0 + 1 } ?? handled + Self.every) * tick
        }
    }
    private var interleaving: Interleaving?

    /// - Parameters:
    ///   - intervalUnits: the run's advertising interval (0.625 ms units), for TLM PDU counts
    ///     and the interleaved frame's intervals.
    ///   - interleaving: a TLM frame to interleave on Eddystone-UID and -URL beacons' sets
    ///     (`--interleave-tlm`); its counters move from the start.
    ///   - label: how a beacon is named in reports ("beacon 3", a scenario's name).
    ///   - report: each new address and reported state, and each change that failed.
    package init(beacons: any LiveAdvertising, intervalUnits: UInt32, interleaving: Beacon? = nil,
                 label: @escaping (BeaconID) -> String = { "beacon \($0)" },
                 report: @escaping (Motion, String) -> Void) {
        self.beacons = beacons
        context = MotionContext(intervalUnits: intervalUnits, aes: RememberingAES())
        self.interleaving = interleaving.map { Interleaving(frame: $0, tick: Double(intervalUnits) * 0.000625) }
        self.label = label
        self.report = report
    }

    /// When the next change is due on the caller's clock; nil when none will be.
    package func nextDue(now: Double) -> Double? {
        follow(beacons.running, now: now)
        let interleave = interleaving?.due
        return (moving.values.compactMap(\.due) + [renewals.nextDue, interleave].compactMap { $0 }).min()
    }

    /// Makes every change due by `now`.
    package func perform(now: Double) {
        follow(beacons.running, now: now)
        let periods = Self.rotationPeriods(beacons.running)
        move(now: now, periods: periods)
        renewAddresses(now: now, periods: periods)
        interleave(now: now)
    }

    /// Puts the TLM frame on each Eddystone-UID or -URL beacon's set on a tenth interval, and
    /// the beacon back on the next; a loop late past the frame's interval skips it.
    private func interleave(now: Double) {
        guard var plan = interleaving else { return }
        defer { interleaving = plan }
        let ticks = plan.ticks(now)
        if let shown = plan.shownAt, ticks > shown {
            plan.shownAt = nil
            show { $0 }
        }
        guard plan.shownAt == nil, ticks >= plan.handled + Interleaving.every else { return }
        plan.handled = ticks / Interleaving.every * Interleaving.every
        guard ticks == plan.handled else { return }
        plan.shownAt = ticks
        let frame = plan.frame.motion?.advanced(by: Double(ticks) * plan.tick, context) ?? plan.frame
        show { _ in frame }
    }

    /// Shows `frame(beacon)` on the set of each beacon that telemetry accompanies.
    private func show(_ frame: (Beacon) -> Beacon) {
        for beacon in beacons.running where EddystoneTLM.accompanies(beacon.beacon) {
            do {
                try beacons.show(beacon.id, frame(beacon.beacon))
            } catch {
                report(.content("telemetry"), "\(label(beacon.id)): not interleaved: \(error)")
            }
        }
    }

    /// The schedules follow the beacons running now: one new (or changed by someone else)
    /// starts from its state now, one gone is dropped; one whose last state failed to go on the
    /// air is not new.
    private func follow(_ running: [RunningBeacon], now: Double) {
        if interleaving != nil && interleaving?.origin == nil { interleaving?.origin = now }
        renewals.follow(Self.rotationPeriods(running), now: now)
        var still: [BeaconID: Entry] = [:]
        for beacon in running {
            guard let motion = beacon.beacon.motion else { continue }
            if let entry = moving[beacon.id], entry.last == beacon.beacon || entry.retry != nil {
                still[beacon.id] = entry
            } else {
                still[beacon.id] = Entry(origin: now, motion: motion, last: beacon.beacon, offset: 0)
            }
        }
        moving = still
    }

    private static func rotationPeriods(_ running: [RunningBeacon]) -> [BeaconID: Double] {
        Dictionary(running.compactMap { beacon in beacon.parameters.addressRotation.map { (beacon.id, $0) } }) { first, _ in first }
    }

    /// Puts each moving beacon whose time has come in its state now, in place; with a new
    /// address, in one step, where its motion renews one or its rotation comes within `together`.
    private func move(now: Double, periods: [BeaconID: Double]) {
        for (id, entry) in moving.sorted(by: { $0.key < $1.key }) {
            guard let due = entry.due, now >= due else { continue }
            // A steady motion moves by whole periods (its counters on a grid from its start), a
            // stepped one by whole seconds.
            let elapsed = entry.motion.pace == .steady ? ((now - entry.origin) / Self.steadyPeriod).rounded(.down) * Self.steadyPeriod
                : (now - entry.origin).rounded(.down)
            let next = entry.motion.advanced(by: elapsed, context)
            moving[id]?.last = next
            moving[id]?.offset = elapsed
            moving[id]?.retry = nil
            moving[id]?.renewWithMove = false
            let motion = next.motion ?? entry.motion
            let state = motion.stateText
            let madeUp = beacons.running(id)?.parameters.address?.isMadeUp ?? false
            // Its rotation (`follow` keeps only beacons that rotate) due within `together`, or already deferred to this move.
            let rotation = entry.renewWithMove || renewals.due(id).map { $0 <= now + Self.together } ?? false
            if madeUp, motion.renewsAddress || rotation {
                if rotation { renewals.start(id, period: periods[id], now: now) }
                renew(id, with: next, state: state, motion: motion, now: now)
                continue
            }
            do {
                try beacons.update(id, to: next)
            } catch {
                failed(id, state: state, motion: motion, error: error, now: now)
                continue
            }
            guard let state else { continue }
            if motion.renewsAddress, addressKept.insert(id).inserted {
                report(.content(motion.motionName), "\(label(id)): \(state); the address stays the one it has (a new "
                       + "one with each change needs a made-up address: address=non-resolvable, on HCI advertising sets)")
            } else {
                report(.content(motion.motionName), "\(label(id)): \(state)")
            }
        }
    }

    /// Beacon `id`'s next state and a new address, in one step.
    private func renew(_ id: BeaconID, with next: Beacon, state: String?, motion: any ContentMotion, now: Double) {
        do {
            let address = try beacons.renewAddress(id, with: next)
            if let state {
                report(.content(motion.motionName), "\(label(id)): \(state) from \(address)")
            } else {
                report(.address, "\(label(id)): new address \(address), with its \(motion.motionName)")
            }
        } catch {
            failed(id, state: state, motion: motion, error: error, now: now, withAddress: true)
        }
    }

    /// Says that beacon `id`'s move was not made, and when it is tried again; one with a new
    /// address as `.withheld` (the beacon is then off the air or under its old identity whole).
    private func failed(_ id: BeaconID, state: String?, motion: any ContentMotion, error: HostError, now: Double,
                        withAddress: Bool = false) {
        let retry = motion.pace == .steady ? Self.steadyPeriod : Self.retryPeriod
        let what = "\(label(id)): \(state ?? motion.motionName) not put on the air"
            + (withAddress ? " (nor its new address: the beacon is off the air, or under its old identity whole)" : "")
        report(withAddress ? .withheld : .content(motion.motionName), "\(what): \(error); tried again in \(Int(retry)) s")
        moving[id]?.retry = now + retry
    }

    /// Gives each beacon whose address rotates and whose time has come a new address; one
    /// whose content moves within `together` gets it with that move.
    private func renewAddresses(now: Double, periods: [BeaconID: Double]) {
        for id in renewals.takeDue(at: now, periods: periods) {
            if let due = moving[id]?.due, due <= now + Self.together {
                moving[id]?.renewWithMove = true
                continue
            }
            do {
                let address = try beacons.renewAddress(id)
                report(.address, "\(label(id)): new address \(address)")
            } catch {
                report(.address, "\(label(id)): no new address: \(error); tried again in \(periods[id] ?? 0) s")
            }
        }
    }
}
