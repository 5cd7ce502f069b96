// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// What advertises a scenario's beacons, by name.
public protocol ScenarioStage: AnyObject {
    /// Puts a beacon on the air with its own parameters (`.run`: the run's).
    func advertise(_ name: String, _ beacon: Beacon, parameters: BeaconParameters) throws(HostError)
    /// Changes a beacon on the air in place (its data only).
    func update(_ name: String, to beacon: Beacon) throws(HostError)
    /// Changes a beacon's own parameters (interval, TX power): on the air, a short gap; off
    /// it, when it next goes on.
    func setParameters(_ name: String, _ parameters: BeaconParameters) throws(HostError)
    func stop(_ name: String) throws(HostError)
    /// Puts several beacons on the air at once, as one change where the stage can (a replay's
    /// beacons coming at one instant).
    func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError)
    /// Takes several beacons off the air at once, as one change where the stage can.
    func stop(_ names: [String]) throws(HostError)
    /// Takes every beacon off the air; at the end of a run, and after an error.
    func stopAll() throws(HostError)
    /// When the stage next has something to do by itself (beacons taking turns), in the
    /// runner's seconds; nil for never.
    var nextDeadline: Double? { get }
    /// Time passed (the runner's seconds): does what is due.
    func tick(now: Double) throws(HostError)
    /// Waits for what the step asked of other machines (`HostedStage`), in the observer's wait
    /// (`ScenarioObserver.wait(beside:while:)`: its scan goes on meanwhile), and says how it went.
    func finishStep(waitingIn observer: ScenarioObserver) -> StepSettlement
    /// Readable when the stage has input to take in (its controller's link, the kernel's
    /// watchers; they change after a restore): the observer's waits end then, and the runner
    /// ticks the stage.
    var wakeDescriptors: [Int32] { get }
    /// What happened to the beacons on the air since the last call: knocked off, waiting for
    /// the adapter, put back (the supervisor's reports, as `advertise` has them).
    func takeSupervisionEvents() -> [EmitterEvent]
}

/// What a step asked of other machines, once they answered.
public struct StepSettlement: Sendable {
    /// One message per failure: a refusal, or a box that dropped out.
    public var failures: [String] = []
    /// Each box the step changed, and the time from the step's first request to that box's
    /// last reply (the change applied there).
    public var applied: [(host: String, seconds: Double)] = []
    /// A signal asked the run to end while the step waited for the boxes.
    public var interrupted = false

    public init(failures: [String] = [], applied: [(host: String, seconds: Double)] = [], interrupted: Bool = false) {
        self.failures = failures
        self.applied = applied
        self.interrupted = interrupted
    }
}

extension ScenarioStage {
    /// One by one.
    public func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) {
        for each in beacons { try advertise(each.name, each.beacon, parameters: each.parameters) }
    }

    /// One by one.
    public func stop(_ names: [String]) throws(HostError) {
        for name in names { try stop(name) }
    }

    public var nextDeadline: Double? { nil }
    public func tick(now: Double) throws(HostError) {}
    public func finishStep(waitingIn observer: ScenarioObserver) -> StepSettlement { StepSettlement() }
    public var wakeDescriptors: [Int32] { [] }
    public func takeSupervisionEvents() -> [EmitterEvent] { [] }
}

/// What a scenario's observer gave while it waited.
public enum Observation: Sendable {
    case report(ScanReport)
    case deadline
    /// A signal asked the run to end.
    case interrupted
}

/// The scenario's clock and its second device: time in seconds, and the reports the second
/// device receives. Without a scanner it only waits. Tests inject one that scripts both.
public protocol ScenarioObserver: AnyObject {
    /// Seconds on a monotonic clock.
    var now: Double { get }
    /// The next report, or `.deadline` once `deadline` has come.
    func next(until deadline: Double) throws(HostError) -> Observation
    /// The reports already received and not yet read, without waiting.
    func queued() throws(HostError) -> [ScanReport]
    /// Waits beside `sources` (what a step asked of other machines, `RemoteBox`) while `busy`
    /// says so, in the observer's own wait: what it scans meanwhile is kept for `next`.
    /// - Returns: true when a signal asked the run to end.
    /// - Throws: `HostError` when the wait itself fails.
    func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool
}

extension ScenarioObserver {
    public func queued() throws(HostError) -> [ScanReport] { [] }

    /// A wait of its own, for an observer that has none (it simulates the air).
    public func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool {
        let loop = EventLoop(interrupt: nil, sources: sources, what: "the step's wait")
        defer { loop.close() }
        return try loop.run(until: nil, proceed: busy)
    }
}

