// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem
import Synchronization

/// The library's one loop for its async API: every `BeaconBroadcast` and every report stream
/// (`AdvertisementScanner.reports(on:)`) of the process is a source of the same `EventLoop`, on
/// one thread, started with the first of them. Async code hands it work (`perform`), which runs
/// there between the loop's waits: a session's start (its commands and their answers), a change
/// to its beacons, the session added as a source, which leaves once it has ended.
///
/// While one session's command waits for its answer (a few milliseconds; at most the command's
/// timeout when a controller does not answer), the other sessions' input waits, as a source's
/// does in `Emitter.run`.
package final class LibraryLoop: Sendable {
    /// The process's loop.
    package static let shared = LibraryLoop()

    private let mailbox = Mutex<Mailbox>(Mailbox())
    private let wake: WakePipe?

    private struct Mailbox: ~Copyable {
        var work: [@Sendable (EventLoop) -> Void] = []
        var started = false
        /// How many threads the loop has started (one, once anything ran on it).
        var threads = 0
    }

    private init() {
        wake = try? WakePipe()
    }

    /// Runs `work` on the loop's thread, with the loop (to add a source to it), soon after.
    /// - Throws: `HostError` when the loop cannot be woken (no descriptors were left for its pipe).
    package func perform(_ work: @escaping @Sendable (EventLoop) -> Void) throws(HostError) {
        guard let wake else {
            throw .kernel(call: "pipe", errno: EMFILE, adapter: nil, adapters: [])
        }
        let start = mailbox.withLock { mailbox in
            mailbox.work.append(work)
            defer { mailbox.started = true }
            return !mailbox.started
        }
        if start {
            let thread = Thread { [self] in run(wake) }
            thread.name = "beacon-emit library loop"
            thread.start()
        }
        wake.wake()
    }

    /// How many threads the loop has started, and how many sessions (sources besides its own)
    /// it serves, read on its thread after what was handed to it before (what a test of "one
    /// loop, not a thread each" reads).
    package func census() async throws(HostError) -> (threads: Int, sessions: Int) {
        let sessions = await withCheckedContinuation { (counted: CheckedContinuation<Result<Int, HostError>, Never>) in
            do throws(HostError) {
                try perform { loop in counted.resume(returning: .success(loop.sources.count - 1)) }
            } catch {
                counted.resume(returning: .failure(error))
            }
        }
        return (mailbox.withLock { $0.threads }, try sessions.get())
    }

    /// The loop's thread: its mailbox a source beside the sessions, for the process's life.
    private func run(_ wake: WakePipe) {
        mailbox.withLock { $0.threads += 1 }
        let inbox = Inbox(owner: self, wake: wake)
        var loop = EventLoop(interrupt: nil, sources: [inbox], what: "the library's loop")
        while true {
            inbox.loop = loop
            // Only a failing epoll set ends a run of the loop: the sessions go on in a new one,
            // after a wait for new work of at most 100 ms (where no new set can be made either,
            // the loop does not spin).
            guard (try? loop.run(until: nil)) == nil else { continue }
            let sessions = loop.sources
            loop.close()
            _ = try? Poll.waitAny([Descriptor(wake.descriptor)], until: .now + .milliseconds(100))
            loop = EventLoop(interrupt: nil, sources: sessions, what: "the library's loop")
        }
    }

    /// The work handed to the loop, taken in when its pipe is readable.
    private final class Inbox: RunLoopSource {
        let owner: LibraryLoop
        let wake: WakePipe
        weak var loop: EventLoop?

        init(owner: LibraryLoop, wake: WakePipe) {
            self.owner = owner
            self.wake = wake
        }

        var descriptors: [Int32] { [wake.descriptor] }

        func serve() {
            wake.drain()
            let work = owner.mailbox.withLock { mailbox in
                defer { mailbox.work.removeAll() }
                return mailbox.work
            }
            guard let loop else { return }
            for item in work { item(loop) }
        }
    }
}
