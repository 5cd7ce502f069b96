// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// The one loop of a run (`Emitter.run`): one epoll set for the signal pipe, the session's
/// sockets and every source's descriptors. A command's wait for its answer runs it too (the
/// session's command engines wait in it, `CommandWaitLoop`): until the answer comes, the
/// sources that may be served while a command is outstanding are served (the service
/// watchdog; control clients, whose changes are held until the command is over), and the
/// others' input waits for the command to end, as does a signal (the run then ends, the
/// command having had its answer).
package final class EmitterLoop: CommandWaitLoop {
    private let wake = WakeSet()
    private let interrupt: Int32?
    private let sources: [any RunLoopSource]
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

    /// Serves each source the last wait found readable (and no command's wait served since).
    package func serveReady() {
        for source in sources {
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