/// What happens during a run, as it happens. Times are seconds since the run began.
public enum ScenarioEvent: Sendable {
    /// A step begins. `number` is its position ("3", or "4.2" inside a repeat), `round` its
    /// round of a repeat (1 of 3), `text` what it does.
    case step(number: String, round: String?, place: Scenario.Place, text: String, at: Double)
    /// An expectation's verdict.
    case expectation(ScenarioResult)
    /// The observer received a beacon's new data after an update; `gap`: from the last report
    /// of its old data to the first of the new (nil if the old data was never received): the
    /// time the beacon was not heard across the change.
    case updateArrived(beacon: String, at: Double, afterUpdate: Double, gap: Double?)
    /// A region's state changed (Core Location's timing).
    case region(String, RegionMonitor.Event)
    /// The boxes a step changed answered: each box's delay from the step's first request to
    /// its reply, in seconds.
    case applied(number: String, round: String?, hosts: [(host: String, seconds: Double)], at: Double)
    /// Something knocked this machine's beacons off the air, or they are back (`advertise`'s
    /// supervisor's report), during step `number`.
    case supervision(EmitterEvent, number: String, round: String?, at: Double)
}

/// A disruption of the beacons on the air during a step, in words (`ScenarioOutcome.disruptions`).
public struct StepDisruption: Sendable {
    public var number: String
    public var round: String?
    public var at: Double
    public var text: String
}

/// One expectation's verdict.
public struct ScenarioResult: Sendable {
    public var number: String
    public var round: String?
    public var place: Scenario.Place
    public var text: String
    public var passed: Bool
    /// When the step began and when its verdict was reached.
    public var started: Double
    public var ended: Double
    /// What met the expectation, or what was seen instead.
    public var detail: String
}

/// How a run ended.
public struct ScenarioOutcome: Sendable {
    public var results: [ScenarioResult] = []
    /// The error that ended the run early (the beacons were taken off the air).
    public var error: HostError?
    public var interrupted = false
    public var duration: Double = 0
    /// What knocked the beacons off the air and put them back, by step.
    public var disruptions: [StepDisruption] = []
    /// On a timeline (paced waits: a replay's), how late its steps began against when they were
    /// due, in seconds: the largest, the sum, and how many steps.
    public var lateness = Lateness()

    public struct Lateness: Sendable {
        public var largest = 0.0
        public var total = 0.0
        public var steps = 0
        public var mean: Double { steps > 0 ? total / Double(steps) : 0 }

        mutating func note(_ seconds: Double) {
            let late = max(0, seconds)
            largest = max(largest, late)
            total += late
            steps += 1
        }
    }

    public var failures: Int { results.filter { !$0.passed }.count }
    public var passed: Bool { error == nil && !interrupted && failures == 0 }
}

/// Runs a scenario's steps in order on a stage, checking expectations against what the
/// observer receives, and takes every beacon off the air at the end whatever happened.
public final class ScenarioRunner {
    private let scenario: Scenario
    private let stage: ScenarioStage
    private let observer: ScenarioObserver
    private let makeBeacon: BeaconFactory
    private let report: (ScenarioEvent) -> Void

    private var start = 0.0
    private var fields: [String: [String: String]] = [:]
    private var beacons: [String: Beacon] = [:]
    /// Each beacon's own parameters (`interval`, `txPower`; a ramp's level).
    private var parameters: [String: BeaconParameters] = [:]
    private var data: [String: [UInt8]] = [:]
    /// An update whose new data the observer has not received yet: the old data, when the
    /// update began, and when the old data was last received (before or after it began).
    private var pending: [String: (old: [UInt8], at: Double, lastOld: Double?)] = [:]
    /// When the observer last received each beacon's current data.
    private var lastSeen: [String: Double] = [:]
    private var monitors: [String: RegionMonitor] = [:]
    /// Region events since the run began, for expectations of a transition.
    private var regionEvents: [(region: String, event: RegionMonitor.Event)] = []
    /// Per region, where in `regionEvents` its last expectation ended: an expected enter or
    /// exit counts from there, so one raised by an earlier step (the sighting `expect seen`
    /// waited for) still counts, and each transition meets one expectation at most.
    private var regionChecked: [String: Int] = [:]
    /// Beacons received during the current expectation (described), for "seen instead".
    private var seenDuringStep: [String] = []
    private var outcome = ScenarioOutcome()
    /// The step running now (its number and round), for what the stage reports meanwhile.
    private var current: (number: String, round: String?) = ("0", nil)
    /// When the steps now are due, on a timeline of paced waits (nil: none now).
    private var due: Double?
    /// When the change running now was due, judged once it is made.
    private var changeDue: Double?

