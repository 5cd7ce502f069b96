// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// `beacon-emit control PATH --session`: one long-lived connection to a running emitter's
/// control socket, its requests read as JSON lines from one descriptor (standard input) and
/// its replies written, one line each, to another (standard output). What an SSH
/// forced-command key runs on a beacon box, so that a runner elsewhere drives the box over
/// the SSH session with no other listener on the network.
public enum ControlSession {
    /// Why a session ended.
    public enum Ending: Equatable, Sendable {
        /// The input ended and every request sent was answered.
        case inputEnded
        /// Whoever reads the replies went away (the SSH session closed).
        case outputClosed
    }

    /// Relays until the input ends (and the requests it held are answered) or the reader of
    /// the replies goes away. A client leaving never stops the emitter's advertising.
    /// - Parameter replyTimeout: how long the last requests may wait for their replies once
    ///   the input has ended.
    /// - Throws: `ControlError` when the socket cannot be reached, or closes while requests
    ///   wait (the emitter stopped).
    public static func relay(path: String, input: Descriptor, output: Descriptor,
                             replyTimeout: Duration = ControlHandler.holdLimit + .seconds(5)) throws(ControlError) -> Ending {
        SignalWatcher.ignoreBrokenPipes()
        let socket = Descriptor(try ControlServer.connect(path))
        defer { socket.close() }
        var relay = LineCounts()
        var inputOpen = true
        var lastRequest = ContinuousClock.now
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while inputOpen || relay.waiting > 0 {
            let deadline = inputOpen ? ContinuousClock.now + .seconds(3600) : lastRequest + replyTimeout
            let watched = inputOpen ? [socket, input] : [socket]
            let ready: [Bool]
            do {
                ready = try Poll.waitAny(watched, until: deadline)
            } catch {
                throw ControlServer.failure(error, path)
            }
            if !ready.contains(true), !inputOpen {
                throw ControlError(message: "\(path): \(relay.owed) not answered within \(replyTimeout)")
            }
            if ready[0], let count = try read(socket, into: &chunk, path: path) {
                guard count > 0 else {
                    throw ControlError(message: "\(path): the emitter closed the control socket (it stopped)"
                                       + (relay.waiting > 0 ? " with \(relay.owed) unanswered" : ""))
                }
                relay.replied(chunk[..<count])
                do {
                    try output.writeAll(Array(chunk[..<count]), name: "write (standard output)")
                } catch {
                    return .outputClosed
                }
            }
            if inputOpen, ready.count > 1, ready[1], let count = try read(input, into: &chunk, path: "standard input") {
                var bytes = Array(chunk[..<count])
                if count == 0 {
                    inputOpen = false
                    // A last request without its line end is still a request.
                    guard relay.partialRequest else { continue }
                    bytes = [UInt8(ascii: "\n")]
                }
                relay.requested(bytes[...])
                lastRequest = .now
                do {
                    try socket.sendAll(bytes)
                } catch {
                    throw ControlServer.failure(error, path)
                }
            }
        }
        return .inputEnded
    }

    /// What one read gave: a count (0 at the end), or nil when nothing was there after all (a
    /// non-blocking descriptor, such as a standard input handed over that way): not an end.
    private static func read(_ descriptor: Descriptor, into chunk: inout [UInt8], path: String) throws(ControlError) -> Int? {
        do {
            switch try descriptor.read(into: &chunk) {
            case let .done(count): return count
            case .wouldBlock: return nil
            }
        } catch {
            throw ControlServer.failure(error, path)
        }
    }

    /// Complete request lines sent and reply lines received: how many replies are owed.
    struct LineCounts {
        private(set) var waiting = 0
        /// Whether the requests sent so far end mid-line.
        private(set) var partialRequest = false

        mutating func requested(_ bytes: ArraySlice<UInt8>) {
            guard let last = bytes.last else { return }
            waiting += bytes.count { $0 == UInt8(ascii: "\n") }
            partialRequest = last != UInt8(ascii: "\n")
        }

        mutating func replied(_ bytes: ArraySlice<UInt8>) {
            waiting = max(0, waiting - bytes.count { $0 == UInt8(ascii: "\n") })
        }

        /// "1 request", "3 requests": the replies owed, for messages.
        var owed: String { waiting == 1 ? "1 request" : "\(waiting) requests" }
    }

    /// Under an SSH forced command, the command the client asked for (`SSH_ORIGINAL_COMMAND`)
    /// must itself ask for a control session; anything else is refused, with this message.
    /// nil: nothing was asked for (a plain login), or a control session was.
    public static func refusal(originalCommand: String?) -> String? {
        guard let asked = originalCommand else { return nil }
        let words = asked.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !words.isEmpty else { return nil }
        if words.contains("control"), words.contains("--session"),
           !asked.contains(where: { ";&|`$<>()\n".contains($0) }) {
            return nil
        }
        return "this key opens a beacon-emit control session only; '\(asked)' was not run"
    }
}
