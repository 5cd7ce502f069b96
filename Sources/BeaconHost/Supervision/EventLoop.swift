// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// The one loop type: one epoll set for the signal pipe and every source's descriptors (and,
/// in `Emitter.run`, the session's sockets), the sources' due times as the wait's deadline.
/// `advertise` runs it (`Emitter.run`), and so do the scans: `scan`, `monitor`, `verify`,
/// `audit` (`AdvertisementScanner.feed`), `calibrate` (`rssiSamples`) and a scenario's
/// observer (a step's wait for its boxes too), each a `ScanSource` beside its timers. The
/// library's async API is one for the process (`LibraryLoop`): each broadcast and report
/// stream a source that leaves once it has ended. A command's wait for its answer runs it too (the
/// session's command engines wait in it, `CommandWaitLoop`): until the answer comes, the
/// sources that may be served while a command is outstanding are served (the service
/// watchdog; control clients, whose changes are held until the command is over), and the
/// others' input waits for the command to end, as does a signal (the run then ends, the
/// command having had its answer).
package final class EventLoop: CommandWaitLoop {
    private let wake = WakeSet()
    private let interrupt: Int32?
    /// The sources served; one that has ended (`hasEnded`) leaves after the turn that ended it.
    package private(set) var sources: [any RunLoopSource]
    /// Named where the wait itself fails.
    private let what: String
    /// The sources' descriptors the last wait found readable that nobody has served yet.
    private var ready: Set<Int32> = []
    /// How many times a source was served while a command waited for its answer.
    package private(set) var servedWhileCommandsWaited = 0

    /// - Parameter interrupt: the signal pipe: readable, the run ends.
    package init(interrupt: Int32?, sources: [any RunLoopSource], what: String) {
        self.interrupt = interrupt
        self.sources = sources
        self.what = what
    }

    /// Waits until the signal pipe, one of `descriptors` (the session's) or a source's
    /// descriptor is readable, or `deadline` passes.
    /// - Returns: true when the signal pipe is readable: the run ends.
    /// - Throws: `HostError` where epoll fails.
    package func wait(beside descriptors: [Int32], until deadline: ContinuousClock.Instant) throws(HostError) -> Bool {
        wake.watch(Set([interrupt].compactMap { $0 } + descriptors + sources.flatMap(\.descriptors)))
        ready = try wake.readable(until: deadline, what: what)
        return interrupt.map(ready.contains) ?? false
    }

    /// Serves `source` from the next turn on (a loop shared by sessions that come and go:
    /// `LibraryLoop`). Only on the loop's own thread.
    package func add(_ source: any RunLoopSource) {
        sources.append(source)
    }

    /// Serves `sources` no more (a wait's own sources, added for it: `LiveObserver`). Only on
    /// the loop's own thread, between its runs.
    package func remove(_ leaving: [any RunLoopSource]) {
        sources.removeAll { source in leaving.contains { $0 === source } }
    }

    /// The descriptors a wait on another epoll set found readable (a loop that runs this one's
    /// turns as one of its sources): served by the next `serveReady`.
    package func found(_ readable: some Sequence<Int32>) {
        ready.formUnion(readable)
    }

    /// The sources that have ended leave.
    private func dropEnded() {
        if sources.contains(where: \.hasEnded) { sources.removeAll(where: \.hasEnded) }
    }

    /// Runs the sources until `end`, a signal, or `proceed` returns false: each turn serves the
    /// sources with input, then those due, and waits for the first of their descriptors, their
    /// due times and `end`.
    /// - Returns: true when the signal pipe ended it.
    /// - Throws: `HostError` where epoll fails.
    package func run(until end: ContinuousClock.Instant?, proceed: () -> Bool = { true }) throws(HostError) -> Bool {
        while proceed() {
            serveReady()
            serveDue()
            guard proceed() else { break }
            let now = ContinuousClock.now
            if let end, now >= end { break }
            var deadline = end ?? now + .seconds(3600)
            if let due = nextDue { deadline = min(deadline, due) }
            if try wait(beside: [], until: deadline) { return true }
        }
        return false
    }

    /// The first of the sources' due times.
    package var nextDue: ContinuousClock.Instant? {
        sources.compactMap(\.due).min()
    }

    /// Serves the sources whose work is due (held work, a timer).
    package func serveDue() {
        for source in sources where !source.hasEnded {
            // The clock read after `due`: a source due "now" is due.
            if let due = source.due, due <= ContinuousClock.now { source.serve() }
        }
        dropEnded()
    }

    /// Serves each source the last wait found readable (and no command's wait served since).
    package func serveReady() {
        defer { dropEnded() }
        for source in sources where !source.hasEnded {
            let theirs = source.descriptors.filter(ready.contains)
            guard !theirs.isEmpty else { continue }
            // Taken first: serving may send a command, whose wait serves what is readable then.
            ready.subtract(theirs)
            source.serve(ready: theirs)
        }
    }

    package func wait(for descriptor: Int32, until deadline: ContinuousClock.Instant) throws(HostError) {
        let serving = sources.filter(\.servesWhileCommandWaits)
        while ContinuousClock.now < deadline {
            wake.watch(Set([descriptor] + serving.flatMap(\.descriptors)))
            let readable = try wake.readable(until: deadline, what: what)
            for source in serving {
                let theirs = source.descriptors.filter(readable.contains)
                guard !theirs.isEmpty else { continue }
                ready.subtract(theirs)
                servedWhileCommandsWaited += 1
                source.serveWhileCommandWaits(ready: theirs)
            }
            if readable.isEmpty || readable.contains(descriptor) { return }
        }
    }

    package func close() {
        wake.close()
    }
}
