// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// A phone's log as a run reads it: its `log:` command run with `sh -c` in a process group of
/// its own, every line it prints (standard output and error) stamped on receipt with the run's
/// clock (so the phone's own clock never matters), and the app's lines matched to region
/// transitions and states by the phone's patterns. Bounded: a line is cut at
/// `maximumLineBytes`, at most `maximumLinesPerSecond` are taken (the rest counted), and
/// `stop()` ends the command and everything it started.
public final class PhoneLog {
    public let phone: Scenario.PhoneDefinition
    /// The phone's patterns, matched on a thread of their own within a budget a line.
    private let matcher: PhoneMatcher
    private var child: ChildProcess?
    /// The output and error pipes still open, each with what it has read of a line so far.
    private var streams: [(descriptor: Descriptor, pending: [UInt8], discarding: Bool)] = []
    /// Lines taken in the current second of the run's clock, and which second.
    private var second = (index: -1, lines: 0)
    /// What a read fills (made once: `take` runs at every wake of the run's wait).
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    /// Every line taken, in order (at most `maximumLines`: the earliest kept).
    public private(set) var lines: [PhoneLine] = []
    /// Lines cut at `maximumLineBytes`, and lines left out over `maximumLinesPerSecond`.
    public private(set) var cut = 0
    public private(set) var dropped = 0
    /// Lines received once `maximumLines` were kept: matched as they came, but not kept for
    /// the expectations still to be judged.
    public private(set) var notKept = 0
    /// Lines taken but not matched: the one whose matching ran over `PhoneMatcher.budget`, and
    /// every line after it (matching stopped for this phone). Where that began: the run's
    /// clock and the line's first characters.
    public private(set) var unmatched = 0
    public private(set) var overBudget: (at: Double, line: String)?
    /// The lines not read for judging (left out over the rate, or not kept), by the second of
    /// the run's clock they came in: one entry a second at most.
    private var unread: [(second: Int, count: Int)] = []
    /// How the command ended, when it has; why it could not start, where it could not.
    public private(set) var termination: ChildProcess.Termination?
    public private(set) var startFailure: String?

    public static let maximumLineBytes = 4096
    public static let maximumLinesPerSecond = 200
    public static let maximumLines = 100_000

    /// A pattern compiled, checked for the groups its key needs (`state`: `region` and `state`).
    /// - Throws: a message saying what is wrong with it.
    public static func compile(_ pattern: String, key: String) throws -> Regex<AnyRegexOutput> {
        struct Wrong: Error, CustomStringConvertible { var description: String }
        let regex: Regex<AnyRegexOutput>
        do {
            regex = try Regex(pattern)
        } catch {
            throw Wrong(description: "not a regular expression: \(error)")
        }
        if key == "state" && !regex.contains(captureNamed: "state") {
            throw Wrong(description: "a state line needs a group (?<state>inside|outside)")
        }
        if let nesting = PhonePattern.nestedRepetition(in: pattern) {
            throw Wrong(description: nesting)
        }
        return regex
    }

    public init(_ phone: Scenario.PhoneDefinition) {
        self.phone = phone
        let given: [(Scenario.PhoneExpectation, String?)] = [(.enter, phone.enter), (.exit, phone.exit), (.inside, phone.state)]
        matcher = PhoneMatcher(given.compactMap { kind, pattern in
            pattern.flatMap { try? Self.compile($0, key: kind == .inside ? "state" : "\(kind)") }.map { (kind, $0) }
        })
    }

    deinit { stop() }

    /// Starts the command; one that cannot start is said by `startFailure` (its expectations fail).
    public func start() {
        guard child == nil, startFailure == nil else { return }
        do {
            // Ends with the run however the run ends (SIGKILL, a crash): its whole group.
            let started = try ChildProcess(arguments: ["sh", "-c", phone.command], endsWithThisProcess: true)
            started.closeInput()
            child = started
            for descriptor in [started.output, started.errors].compactMap({ $0 }) {
                descriptor.setNonBlocking()
                streams.append((descriptor, [], false))
            }
        } catch {
            startFailure = "\(error)"
        }
    }

    /// The pipes to wait on: readable, `take` has lines (or their end) to read.
    public var descriptors: [Int32] { streams.map(\.descriptor.rawValue) }

