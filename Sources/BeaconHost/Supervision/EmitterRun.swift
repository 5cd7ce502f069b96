// SPDX-License-Identifier: GPL-2.0-or-later

/// One run of the beacons, turn by turn: what `Emitter.run` does in a loop of its own, and what
/// the library's shared loop (`LibraryLoop`) does as one of its sources (`EmitterRun.Source`).
///
/// A turn takes in what the session read (the beacons' state), serves the sources with input,
/// has the supervisor act (check the adapter, put the beacons back, rotate), serves what is due,
/// and hands the supervisor what the sources found. Between turns, whoever runs it waits for the
/// session's descriptors, the sources' and `deadline`. The session's commands wait for their
/// answers in `loop` (`CommandWaitLoop`), whoever runs the turns.
///
/// The run is the one owner of the beacons' supervisor, for `advertise`, the library and a
/// scenario's stage alike (`init(stage:device:)`), and of the changes made under it (`live`).
package final class EmitterRun {
    package let session: AdvertisingSession
    /// The run's own loop: its sources, and the wait of each of the session's commands.
    package let loop: EventLoop
    private var supervisor: Supervisor
    private let keep: Bool
    private let end: ContinuousClock.Instant?
    private let sources: [any RunLoopSource]
    private let report: (EmitterEvent) -> Void
    /// Whether the last turn left input read but not acted on (the next wait must not block).
    private var backlog = false
    /// A scenario's stage: its changes are a stage's (`live`), what the supervision reports is
    /// kept for `takeEvents`, and `close` closes what the session opened itself.
    private let isStage: Bool
    /// What the supervision reported since the last `takeEvents` (a stage's run).
    private var events: [EmitterEvent] = []
    private var closed = false

    /// The beacons, changed under this run's supervision as one path: as `advertise` and the
    /// library change them (a change a disruption cuts short is undone and thrown, for the
    /// caller to make again once they are back; the last beacon stays), or on a stage as a
    /// timeline that does not wait for them changes them (off the air a change goes into the
    /// books, one cut short is kept there for the restore; the last beacon may go).
    package private(set) lazy var live: LiveBeacons = session.beacons(onStage: isStage ? .init(
        isOffAir: { [weak self] in self?.supervisor.isOffAir ?? false },
        cutShort: { [weak self] () throws(HostError) in try self?.supervise() }) : nil)

    /// - Parameters: as `Emitter.run`'s.
    package convenience init(_ session: AdvertisingSession, duration: Duration?, keep: Bool, interrupt: Int32?,
                 failFast: Bool, device: String, sources: [any RunLoopSource],
                 report: @escaping (EmitterEvent) -> Void) {
        self.init(session, duration: duration, keep: keep, interrupt: interrupt, failFast: failFast, device: device,
                  sources: sources, stage: false, report: report)
    }

    /// A scenario's stage: its beacons (none yet) kept on the air as `advertise` keeps its own,
    /// through the same disruptions; changed through `live`; the caller's loop waits on
    /// `descriptors` until `deadline` and calls `turn()`.
    package convenience init(stage session: AdvertisingSession, device: String) {
        var collect: (EmitterEvent) -> Void = { _ in }
        self.init(session, duration: nil, keep: false, interrupt: nil, failFast: false, device: device, sources: [],
                  stage: true, report: { collect($0) })
        collect = { [weak self] in self?.events.append($0) }
    }

    private init(_ session: AdvertisingSession, duration: Duration?, keep: Bool, interrupt: Int32?, failFast: Bool,
                 device: String, sources: [any RunLoopSource], stage: Bool, report: @escaping (EmitterEvent) -> Void) {
        self.session = session
        isStage = stage
        supervisor = Supervisor(session: session, failFast: failFast, device: device, report: report)
        self.keep = keep
        end = duration.map { ContinuousClock.now + $0 }
        self.sources = sources
        self.report = report
        loop = EventLoop(interrupt: interrupt, sources: sources, what: device)
        session.waitForAnswers(in: loop)
    }

    /// One turn.
    /// - Returns: false once the run's duration has passed (it ends: `finish`).
    /// - Throws: `HostError` when the controller or the link failed beyond recovery (`abandon`).
    @discardableResult
    package func turn() throws(HostError) -> Bool {
        // What the session took in first (the beacons' state), then the sources with input,
        // then whatever is due.
        backlog = try supervisor.takeIn()
        loop.serveReady()
        try supervisor.tick()
        releaseIdleSets()
        // Held work after the supervisor acted on what the wait brought: a request held for the
        // beacons' return sees them back.
        loop.serveDue()
        for source in sources {
            while let disruption = source.takeDisruption() {
                try supervisor.handle(.disrupted(disruption))
                try supervisor.tick()
            }
        }
        if let end, ContinuousClock.now >= end { return false }
        return true
    }

    /// What the session took in, acted on (a change that a disruption cut short: the
    /// disruption takes the beacons off the air, in the books), and whatever is due.
    private func supervise() throws(HostError) {
        backlog = try supervisor.takeIn()
        try supervisor.tick()
        releaseIdleSets()
    }

    /// Sets a batch left idle for a beacon added next, removed once they have waited (on the air only).
    private func releaseIdleSets() {
        if !supervisor.isOffAir { live.releaseIdleSets() }
    }

    /// Whether the beacons are off the air now (a disruption, waiting for the adapter).
    package var isOffAir: Bool { supervisor.isOffAir }

    /// What the supervision reported since the last call (a stage's run; empty otherwise:
    /// the others report as they go).
    package func takeEvents() -> [EmitterEvent] {
        defer { events.removeAll() }
        return events
    }

    /// When the next turn is due, whatever comes in before.
    package var deadline: ContinuousClock.Instant {
        let now = ContinuousClock.now
        var deadline = backlog ? now : supervisor.nextDeadline
        if let end { deadline = min(deadline, end) }
        if let due = loop.nextDue { deadline = min(deadline, due) }
        return deadline
    }

    /// Every descriptor a turn has work on: the session's sockets and the sources'.
    package var descriptors: [Int32] {
        session.pollDescriptors + sources.flatMap(\.descriptors)
    }

    /// Ends the run as asked (a signal, the duration, `stop`): the beacons come off the air
    /// unless `keep`.
    /// - Throws: `HostError` when they could not be taken off.
    package func finish(reason: String) throws(HostError) {
        report(.stopping(reason: reason))
        if keep {
            report(.stopped(reason: reason, keptOn: true))
            return
        }
        if supervisor.isOffAir {
            abandon()
        } else {
            try session.stop()
        }
        report(.stopped(reason: reason, keptOn: false))
    }

    /// Takes off what is left of the beacons when they may already be off the air or the
    /// adapter unusable (after a failure): a kernel that still holds an instance of an adapter
    /// that is down puts it back on the air when the adapter comes up, so it is removed all the
    /// same; what cannot be removed is reported.
    package func abandon() {
        do {
            try session.stop()
        } catch {
            report(.leftBehind(error))
        }
    }

    /// The session's commands no longer wait in the run's loop, and the loop is closed; a
    /// stage's run closes what its session opened itself too (a link it opened again, the
    /// kernel's reset and takeover watchers).
    package func close() {
        session.waitForAnswers(in: nil)
        loop.close()
        if isStage && !closed { session.closeOwn() }
        closed = true
    }

    /// A run as a source of a loop shared by several sessions (`LibraryLoop`): a turn whenever
    /// one of its descriptors is readable or its deadline has passed; `stop` readable, the
    /// duration passed, or a failure ends it. `ended` is then called once, with how it ended,
    /// and the source leaves the loop.
    package final class Source: RunLoopSource {
        private let run: EmitterRun
        private let stop: Int32
        private var ended: ((Result<Void, HostError>) -> Void)?

        /// - Parameters:
        ///   - stop: readable, the beacons come off the air (`finish`).
        ///   - ended: called on the loop's thread once the run has ended, its link still open.
        package init(_ run: EmitterRun, stop: Int32, ended: @escaping (Result<Void, HostError>) -> Void) {
            self.run = run
            self.stop = stop
            self.ended = ended
        }

        package var hasEnded: Bool { ended == nil }
        package var descriptors: [Int32] { hasEnded ? [] : [stop] + run.descriptors }
        package var due: ContinuousClock.Instant? { hasEnded ? nil : run.deadline }

        package func serve(ready: [Int32]) {
            guard !hasEnded else { return }
            if ready.contains(stop) {
                finish { () throws(HostError) in try run.finish(reason: "stopped") }
                return
            }
            run.loop.found(ready)
            serve()
        }

        package func serve() {
            guard !hasEnded else { return }
            do throws(HostError) {
                if try run.turn() { return }
            } catch {
                run.abandon()
                finish { () throws(HostError) in throw error }
                return
            }
            finish { () throws(HostError) in try run.finish(reason: "duration elapsed") }
        }

        /// Ends the run with what `last` does.
        private func finish(_ last: () throws(HostError) -> Void) {
            let outcome: Result<Void, HostError>
            do throws(HostError) {
                try last()
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            run.close()
            let ended = self.ended
            self.ended = nil
            ended?(outcome)
        }
    }
}
