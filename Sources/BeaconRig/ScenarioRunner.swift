// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

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
    /// How early the changes at each instant of a timeline start.
    private var lead = ChangeLead()
    /// The phones whose app's log the run reads, and what the rig did for their expectations.
    private let phones: PhoneJudge

    private struct Interrupted: Error {}

    /// - Parameter phones: the scenario's phones' logs (started when the run starts, ended
    ///   with it, whatever ends it); the observer's wait should end when one is readable
    ///   (`LiveObserver`'s `wake`).
    public init(scenario: Scenario, stage: ScenarioStage, observer: ScenarioObserver,
                makeBeacon: @escaping BeaconFactory, phones: [PhoneLog] = [], report: @escaping (ScenarioEvent) -> Void) {
        self.scenario = scenario
        self.phones = PhoneJudge(scenario: scenario, logs: phones)
        outcome.timeline = ScenarioTimeline(beacons: scenario.beacons.count)
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
        phones.start()
        defer { phones.stop() }
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
            madeOffAir(nil)
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
            outcome.timeline.step(number, round, Self.text(step.action), at: at)
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
                madeOnAir(names)
                try settle(number, round, step, started: at)
            case let .update(name, changes):
                var merged = fields[name] ?? [:]
                merged.merge(changes) { $1 }
                let beacon: Beacon
                let own: BeaconParameters
                do {
                    let split = try BeaconDescription.parameters(in: merged)
                    own = split.parameters
                    beacon = try makeBeacon(split.fields, own)
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
                madeOffAir(names)
                // What the scanner received before the stop was made, and has not been read,
                // is what was on the air before it: taken in now, not seen after.
                for report in try observer.queued() { record(report) }
                try settle(number, round, step, started: at)
            case let .wait(seconds, paced):
                // Paced: to the deadline on the timeline, whatever the steps before it took, and
                // the changes after it started early enough to be made around it (a timeline
                // starts that much ahead, so that its first changes are too).
                let early = paced ? lead.lead(before: steps[(index + 1)...]) : 0
                let deadline = paced ? (due ?? at + early) + seconds : at + seconds
                if paced { due = deadline }
                try observe(until: deadline - early) { _ in false }
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
            case let .expectPhone(phone, region, expected, seconds):
                try expect(phone, region, expected, seconds, number, round, step, started: at)
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
            for line in phones.take(now: elapsed) {
                outcome.timeline.phone(line)
                report(.phone(line))
            }
            if done(nil) { return }
            // Within a microsecond is come (a clock's sums need not land on it exactly).
            if elapsed >= deadline - 0.000_001 { return }
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
        case let .withheld(text): "withheld: \(text)"
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
        switch event {
        case let .initialState(state, at): outcome.timeline.region(name, state.rawValue, at: at)
        case let .enter(at): outcome.timeline.region(name, "inside", at: at)
        case let .exit(at): outcome.timeline.region(name, "outside", at: at)
        }
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
        let beacons = sightings.map(\.beacon)
        for region in scenario.regions where region.contains(scanReport.data, beacons: beacons) {
            for event in monitors[region.name]?.sighted(at: now) ?? [] { regionEvent(region.name, event) }
            phones.heard(region.name, at: now)
        }
        for (name, beaconData) in data where scanReport.data == beaconData {
            lastSeen[name] = now
            outcome.timeline.sighting(name, at: now)
        }
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

    /// Whether a report carries beacon `name` as it is now: its data byte for byte, or, for a
    /// beacon whose content moves on the air (`Beacon.motion`: Eddystone-TLM's counters), that
    /// beacon moved on (`ContentMotion.isMovedOn`).
    private func isCurrent(_ report: ScanReport, of name: String) -> Bool {
        if report.data == data[name] { return true }
        guard let motion = beacons[name]?.motion, let heard = (try? report.sightings())?.first?.beacon else { return false }
        return motion.isMovedOn(heard)
    }

    private func seenInstead() -> String {
        seenDuringStep.isEmpty ? "no beacon" : seenDuringStep.joined(separator: "; ")
    }

    /// These beacons were made on the air now (their enable answered): for the phones'
    /// latencies and the report's spans.
    private func madeOnAir(_ names: [String]) {
        phones.advertised(names, at: elapsed)
        outcome.timeline.began(names, at: elapsed)
    }

    /// These beacons (nil: all) were made off the air now (their disable answered).
    private func madeOffAir(_ names: [String]?) {
        phones.stopped(names, at: elapsed)
        outcome.timeline.ended(names, at: elapsed)
    }

    /// A phone's expectation: judged from its app's lines as they come (`PhoneJudge`), with the
    /// latency from the rig's own change, and, where it fails, what the phone's command did and
    /// what the rig's radio did.
    private func expect(_ phone: String, _ region: String, _ expected: Scenario.PhoneExpectation, _ seconds: Double,
                        _ number: String, _ round: String?, _ step: Scenario.Step, started at: Double) throws {
        var met: PhoneLine?
        try observe(until: at + seconds) { _ in
            met = self.phones.line(phone, region, expected, since: at)
            return met != nil
        }
        met = met ?? phones.line(phone, region, expected, since: at)
        phones.finish(phone, region)
        let latency = met.flatMap { phones.latency(of: $0, region) }
        // No event is judged only over what was read: lines left out (a flood over the rate, past
        // the lines kept) may have held the event, so an expectation over them fails, saying so.
        let unread = expected == .noEvent && met == nil ? phones.unread(phone, from: at, to: elapsed) : 0
        let passed = expected == .noEvent ? met == nil && unread == 0 : met != nil
        var detail: String
        if unread > 0 {
            detail = "not judged: \(unread) line\(unread == 1 ? "" : "s") of \(phone)'s log in these \(Self.seconds(seconds)) "
                + "\(unread == 1 ? "was" : "were") not read (over \(PhoneLog.maximumLinesPerSecond) a second, past the "
                + "\(PhoneLog.maximumLines) kept, or not matched within \(PhoneMatcher.budget)) and may have held an enter or "
                + "exit of \(region)"
        } else if let met {
            detail = "\(met.transition?.rawValue ?? "") logged "
                + (met.at >= at ? "after \(Self.milliseconds(met.at - at))" : "at \(Self.seconds((met.at * 10).rounded() / 10)), before the step began")
                + (latency.map { " (\(Self.milliseconds($0)) after the rig's change)" } ?? "") + ": \(met.text)"
        } else if expected == .noEvent {
            detail = "no enter or exit of \(region) in \(phone)'s log for \(Self.seconds(seconds))"
        } else {
            detail = "no line of \(phone)'s log matched \(expected.rawValue) of \(region) within \(Self.seconds(seconds))"
        }
        if !passed { detail += "; " + phones.account(of: phone) + "; " + phones.radio(region) }
        var result = ScenarioResult(number: number, round: round, place: step.place, text: Self.text(step.action),
                                    passed: passed, started: at, ended: elapsed, detail: detail)
        result.phone = PhoneVerdict(phone: phone, region: region, logLine: met?.text, latency: latency)
        outcome.results.append(result)
        report(.expectation(result))
    }

    /// Waits for what the step asked of other machines: their delays reported, their failures
    /// the step's (a failed result; the run goes on).
    private func settle(_ number: String, _ round: String?, _ step: Scenario.Step, started: Double) throws {
        // Made: on the air once its last command was answered (an enable comes last).
        if let changeDue {
            outcome.lateness.note(elapsed - changeDue)
            lead.note(step.action, took: elapsed - started)
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
            // A key given inline is never shown (the step line, --json, the report).
            "update \(name): " + changes.sorted { $0.key < $1.key }
                .map { "\($0.key)=\(ScenarioParser.plain($0.key) == "identitykey" ? "(secret)" : $0.value)" }.joined(separator: ", ")
        case let .stop(names): "stop \(names?.joined(separator: ", ") ?? "all")"
        case let .wait(seconds, paced): "wait \(Self.seconds(seconds))" + (paced ? " (on the capture's clock)" : "")
        case let .expectSeen(name, within): "expect \(name) seen within \(Self.seconds(within))"
        case let .expectNotSeen(name, duration): "expect \(name) not seen for \(Self.seconds(duration))"
        case let .expectRegion(name, expected, within):
            switch expected {
            case .inside, .outside: "expect region \(name) \(expected.rawValue) within \(Self.seconds(within))"
            case .enter, .exit: "expect region \(name) \(expected.rawValue) event within \(Self.seconds(within))"
            }
        case let .expectPhone(phone, region, expected, seconds):
            switch expected {
            case .noEvent: "expect phone \(phone): no event of region \(region) for \(Self.seconds(seconds))"
            case .inside, .outside: "expect phone \(phone): region \(region) \(expected.rawValue) within \(Self.seconds(seconds))"
            case .enter, .exit: "expect phone \(phone): region \(region) \(expected.rawValue) event within \(Self.seconds(seconds))"
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
