// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem

/// One box elsewhere, driven through its emitter's control protocol over one long-lived
/// process: `ssh ... DEST beacon-emit control PATH --session`, requests written to its
/// standard input as JSON lines, replies read from its standard output in the same order.
/// Requests are pipelined: `send` writes at once, `RemoteBox.collect` waits for the replies
/// of every box together, so one step reaches all boxes within a round trip.
///
/// A box that fails (its session ends, or a reply does not come in time) drops out: it is
/// never written to again, and what is asked of it afterwards fails with what happened. Its
/// emitter goes on advertising what it had (a client leaving never stops it).
public final class RemoteBox {
    public let name: String
    /// Why the box dropped out; nil while it answers.
    public private(set) var lost: String?

    private let process: ChildProcess
    /// The session's standard output and error (pipes: `ChildProcess`'s defaults).
    fileprivate let replies: Descriptor
    private let said: Descriptor
    /// What to do with each reply, in the order the requests went.
    fileprivate var waiting: [(sent: ContinuousClock.Instant, handle: (String) -> String?)] = []
    private var buffer = JSONLines()
    /// When the box last answered a step's requests, after the step began (`collect`).
    public private(set) var lastReply: ContinuousClock.Instant?

    /// How long a reply may take: the emitter holds a change up to its hold limit while its
    /// beacons are off the air, then answers.
    public static let replyTimeout = ControlHandler.holdLimit + .seconds(5)

    /// The arguments that open `host`'s session: the system's ssh, non-interactive (no password
    /// or host-key prompt: an unknown host key is a refusal), with keep-alives so that a
    /// vanished box is noticed within seconds.
    public static func sshArguments(_ host: Scenario.HostDefinition) -> [String] {
        // The remote command goes through the box's shell: the path is quoted.
        ["ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
         "-o", "ServerAliveCountMax=3"] + host.sshOptions
            + ["--", host.destination, "\(host.command) control \(shellQuoted(host.controlPath)) --session"]
    }

    /// Starts the process (`arguments[0]` found on PATH); nothing is read yet.
    /// - Throws: `RemoteBoxError` when it cannot be started.
    public init(name: String, arguments: [String]) throws(RemoteBoxError) {
        self.name = name
        // A session that ended makes a write fail with EPIPE, not end this process.
        SignalWatcher.ignoreBrokenPipes()
        let process: ChildProcess
        do {
            process = try ChildProcess(arguments: arguments)
        } catch {
            throw RemoteBoxError(message: "\(name): cannot start \(arguments.first ?? "ssh"): \(error)")
        }
        guard let output = process.output, let errors = process.errors else {
            preconditionFailure("a child started with pipes has them")
        }
        self.process = process
        replies = output
        said = errors
    }

    /// Writes one request; `handle` gets its reply and returns a failure message, or nil.
    /// On a box that dropped out, nothing is written and the failure is returned at once.
    public func send(_ request: ControlRequest, what: String, handle: @escaping (ControlReply) -> String?) -> String? {
        if let lost { return "\(name): \(what): not done: the box dropped out earlier: \(lost)" }
        do {
            try process.input.writeAll(JSONLines.frame(request.line), name: "write (\(name)'s session)")
        } catch {
            // The session is gone: what it said on its way out is the reason.
            return (drop(sessionEnding()) + ["\(name): \(what): not done: the box dropped out: \(lost ?? "")"]).joined(separator: "; ")
        }
        waiting.append((.now, { line in
            let reply = ControlReply(line: line)
            if let reply, reply.ok { return handle(reply) }
            return "\(self.name): \(what): refused: \(reply?.error ?? line)"
        }))
        return nil
    }

    /// Waits until every box has answered what was sent to it, or `timeout` has passed for a
    /// box's oldest request (the box then drops out): the one loop type (`EventLoop`), each
    /// box's replies a source whose due time is its oldest request's timeout, `beside` served
    /// in the same wait (this machine's own beacons, kept on the air meanwhile).
    /// - Parameters:
    ///   - interrupt: a descriptor readable when a signal asks the run to end (the signal
    ///     pipe): the wait ends then, what is still unanswered left waiting.
    ///   - observer: whose wait it is (a scenario's: its scan goes on meanwhile, and its
    ///     signal pipe is `interrupt`); nil: a wait of its own.
    /// - Returns: the failures, one message each: refusals, and what was asked of a box that
    ///   dropped out; and whether a signal ended the wait.
    public static func collect(_ boxes: [RemoteBox], timeout: Duration = replyTimeout, interrupt: Int32? = nil,
                               beside: [any RunLoopSource] = [],
                               waitingIn observer: ScenarioObserver? = nil) -> (failures: [String], interrupted: Bool) {
        let replies = boxes.map { BoxReplies(box: $0, timeout: timeout) }
        let busy = { replies.contains(where: \.busy) }
        do throws(HostError) {
            let interrupted: Bool
            if let observer {
                interrupted = try observer.wait(beside: replies + beside, while: busy)
            } else {
                let loop = EventLoop(interrupt: interrupt, sources: replies + beside, what: "the boxes' replies")
                defer { loop.close() }
                interrupted = try loop.run(until: nil, proceed: busy)
            }
            return (replies.flatMap(\.failures), interrupted)
        } catch {
            // The wait itself failed: what is still unanswered fails with it.
            let dropped = replies.filter(\.busy).flatMap { $0.box.drop("the wait for its replies failed: \(error)") }
            return (replies.flatMap(\.failures) + dropped, false)
        }
    }

