// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation

/// A phone's patterns, read and matched with bounds: Swift's `Regex` backtracks without a step
/// limit and cannot be interrupted, so a pattern like `(\w+\s?)+ entered` takes time
/// exponential in the length of a line it fails on (75 letters: longer than any run).
///
/// Two bounds. When a scenario is read (`--check` too), a pattern whose repeated group holds a
/// repetition of its own or alternatives (the shape of every exponential case) is refused,
/// saying which group. When a run matches, it does so on a thread of its own and waits at most
/// `PhoneMatcher.budget` for each line: a line that takes longer is counted and reported, and
/// the phone's later lines are taken but not matched (not judged), the run going on.
public enum PhonePattern {
    /// Why a pattern is refused before it is ever run: a group repeated more than once (`+`,
    /// `*`, `{n,}`, `{n,m}` with m > 1) that holds a repetition of a varying count or
    /// alternatives. Nil for a pattern without one.
    public static func nestedRepetition(in pattern: String) -> String? {
        struct Group { var start: String.Index; var varies = false; var alternatives = false }
        var groups: [Group] = []
        var index = pattern.startIndex
        /// What the quantifier at `index` repeats, and its end: nil when none is there.
        func quantifier(at index: String.Index) -> (min: Int, max: Int?, end: String.Index)? {
            guard index < pattern.endIndex else { return nil }
            let character = pattern[index]
            var end = pattern.index(after: index)
            let bounds: (Int, Int?)
            switch character {
            case "*": bounds = (0, nil)
            case "+": bounds = (1, nil)
            case "?": bounds = (0, 1)
            case "{":
                guard let close = pattern[end...].firstIndex(of: "}") else { return nil }
                let inside = pattern[end..<close]
                let parts = inside.split(separator: ",", omittingEmptySubsequences: false)
                guard (1...2).contains(parts.count), parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
                      !inside.isEmpty, inside != "," else { return nil }
                let low = Int(parts[0]) ?? 0
                let high: Int? = parts.count == 1 ? low : parts[1].isEmpty ? nil : Int(parts[1])
                bounds = (low, high)
                end = pattern.index(after: close)
            default: return nil
            }
            // A lazy or possessive mark after it belongs to it.
            if end < pattern.endIndex, pattern[end] == "?" || pattern[end] == "+" { end = pattern.index(after: end) }
            return (bounds.0, bounds.1, end)
        }
        func markVarying() { if !groups.isEmpty { groups[groups.count - 1].varies = true } }
        while index < pattern.endIndex {
            let character = pattern[index]
            var next = pattern.index(after: index)
            var atom = true
            switch character {
            case "\\":
                if next < pattern.endIndex { next = pattern.index(after: next) }
                // \p{...}, \x{...}, \N{...}, \k<...>: the braces are the escape's own.
                if next < pattern.endIndex, pattern[next] == "{" || pattern[next] == "<",
                   let close = pattern[next...].firstIndex(of: pattern[next] == "{" ? "}" : ">") {
                    next = pattern.index(after: close)
                }
            case "[":
                // A class (nested classes and set operations included) is one atom; a `]` first
                // in it (after `[` or `[^`) is a member.
                var depth = 1
                var scan = next
                if scan < pattern.endIndex, pattern[scan] == "^" { scan = pattern.index(after: scan) }
                if scan < pattern.endIndex, pattern[scan] == "]" { scan = pattern.index(after: scan) }
                while scan < pattern.endIndex && depth > 0 {
                    switch pattern[scan] {
                    case "\\" where pattern.index(after: scan) < pattern.endIndex: scan = pattern.index(after: scan)
                    case "[": depth += 1
                    case "]": depth -= 1
                    default: break
                    }
                    scan = pattern.index(after: scan)
                }
                next = scan
            case "(":
                groups.append(Group(start: index))
                // `(?` opens a group's kind or name: that `?` repeats nothing.
                if next < pattern.endIndex, pattern[next] == "?" { next = pattern.index(after: next) }
                atom = false
            case ")":
                guard let group = groups.popLast() else { break }
                let holds = group.varies || group.alternatives
                if let (low, high, end) = quantifier(at: next) {
                    if holds && (high ?? Int.max) > 1 {
                        let text = String(pattern[group.start..<end].prefix(60))
                        return "\(text) repeats a group that holds \(group.varies ? "a repetition" : "alternatives") of its "
                            + "own: matching it can take time exponential in a line's length (write it without the "
                            + "nesting: a class such as [\\w\\s]+ instead of (\\w+\\s?)+)"
                    }
                    if low != high || holds { markVarying() }
                    next = end
                } else if holds {
                    markVarying()
                }
                atom = false
            case "|":
                if !groups.isEmpty { groups[groups.count - 1].alternatives = true }
                atom = false
            default:
                break
            }
            if atom, let (low, high, end) = quantifier(at: next) {
                if low != high { markVarying() }
                next = end
            }
            index = next
        }
        return nil
    }
}

