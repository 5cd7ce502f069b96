// SPDX-License-Identifier: GPL-2.0-or-later

/// The emitter's recovery decisions, apart from waiting: what a session's signal or the
/// adapter's state means for the beacons, when to put them back, and when to rotate.
///
/// Off the air, the adapter's state is checked every `Emitter.settleTime`; on the air, every
/// second (a raw socket on an adapter taken down reports nothing). The beacons go back
/// `settleTime` after the adapter is usable again (at once for a disruption that leaves it
/// usable); a failed attempt is retried after twice the last delay, up to 5 s.
struct Supervisor {
    struct OffAir {
        var cause: Disruption
        var since: ContinuousClock.Instant
        /// Since when the adapter is usable again (nil while it is not).
        var usableSince: ContinuousClock.Instant?
    }

    let session: AdvertisingSession
    let failFast: Bool
    let device: String
    let report: (EmitterEvent) -> Void
    let now: () -> ContinuousClock.Instant

    private(set) var offAir: OffAir?
    private(set) var restoreAt: ContinuousClock.Instant?
    private var nextCheck: ContinuousClock.Instant
    private var nextRotation: ContinuousClock.Instant
    private var retryDelay = Emitter.settleTime
    private var waitingFor: AdapterAvailability?

    init(session: AdvertisingSession, failFast: Bool, device: String, report: @escaping (EmitterEvent) -> Void,
         now: @escaping () -> ContinuousClock.Instant = { .now }) {
        self.session = session
        self.failFast = failFast
        self.device = device
        self.report = report
        self.now = now
        let start = now()
        nextCheck = start + .seconds(1)
        nextRotation = start + session.rotationPeriod
    }

    var isOffAir: Bool { offAir != nil }

    /// When the supervisor next has something to do.
    var nextDeadline: ContinuousClock.Instant {
        var deadline = nextCheck
        if let restoreAt { deadline = min(deadline, restoreAt) }
        if offAir == nil, session.plan?.rotating == true { deadline = min(deadline, nextRotation) }
        return deadline
    }

    /// Acts on what the session took in.
    /// - Throws: with `failFast`, the error for an adapter that became unusable.
    mutating func handle(_ signal: SessionSignal) throws(HostError) {
        switch signal {
        case .quiet:
            break
        case let .disrupted(disruption):
            try knockedOff(disruption)
        case .adapterBack:
            if offAir != nil { becameUsable() }
        }
    }

    /// Acts on what the session has taken in since (one read may bring several packets), at
    /// most `limit` signals.
    /// - Returns: true when the limit was reached: more may be waiting, read already (the
    ///   next wait should not block on the sockets).
    mutating func takeIn(limit: Int = 64) throws(HostError) -> Bool {
        for _ in 0..<limit {
            let signal = try session.takeIn()
            guard signal != .quiet else { return false }
            try handle(signal)
        }
        return true
    }

    /// Checks the adapter, puts the beacons back, rotates: whatever is due.
    /// - Throws: `HostError` from a rotation, or with `failFast` for an unusable adapter.
    mutating func tick() throws(HostError) {
        if now() >= nextCheck {
            let availability = session.availability()
            if availability != .usable {
                if offAir == nil { try knockedOff(availability == .down ? .adapterDown : .adapterRemoved) }
                if waitingFor != availability {
                    report(.waiting(availability))
                    waitingFor = availability
                }
                offAir?.usableSince = nil
                restoreAt = nil
            } else if offAir != nil, offAir?.usableSince == nil {
                becameUsable()
            }
            nextCheck = now() + (offAir == nil ? .seconds(1) : Emitter.settleTime)
        }
        if let at = restoreAt, now() >= at, let off = offAir {
            do {
                try session.restore()
                let back = now()
                report(.restored(off.cause, gap: off.since.duration(to: back),
                                 afterUsable: (off.usableSince ?? off.since).duration(to: back)))
                offAir = nil
                restoreAt = nil
                waitingFor = nil
                nextRotation = back + session.rotationPeriod
            } catch {
                retryDelay = min(retryDelay * 2, .seconds(5))
                report(.restoreFailed(error, retryIn: retryDelay))
                restoreAt = now() + retryDelay
            }
        }
        if offAir == nil, session.plan?.rotating == true, now() >= nextRotation {
            try rotate()
            nextRotation = now() + session.rotationPeriod
        }
    }

    /// Puts the next beacon on the air. A rotation that a disruption cuts short is not the end
    /// of the run: the session hands the disruption over at its next wait, and the restore
    /// starts the turns again.
    private func rotate() throws(HostError) {
        let seen = session.disruptionsSeen.count
        do {
            try session.rotate()
        } catch {
            // The next wait hands the disruption over (or finds the link closed).
            guard session.interruption(since: seen, failure: error) != nil else { throw error }
        }
    }

    private mutating func knockedOff(_ disruption: Disruption) throws(HostError) {
        if failFast && disruption.adapterUnavailable { throw disruption.failFastError(device: device) }
        let time = now()
        if offAir == nil {
            offAir = OffAir(cause: disruption, since: time, usableSince: nil)
            report(.offAir(disruption))
        } else {
            report(.step("also: \(disruption)"))
        }
        if disruption.adapterUnavailable {
            offAir?.usableSince = nil
            restoreAt = nil
        } else {
            if offAir?.usableSince == nil { offAir?.usableSince = time }
            restoreAt = time + Emitter.settleTime
            retryDelay = Emitter.settleTime
        }
        nextCheck = min(nextCheck, time + Emitter.settleTime)
    }

    private mutating func becameUsable() {
        let time = now()
        if offAir?.usableSince == nil { offAir?.usableSince = time }
        restoreAt = time + Emitter.settleTime
        retryDelay = Emitter.settleTime
        waitingFor = nil
    }
}