    /// Reads what arrived and hands out each complete reply line.
    fileprivate func readReplies() -> [String] {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count: Int
        switch try? replies.read(into: &chunk) {
        case let .done(read)?: count = read
        case .wouldBlock?: return []
        case nil: count = 0
        }
        guard count > 0 else { return drop(sessionEnding()) }
        var failures: [String] = []
        for line in buffer.append(chunk[..<count]) {
            // Replies are matched to requests by their order: a line that is no reply, or one
            // nobody asked for, puts every later one out of step, so the box drops out.
            guard JSONValue(parsing: line) != nil, !waiting.isEmpty else {
                return failures + drop("it sent \(waiting.isEmpty ? "a line nobody asked for" : "a line that is not JSON"): "
                                       + line.prefix(200))
            }
            let request = waiting.removeFirst()
            lastReply = .now
            if let failure = request.handle(line) { failures.append(failure) }
        }
        if buffer.overflowed {
            failures += drop("a reply line longer than \(JSONLines.maximumLine) bytes")
        }
        return failures
    }

    /// Marks the box lost; the requests still waiting fail with the reason.
    @discardableResult
    fileprivate func drop(_ reason: String) -> [String] {
        if lost == nil { lost = reason }
        let failures = waiting.map { _ in "\(name): dropped out: \(reason)" }
        waiting.removeAll()
        return failures.isEmpty ? [] : [failures[0]] + (failures.count > 1 ? ["\(name): \(failures.count - 1) more request(s) not answered"] : [])
    }

    /// What the ended session said: ssh's last words on standard error and its exit status.
    private func sessionEnding() -> String {
        let deadline = ContinuousClock.now + .seconds(2)
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while text.count < 16_384, (try? Poll.wait(for: said, until: deadline)) == true,
              case let .done(count)? = try? said.read(into: &chunk), count > 0 {
            text += chunk[..<count]
        }
        let words = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let status = process.wait(until: deadline).map { " (\($0))" } ?? ""
        return "the session ended" + status + (words.isEmpty ? "" : ": " + words.suffix(2).joined(separator: "; "))
    }

    /// Closes the session's input: the box's session then ends by itself.
    public func closeInput() {
        process.closeInput()
    }

    /// Ends the session: its input closed, the process given a few seconds to end (then
    /// stopped), the pipes closed.
    public func close() {
        process.closeInput()
        if process.wait(until: .now + .seconds(3)) == nil { process.stop() }
        process.closeDescriptors()
    }

    /// `text` as a shell would be given it: as it is when it is one plain word, else quoted.
    static func displayed(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:@%+,".contains($0)) }
        return plain ? text : shellQuoted(text)
    }

    /// `text` as one word for a POSIX shell (the remote command line goes through the box's shell).
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// A box's replies in the loop: readable, each complete reply handed out; its oldest request
/// unanswered for `timeout`, the box drops out.
private final class BoxReplies: RunLoopSource {
    let box: RemoteBox
    let timeout: Duration
    private(set) var failures: [String] = []

    init(box: RemoteBox, timeout: Duration) {
        self.box = box
        self.timeout = timeout
    }

    /// Whether the box still owes replies.
    var busy: Bool { box.lost == nil && !box.waiting.isEmpty }

    var descriptors: [Int32] { busy ? [box.replies.rawValue] : [] }

    var due: ContinuousClock.Instant? { busy ? box.waiting.first.map { $0.sent + timeout } : nil }

    func serve(ready: [Int32]) {
        failures += box.readReplies()
    }

    /// Due: the oldest request has waited `timeout`.
    func serve() {
        guard busy, let oldest = box.waiting.first?.sent, ContinuousClock.now >= oldest + timeout else { return }
        failures += box.drop("no reply within \(timeout)")
    }
}