/// A phone's compiled patterns matched on a thread of their own, each line within `budget`.
/// A line whose matching runs over it is answered `.overBudget`, and the matcher is spent:
/// every later line is `.overBudget` at once (the thread stays busy with that line until it
/// ends or the process does; nothing can stop a `Regex` midway).
package final class PhoneMatcher: @unchecked Sendable {
    /// How long one line's matching may take: a line of `PhoneLog.maximumLineBytes` against a
    /// sane pattern takes well under a millisecond; a quarter second keeps a run's signals
    /// answered within half a second even when two phones' patterns run over at once.
    static let budget: Duration = .milliseconds(250)

    package enum Outcome: Equatable {
        /// What the line says: its transition (nil: none) and region.
        case matched(Scenario.PhoneExpectation?, region: String?)
        /// The matching ran over the budget (this line), or had before (a later one).
        case overBudget
    }

    private let patterns: [(Scenario.PhoneExpectation, Regex<AnyRegexOutput>)]
    private let lock = NSLock()
    private let work = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Guarded by `lock`.
    private var line: String?
    private var answer: Outcome?
    private var ended = false
    /// Set on the caller's side only.
    private(set) var spent = false
    private var started = false

    init(_ patterns: [(Scenario.PhoneExpectation, Regex<AnyRegexOutput>)]) {
        self.patterns = patterns
    }

    /// What `text` says, waiting at most `budget`.
    func match(_ text: String) -> Outcome {
        guard !patterns.isEmpty else { return .matched(nil, region: nil) }
        guard !spent else { return .overBudget }
        if !started {
            started = true
            Thread.detachNewThread { [self] in serve() }
        }
        lock.withLock { line = text }
        work.signal()
        let milliseconds = Int(Self.budget.components.seconds * 1000 + Self.budget.components.attoseconds / 1_000_000_000_000_000)
        guard done.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else {
            spent = true
            return .overBudget
        }
        return lock.withLock { answer ?? .matched(nil, region: nil) }
    }

    /// Lets the thread go (a spent one goes when its line ends); the thread holds the matcher
    /// until then.
    func end() {
        lock.withLock { ended = true }
        work.signal()
    }

    private func serve() {
        while true {
            work.wait()
            guard let text = lock.withLock({ ended ? nil : line }) else { return }
            let outcome = Self.outcome(of: text, patterns)
            lock.withLock { answer = outcome }
            done.signal()
        }
    }

    /// The first pattern that matches decides (`state` lines: only `inside` or `outside`).
    package static func outcome(of text: String, _ patterns: [(Scenario.PhoneExpectation, Regex<AnyRegexOutput>)]) -> Outcome {
        for (kind, regex) in patterns {
            guard let match = try? regex.firstMatch(in: text) else { continue }
            let region = match.output["region"]?.substring.map(String.init)
            if kind == .inside {
                guard let state = match.output["state"]?.substring else { continue }
                guard let transition: Scenario.PhoneExpectation = state == "inside" ? .inside : state == "outside" ? .outside : nil
                else { continue }
                return .matched(transition, region: region)
            }
            return .matched(kind, region: region)
        }
        return .matched(nil, region: nil)
    }
}