    private struct Interrupted: Error {}

    public init(scenario: Scenario, stage: ScenarioStage, observer: ScenarioObserver,
                makeBeacon: @escaping BeaconFactory, report: @escaping (ScenarioEvent) -> Void) {
        self.scenario = scenario
        self.stage = stage
        self.observer = observer
        self.makeBeacon = makeBeacon
        self.report = report
        for definition in scenario.beacons {
            fields[definition.name] = definition.fields
            beacons[definition.name] = definition.beacon
            parameters[definition.name] = definition.parameters
            data[definition.name] = definition.beacon.advertisingData.bytes
        }
    }

    /// Runs every step; never leaves a beacon on the air.
    public func run() -> ScenarioOutcome {
        start = observer.now
        for region in scenario.regions {
            monitors[region.name] = RegionMonitor(start: 0, exitAfter: scenario.exitAfter)
        }
        do {
            try run(scenario.steps, prefix: "", round: nil)
        } catch let error as HostError {
            outcome.error = error
        } catch {
            outcome.interrupted = true
        }
        do {
            let at = elapsed
            current = ("end", nil)
            reportSupervision()
            try stage.stopAll()
            try? settle("end", nil, Scenario.Step(.stop(nil)), started: at)  // (never interrupted: the boxes are waited for)
        } catch {
            outcome.error = outcome.error ?? error
        }
        outcome.duration = elapsed
        return outcome
    }

    private var elapsed: Double { observer.now - start }

    private func run(_ steps: [Scenario.Step], prefix: String, round: String?) throws {
        for (index, step) in steps.enumerated() {
            let number = prefix + String(index + 1)
            let at = elapsed
            try tickStage()
            current = (number, round)
            report(.step(number: number, round: round, place: step.place, text: Self.text(step.action), at: at))
            switch step.action {
            case .advertise, .update, .stop:
                // On a timeline each change is judged against when it was due, once made (`settle`).
                changeDue = due
            case .wait(_, paced: true), .repeatSteps:
                break
            default:
                due = nil
            }
            switch step.action {
            case let .advertise(names):
                var coming: [(name: String, beacon: Beacon, parameters: BeaconParameters)] = []
                for name in names {
                    guard let beacon = beacons[name] else { throw HostError.unsupported("no beacon named '\(name)'") }
                    coming.append((name, beacon, parameters[name] ?? .run))
                }
                try stage.advertise(coming)
                try settle(number, round, step, started: at)
            case let .update(name, changes):
                var merged = fields[name] ?? [:]
                merged.merge(changes) { $1 }
                let beacon: Beacon
                let own: BeaconParameters
                do {
                    let split = try BeaconDescription.parameters(in: merged)
                    own = split.parameters
                    beacon = try makeBeacon(split.fields)
                } catch {
                    throw HostError.unsupported("update of '\(name)': \(error)")
                }
                let old = data[name] ?? []
                fields[name] = merged
                beacons[name] = beacon
                data[name] = beacon.advertisingData.bytes
                if data[name] != old { pending[name] = (old, elapsed, lastSeen[name]) }
                lastSeen[name] = nil
                try stage.update(name, to: beacon)
                if own != parameters[name] ?? .run {
                    parameters[name] = own
                    try stage.setParameters(name, own)
                }
                try settle(number, round, step, started: at)
            case let .stop(names):
                if let names {
                    try stage.stop(names)
                } else {
                    try stage.stopAll()
                }
                // What the scanner received before the stop was made, and has not been read,
                // is what was on the air before it: taken in now, not seen after.
                for report in try observer.queued() { record(report) }
                try settle(number, round, step, started: at)
            case let .wait(seconds, paced):
                // Paced: to the deadline on the timeline, whatever the steps before it took.
                let deadline = paced ? (due ?? at) + seconds : at + seconds
                if paced { due = deadline }
                try observe(until: deadline) { _ in false }
            case let .expectSeen(name, within):
                let seenAt = try firstReport(of: name, until: at + within)
                conclude(number, round, step, started: at, passed: seenAt != nil, detail: seenAt.map {
                    "seen after \(Self.milliseconds($0 - at))"
                } ?? "not seen within \(Self.seconds(within)); seen instead: " + seenInstead())
            case let .expectNotSeen(name, duration):
                let seenAt = try firstReport(of: name, until: at + duration)
                conclude(number, round, step, started: at, passed: seenAt == nil, detail: seenAt.map {
                    "seen after \(Self.milliseconds($0 - at))"
                } ?? "not seen for \(Self.seconds(duration))")
            case let .expectRegion(name, expected, within):
                let eventsBefore = regionChecked[name] ?? 0
                var metAt: Double?
                let met = { () -> Bool in
                    switch expected {
                    case .inside: self.monitors[name]?.state == .inside
                    case .outside: self.monitors[name]?.state == .outside
                    case .enter: self.regionEvents[eventsBefore...].contains { $0.region == name && Self.isEnter($0.event) }
                    case .exit: self.regionEvents[eventsBefore...].contains { $0.region == name && Self.isExit($0.event) }
                    }
                }
                try observe(until: at + within) { _ in
                    guard met() else { return false }
                    metAt = self.elapsed
                    return true
                }
                regionChecked[name] = regionEvents.count
                let state = monitors[name]?.state.rawValue ?? "unknown"
                conclude(number, round, step, started: at, passed: metAt != nil, detail: metAt.map {
                    "\(expected.rawValue) after \(Self.milliseconds($0 - at))"
                } ?? "not \(expected.rawValue) within \(Self.seconds(within)); the region is \(state)")
            case let .repeatSteps(times, inner):
                for pass in 1...times {
                    try run(inner, prefix: number + ".", round: "\(pass)/\(times)")
                }
            case let .ramp(name, from, to, stepSize, every):
                let levels = Array(stride(from: from, through: to, by: from <= to ? stepSize : -stepSize))
                for level in levels {
                    var own = parameters[name] ?? .run
                    own.txPower = Int8(level)
                    try stage.setParameters(name, own)
                    parameters[name] = own
                    try observe(until: elapsed + every) { _ in false }
                }
            }
        }
    }

