// SPDX-License-Identifier: GPL-2.0-or-later


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
