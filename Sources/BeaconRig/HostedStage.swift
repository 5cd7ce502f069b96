// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports

/// A scenario's stage across machines: the beacons without a host on this machine's device
/// (`local`), the others each on its box, through the box's control session (`RemoteBox`).
/// What a step asks of the boxes is sent to all of them at once; `finishStep` waits for their
/// answers, so a box's failure fails that step, not the run.
public final class HostedStage: ScenarioStage {
    private let local: ScenarioStage?
    private let boxes: [String: RemoteBox]
    /// Each remote beacon's box.
    private let hostOf: [String: String]
    private let fieldsOf: (Beacon) -> [String: String]
    /// Each remote beacon on the air: its id on its box (from the box's reply to add).
    private var ids: [String: Int] = [:]
    /// This step's failures so far.
    private var failures: [String] = []
    /// When this step first wrote to a box, and which boxes it wrote to.
    private var stepStarted: ContinuousClock.Instant?
    private var touched: [String] = []
    /// Readable when a signal asks the run to end: a step's wait for the boxes ends then.
    private let interrupt: Int32?
    /// The run is ending (`stopAll`): the boxes' answers to it are waited for whatever a signal asks.
    private var ending = false
    /// The stage's time at its last tick, and the clock's then: this machine's beacons are
    /// served at the stage's time while a step waits for the boxes.
    private var lastTick: (now: Double, at: ContinuousClock.Instant)?
    /// What serving this machine's beacons threw while the boxes were waited for: thrown at
    /// the next tick.
    private var pending: HostError?

    /// - Parameters:
    ///   - local: this machine's stage; nil when every beacon has a host.
    ///   - boxes: the open sessions, by host name.
    ///   - hosts: each remote beacon's host name, by beacon name.
    ///   - fieldsOf: a beacon's fields in the `--beacon` keys (what the control protocol takes).
    ///   - interrupt: the signal pipe: readable, a step stops waiting for the boxes.
    public init(local: ScenarioStage?, boxes: [String: RemoteBox], hosts: [String: String],
                fieldsOf: @escaping (Beacon) -> [String: String], interrupt: Int32? = nil) {
        self.local = local
        self.interrupt = interrupt
        self.boxes = boxes
        hostOf = hosts
        self.fieldsOf = fieldsOf
    }

    public func advertise(_ name: String, _ beacon: Beacon, parameters: BeaconParameters) throws(HostError) {
        guard let host = hostOf[name] else { return try localStage(name).advertise(name, beacon, parameters: parameters) }
        if ids[name] != nil { return try update(name, to: beacon) }
        // Its own parameters go with its fields, as `control add` takes them.
        var fields = Self.object(fieldsOf(beacon))
        if case let .object(data) = fields { fields = .object(data.merging(parameters.fields) { $1 }) }
        send(to: host, .add(beacon: fields), what: "advertise \(name)") { reply in
            guard let id = reply.id else { return "\(host): advertise \(name): the reply has no id: \(reply.line)" }
            self.ids[name] = id
            return nil
        }
    }

    public func update(_ name: String, to beacon: Beacon) throws(HostError) {
        guard let host = hostOf[name] else { return try localStage(name).update(name, to: beacon) }
        // Not on the air: its next advertise sends the beacon as it is then.
        guard let id = ids[name] else { return }
        send(to: host, .update(id: id, fields: Self.object(fieldsOf(beacon))),
             what: "update \(name)") { _ in nil }
    }

    /// On a box, the parameters given are sent as an update (the box merges them with those
    /// the beacon has); off the air, the runner gives them to the next advertise.
    public func setParameters(_ name: String, _ parameters: BeaconParameters) throws(HostError) {
        guard let host = hostOf[name] else { return try localStage(name).setParameters(name, parameters) }
        guard let id = ids[name], !parameters.fields.isEmpty else { return }
        send(to: host, .update(id: id, fields: .object(parameters.fields)), what: "set \(name)'s parameters") { _ in nil }
    }

    public func stop(_ name: String) throws(HostError) {
        guard let host = hostOf[name] else { return try localStage(name).stop(name) }
        guard let id = ids.removeValue(forKey: name) else { return }
        send(to: host, .remove(id: id), what: "stop \(name)") { _ in nil }
    }