    /// Hands every report to the bookkeeping (regions, updates) until `deadline` or until
    /// `done` says the step has what it waited for; `done` is asked after each report, and
    /// with nil after time passed (a region's state can change without a report).
    private func observe(until deadline: Double, done: (ScanReport?) -> Bool) throws {
        while true {
            tickRegions()
            try tickStage()
            if done(nil) { return }
            if elapsed >= deadline { return }
            let wait = min(deadline, nextRegionDeadline ?? deadline, stage.nextDeadline ?? deadline)
            switch try observer.next(until: start + wait) {
            case .interrupted:
                throw Interrupted()
            case .deadline:
                continue
            case let .report(scanReport):
                record(scanReport)
                if done(scanReport) { return }
            }
        }
    }

    /// Lets the stage do what is due, and reports what happened to its beacons meanwhile.
    private func tickStage() throws(HostError) {
        defer { reportSupervision() }
        try stage.tick(now: elapsed)
    }

    private func reportSupervision() {
        for event in stage.takeSupervisionEvents() {
            let at = elapsed
            report(.supervision(event, number: current.number, round: current.round, at: at))
            if let text = Self.text(event) {
                outcome.disruptions.append(StepDisruption(number: current.number, round: current.round, at: at, text: text))
            }
        }
    }

    /// A supervisor's report in words (nil for a step of the flow, which `--verbose` shows).
    public static func text(_ event: EmitterEvent) -> String? {
        switch event {
        case let .offAir(disruption): "off the air: \(disruption)"
        case let .waiting(availability): "waiting for the adapter: it is \(availability == .down ? "down" : "gone")"
        case let .restoreFailed(error, retryIn): "could not put the beacons back yet (again in \(milliseconds(retryIn.inSeconds))): \(error)"
        case let .restored(cause, gap, _): "back on the air after \(milliseconds(gap.inSeconds)) off (\(cause))"
        case let .leftBehind(error): "left on the air: \(error)"
        case let .warning(text): text
        default: nil
        }
    }

    private var nextRegionDeadline: Double? {
        monitors.values.compactMap(\.nextDeadline).min().map { $0 + 0.001 }
    }

    private func tickRegions() {
        let now = elapsed
        for name in monitors.keys.sorted() {
            for event in monitors[name]?.tick(now: now) ?? [] { regionEvent(name, event) }
        }
    }

    private func regionEvent(_ name: String, _ event: RegionMonitor.Event) {
        regionEvents.append((name, event))
        report(.region(name, event))
    }