    /// Reads what the command printed since, without waiting: the new lines, stamped `now`.
    public func take(now: Double) -> [PhoneLine] {
        var taken: [PhoneLine] = []
        for index in streams.indices.reversed() {
            var reads = 0
            while reads < 16 {
                reads += 1
                guard case let .done(count)? = try? streams[index].descriptor.read(into: &buffer) else { break }
                if count == 0 {
                    // Its end: a last line without a newline still counts.
                    if !streams[index].pending.isEmpty && !streams[index].discarding {
                        taken += line(streams[index].pending, now: now)
                    }
                    streams.remove(at: index)
                    break
                }
                for byte in buffer[0..<count] {
                    if byte == UInt8(ascii: "\n") {
                        if !streams[index].discarding { taken += line(streams[index].pending, now: now) }
                        streams[index].pending.removeAll(keepingCapacity: true)
                        streams[index].discarding = false
                    } else if !streams[index].discarding {
                        streams[index].pending.append(byte)
                        if streams[index].pending.count >= Self.maximumLineBytes {
                            cut += 1
                            taken += line(streams[index].pending, now: now)
                            streams[index].pending.removeAll(keepingCapacity: true)
                            streams[index].discarding = true
                        }
                    }
                }
            }
        }
        if termination == nil, let child { termination = child.termination }
        return taken
    }

    /// One line taken (or left out over the rate), matched.
    private func line(_ bytes: [UInt8], now: Double) -> [PhoneLine] {
        let index = Int(now.rounded(.down))
        if index != second.index { second = (index, 0) }
        second.lines += 1
        guard second.lines <= Self.maximumLinesPerSecond else {
            dropped += 1
            noteUnread(second: index)
            return []
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        var line = PhoneLine(phone: phone.name, text: text, at: now)
        switch matcher.match(text) {
        case let .matched(transition, region):
            (line.transition, line.region) = (transition, transition == nil ? nil : region)
        case .overBudget:
            unmatched += 1
            if overBudget == nil { overBudget = (now, String(text.prefix(60))) }
            noteUnread(second: index)
        }
        if lines.count < Self.maximumLines {
            lines.append(line)
        } else {
            notKept += 1
            noteUnread(second: index)
        }
        return [line]
    }

    private func noteUnread(second index: Int) {
        if unread.last?.second == index { unread[unread.count - 1].count += 1 } else { unread.append((index, 1)) }
    }

    /// How many lines that came in from `start` to `end` (seconds of the run's clock, whole
    /// seconds around them) were not read for judging: an expectation that no line came cannot
    /// be judged over them.
    public func unread(from start: Double, to end: Double) -> Int {
        let first = Int(start.rounded(.down)), last = Int(end.rounded(.down))
        return unread.filter { $0.second >= first && $0.second <= last }.reduce(0) { $0 + $1.count }
    }

    /// Ends the command and everything it started (SIGTERM to its process group, SIGKILL
    /// after half a second), and closes its pipes.
    public func stop() {
        matcher.end()
        guard let child else { return }
        child.stop(grace: .milliseconds(500), group: true)
        termination = termination ?? child.termination
        streams = []
        child.closeDescriptors()
        self.child = nil
    }

    /// What the command did, for a failed expectation's detail: how it ended, its last line.
    public var account: String {
        if let startFailure { return "its log command could not start: \(startFailure)" }
        var parts: [String] = []
        parts.append(lines.isEmpty ? "its log printed nothing" : "its log printed \(lines.count) line\(lines.count == 1 ? "" : "s")")
        if let termination { parts.append("the command ended (\(termination))") }
        if let last = lines.last { parts.append("its last: \(String(last.text.prefix(200)))") }
        if cut > 0 { parts.append("\(cut) cut at \(Self.maximumLineBytes) bytes") }
        if dropped > 0 { parts.append("\(dropped) left out over \(Self.maximumLinesPerSecond) a second") }
        if notKept > 0 { parts.append("\(notKept) past the \(Self.maximumLines) kept") }
        if let overBudget {
            parts.append("matching stopped at \((overBudget.at * 10).rounded() / 10) s: a line ran its patterns over "
                         + "\(PhoneMatcher.budget) (it began: \(overBudget.line)); \(unmatched) line\(unmatched == 1 ? "" : "s") "
                         + "not matched")
        }
        return parts.joined(separator: "; ")
    }
}
