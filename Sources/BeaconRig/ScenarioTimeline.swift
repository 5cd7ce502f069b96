// SPDX-License-Identifier: GPL-2.0-or-later

/// What a run did, on its own clock, for a report a person looks at (`ScenarioReport`): each
/// beacon's spans on the air (from when its change was made to when its stop was), the
/// scanner's sightings of it, each region's states, the phones' matched lines and every step.
/// Bounded whatever the run's length: at most `maximumSightings` sightings in all (each
/// beacon's thinned to every second one, then every fourth, ..., as it grows: `stride` says
/// which were kept), and at most `maximumEntries` steps, region changes and phone lines each
/// (the first kept, the rest counted).
public struct ScenarioTimeline: Sendable {
    public struct Span: Sendable, Equatable {
        public var from: Double
        /// Nil: still on the air when the run ended.
        public var to: Double?
    }

    public struct Step: Sendable, Equatable {
        public var number: String
        public var round: String?
        public var text: String
        public var at: Double
    }

    public struct RegionChange: Sendable, Equatable {
        public var region: String
        public var at: Double
        public var state: String
    }

    /// Each beacon's spans on the air, by name.
    public private(set) var spans: [String: [Span]] = [:]
    /// Each beacon's sightings kept (every `stride[name]`-th of `sighted[name]`).
    public private(set) var sightings: [String: [Double]] = [:]
    public private(set) var stride: [String: Int] = [:]
    public private(set) var sighted: [String: Int] = [:]
    public private(set) var steps: [Step] = []
    public private(set) var regions: [RegionChange] = []
    public private(set) var phoneLines: [PhoneLine] = []
    /// Steps, region changes and phone lines not kept over `maximumEntries`.
    public private(set) var leftOut = 0
    /// The most sightings one beacon keeps: `maximumSightings` shared by the beacons.
    private let sightingsEach: Int

    public static let maximumSightings = 20_000
    public static let maximumEntries = 5_000

    public init(beacons: Int = 1) {
        sightingsEach = max(100, Self.maximumSightings / max(1, beacons))
    }

    mutating func began(_ names: [String], at: Double) {
        for name in names where spans[name]?.last.map({ $0.to != nil }) ?? true {
            spans[name, default: []].append(Span(from: at, to: nil))
        }
    }

    /// These beacons (nil: every one) went off the air at `at`.
    mutating func ended(_ names: [String]?, at: Double) {
        for name in names ?? Array(spans.keys) {
            guard let last = spans[name]?.indices.last, spans[name]?[last].to == nil else { continue }
            spans[name]?[last].to = at
        }
    }

    mutating func sighting(_ name: String, at: Double) {
        let count = sighted[name, default: 0]
        sighted[name] = count + 1
        let every = stride[name, default: 1]
        guard count % every == 0 else { return }
        sightings[name, default: []].append(at)
        if sightings[name, default: []].count >= sightingsEach {
            // Every second one of those kept: the stride doubles.
            sightings[name] = sightings[name, default: []].enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            stride[name] = every * 2
        }
    }

    mutating func step(_ number: String, _ round: String?, _ text: String, at: Double) {
        guard steps.count < Self.maximumEntries else { return leftOut += 1 }
        steps.append(Step(number: number, round: round, text: text, at: at))
    }

    mutating func region(_ region: String, _ state: String, at: Double) {
        guard regions.count < Self.maximumEntries else { return leftOut += 1 }
        regions.append(RegionChange(region: region, at: at, state: state))
    }

    mutating func phone(_ line: PhoneLine) {
        guard line.transition != nil else { return }
        guard phoneLines.count < Self.maximumEntries else { return leftOut += 1 }
        phoneLines.append(line)
    }
}