    private func record(_ scanReport: ScanReport) {
        let now = elapsed
        let sightings = (try? scanReport.sightings()) ?? []
        // What was heard, for an expectation's message: the first five beacons (formatted only
        // until there are five).
        for sighting in sightings where seenDuringStep.count < 5 {
            let text = SightingFormatter.text(BeaconSighting(beacon: sighting.beacon))
            if !seenDuringStep.contains(text) { seenDuringStep.append(text) }
        }
        for region in scenario.regions where sightings.contains(where: { region.region.matches($0.beacon) }) {
            for event in monitors[region.name]?.sighted(at: now) ?? [] { regionEvent(region.name, event) }
        }
        for (name, beaconData) in data where scanReport.data == beaconData { lastSeen[name] = now }
        for (name, update) in pending {
            if scanReport.data == update.old {
                pending[name]?.lastOld = now
            } else if scanReport.data == data[name] {
                pending[name] = nil
                report(.updateArrived(beacon: name, at: now, afterUpdate: now - update.at,
                                      gap: update.lastOld.map { now - $0 }))
            }
        }
    }

    /// When the observer first receives beacon `name` as it is now, before `deadline`; nil if
    /// it does not (what it received instead is kept for the message).
    private func firstReport(of name: String, until deadline: Double) throws -> Double? {
        seenDuringStep = []
        var seenAt: Double?
        try observe(until: deadline) { report in
            guard let report, self.isCurrent(report, of: name) else { return false }
            seenAt = self.elapsed
            return true
        }
        return seenAt
    }

    /// Whether a report carries beacon `name` as it is now: its data byte for byte, or, for an
    /// Eddystone-TLM beacon (whose counters move on the air), a TLM frame with its battery and
    /// temperature.
    private func isCurrent(_ report: ScanReport, of name: String) -> Bool {
        if report.data == data[name] { return true }
        guard case let .eddystone(.tlm(wanted)) = beacons[name],
              case let .eddystone(.tlm(frame))? = (try? report.sightings())?.first?.beacon else { return false }
        return frame.batteryMillivolts == wanted.batteryMillivolts && frame.rawTemperature == wanted.rawTemperature
    }

    private func seenInstead() -> String {
        seenDuringStep.isEmpty ? "no beacon" : seenDuringStep.joined(separator: "; ")
    }

    /// Waits for what the step asked of other machines: their delays reported, their failures
    /// the step's (a failed result; the run goes on).
    private func settle(_ number: String, _ round: String?, _ step: Scenario.Step, started: Double) throws {
        // Made: on the air once its last command was answered (an enable comes last).
        if let changeDue {
            outcome.lateness.note(elapsed - changeDue)
            self.changeDue = nil
        }
        let settlement = stage.finishStep(waitingIn: observer)
        if settlement.interrupted { throw Interrupted() }
        if !settlement.applied.isEmpty { report(.applied(number: number, round: round, hosts: settlement.applied, at: elapsed)) }
        guard !settlement.failures.isEmpty else { return }
        conclude(number, round, step, started: started, passed: false, detail: settlement.failures.joined(separator: "; "))
    }

    private func conclude(_ number: String, _ round: String?, _ step: Scenario.Step, started: Double, passed: Bool,
                          detail: String) {
        let result = ScenarioResult(number: number, round: round, place: step.place, text: Self.text(step.action),
                                    passed: passed, started: started, ended: elapsed, detail: detail)
        outcome.results.append(result)
        report(.expectation(result))
    }

    private static func isEnter(_ event: RegionMonitor.Event) -> Bool {
        switch event {
        case .enter, .initialState(.inside, _): true
        default: false
        }
    }

    private static func isExit(_ event: RegionMonitor.Event) -> Bool {
        if case .exit = event { return true }
        return false
    }

    /// What a step does, in words.
    public static func text(_ action: Scenario.Action) -> String {
        switch action {
        case let .advertise(names): "advertise \(names.joined(separator: ", "))"
        case let .update(name, changes):
            "update \(name): " + changes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        case let .stop(names): "stop \(names?.joined(separator: ", ") ?? "all")"
        case let .wait(seconds, paced): "wait \(Self.seconds(seconds))" + (paced ? " (on the capture's clock)" : "")
        case let .expectSeen(name, within): "expect \(name) seen within \(Self.seconds(within))"
        case let .expectNotSeen(name, duration): "expect \(name) not seen for \(Self.seconds(duration))"
        case let .expectRegion(name, expected, within):
            switch expected {
            case .inside, .outside: "expect region \(name) \(expected.rawValue) within \(Self.seconds(within))"
            case .enter, .exit: "expect region \(name) \(expected.rawValue) event within \(Self.seconds(within))"
            }
        case let .repeatSteps(times, steps): "repeat \(times) times (\(steps.count) steps)"
        case let .ramp(name, from, to, step, every): "ramp \(name) TX power \(from) to \(to) dBm, \(step) dB every \(Self.seconds(every))"
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    static func milliseconds(_ value: Double) -> String {
        "\(Int((value * 1000).rounded())) ms"
    }
}