    public func stopAll() throws(HostError) {
        ending = true
        for (name, id) in ids.sorted(by: { $0.key < $1.key }) {
            send(to: hostOf[name]!, .remove(id: id), what: "stop \(name)") { _ in nil }
        }
        ids.removeAll()
        try local?.stopAll()
    }

    public var nextDeadline: Double? { local?.nextDeadline }
    public var wakeDescriptors: [Int32] { local?.wakeDescriptors ?? [] }
    public func takeSupervisionEvents() -> [EmitterEvent] { local?.takeSupervisionEvents() ?? [] }

    public func tick(now: Double) throws(HostError) {
        lastTick = (now, .now)
        if let pending {
            self.pending = nil
            throw pending
        }
        try local?.tick(now: now)
    }

    public func finishStep(waitingIn observer: ScenarioObserver) -> StepSettlement {
        defer {
            failures = []
            touched = []
            stepStarted = nil
        }
        guard let started = stepStarted else { return StepSettlement() }
        let asked = touched.compactMap { boxes[$0] }
        // This machine's beacons are kept on the air in the same wait (a disruption meanwhile
        // costs one gap, not the boxes' wait).
        let beside = local.map { [LocalBeacons(stage: $0, at: lastTick, failed: { [weak self] in self?.pending = $0 })] } ?? []
        // In the observer's wait (its scan goes on), but for the run's end: a wait of its own
        // then, which a signal does not end.
        let collected = ending ? RemoteBox.collect(asked, beside: beside)
            : RemoteBox.collect(asked, interrupt: interrupt, beside: beside, waitingIn: observer)
        var settlement = StepSettlement(failures: failures + collected.failures, interrupted: collected.interrupted)
        for box in asked where box.lost == nil {
            guard let answered = box.lastReply, answered >= started else { continue }
            settlement.applied.append((box.name, started.duration(to: answered).inSeconds))
        }
        return settlement
    }

    private func send(to host: String, _ request: ControlRequest, what: String,
                      handle: @escaping (ControlReply) -> String?) {
        guard let box = boxes[host] else {
            failures.append("\(host): \(what): no session to this host")
            return
        }
        if stepStarted == nil { stepStarted = .now }
        if !touched.contains(host) { touched.append(host) }
        if let failure = box.send(request, what: what, handle: handle) { failures.append(failure) }
    }

    private func localStage(_ name: String) throws(HostError) -> ScenarioStage {
        guard let local else { throw .unsupported("'\(name)' has no host and this run has no device of its own") }
        return local
    }

    /// Fields as the control protocol takes them: the number fields as numbers, the rest as text.
    static func object(_ fields: [String: String]) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (key, value) in fields {
            guard ScenarioParser.numberFields.contains(ScenarioParser.plain(key)) else {
                object[key] = .string(value)
                continue
            }
            object[key] = Int(value).map(JSONValue.integer) ?? Double(value).map(JSONValue.number) ?? .string(value)
        }
        return .object(object)
    }
}

/// This machine's beacons in the wait for the boxes: their session's input taken in and what
/// is due done (`ScenarioStage.tick`) at the stage's time, which runs with the clock from its
/// last tick.
private final class LocalBeacons: RunLoopSource {
    private let stage: ScenarioStage
    private let origin: (now: Double, at: ContinuousClock.Instant)
    private let failed: (HostError) -> Void
    /// It threw: not served again in this wait (the next tick throws it).
    private var stopped = false

    init(stage: ScenarioStage, at tick: (now: Double, at: ContinuousClock.Instant)?, failed: @escaping (HostError) -> Void) {
        self.stage = stage
        origin = tick ?? (0, .now)
        self.failed = failed
    }

    var descriptors: [Int32] { stopped ? [] : stage.wakeDescriptors }

    var due: ContinuousClock.Instant? {
        guard !stopped else { return nil }
        return stage.nextDeadline.map { origin.at + .seconds(max(0, $0 - origin.now)) }
    }

    func serve() {
        do {
            try stage.tick(now: origin.now + origin.at.duration(to: .now).inSeconds)
        } catch {
            stopped = true
            failed(error)
        }
    }
}
