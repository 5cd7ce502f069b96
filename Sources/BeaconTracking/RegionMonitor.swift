// SPDX-License-Identifier: GPL-2.0-or-later

/// Region monitoring with Core Location's semantics, driven by the caller's clock (seconds):
/// the initial state is reported once, then `enter` on the first matching sighting while
/// outside, and `exit` only after no matching sighting for `exitAfter` seconds.
public struct RegionMonitor: Sendable {
    public enum State: String, Sendable { case unknown, inside, outside }

    /// What the monitor reports.
    public enum Event: Sendable, Equatable {
        /// The state at start, reported once (no enter or exit with it).
        case initialState(State, at: Double)
        case enter(at: Double)
        case exit(at: Double)
    }

    public let exitAfter: Double
    /// How long to listen at start before deciding the initial state is "outside".
    public let initialWindow: Double
    public private(set) var state: State = .unknown
    private let start: Double
    private var lastSeen: Double?

    public init(start: Double, exitAfter: Double = 30, initialWindow: Double = 2) {
        self.start = start
        self.exitAfter = exitAfter
        self.initialWindow = initialWindow
    }

    /// A matching beacon was seen at `time`.
    public mutating func sighted(at time: Double) -> [Event] {
        lastSeen = time
        switch state {
        case .unknown:
            state = .inside
            return [.initialState(.inside, at: time)]
        case .outside:
            state = .inside
            return [.enter(at: time)]
        case .inside:
            return []
        }
    }

    /// Time passed; reports the initial "outside" or an exit when due.
    public mutating func tick(now: Double) -> [Event] {
        switch state {
        case .unknown where now - start >= initialWindow:
            state = .outside
            return [.initialState(.outside, at: now)]
        case .inside:
            if let lastSeen, now - lastSeen >= exitAfter {
                state = .outside
                return [.exit(at: now)]
            }
            return []
        default:
            return []
        }
    }

    /// When the next `tick` could report something, for the caller's wait.
    public var nextDeadline: Double? {
        switch state {
        case .unknown: start + initialWindow
        case .inside: lastSeen.map { $0 + exitAfter }
        case .outside: nil
        }
    }
}
