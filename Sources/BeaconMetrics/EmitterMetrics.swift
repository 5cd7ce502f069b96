// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import Foundation
import Prometheus

/// An emitter's metrics, in Prometheus' text exposition (`exposition()`), written by
/// swift-prometheus. What the emitter reports (`note(_:)`: on the air, off it and why, back
/// and how long it took), what its control socket answered (`noteControl`), and, read at each
/// scrape (`sample`), its beacons, its canary and the control socket's refusals; the process's
/// own figures as Prometheus clients export them.
///
/// Labels stay bounded: the adapter, a disruption's kind (a fixed set), a control command and
/// outcome (fixed sets), a canary beacon's slot (a number from 1 held while the beacon is there;
/// a removed one's series goes with it and its slot goes to the next beacon added, so over the
/// process's life the values stay within the most beacons there at once, whatever the control
/// ids grow to).
public final class EmitterMetrics {
    public let registry: PrometheusCollectorRegistry

    /// What the emitter has now, read at each scrape.
    public struct Sample: Sendable {
        /// The beacons it advertises (on the air or waiting for their turn, or off the air
        /// with the adapter).
        public var beacons: Int
        /// With a canary: each beacon's control id, whether the canary hears it now, and how
        /// long ago it last did (nil: not yet).
        public var canary: [(id: Int, heard: Bool, lastHeard: Duration?)]?
        /// The control socket's refusals by why (`ControlServer.Refusals.counts`).
        public var controlRefusals: [String: Int]

        public init(beacons: Int, canary: [(id: Int, heard: Bool, lastHeard: Duration?)]? = nil,
                    controlRefusals: [String: Int] = [:]) {
            self.beacons = beacons
            self.canary = canary
            self.controlRefusals = controlRefusals
        }
    }

    /// Read at each scrape; nil: no beacons.
    public var sample: (() -> Sample)?

    /// The metrics endpoint's own counts by outcome (`MetricsEndpoint.Counts.byOutcome`), read
    /// at each scrape: `beacon_emit_metrics_requests_total{outcome}`.
    public var endpointCounts: (() -> [String: Int])?
    private var endpointCounters: [String: (counter: Counter, counted: Int)] = [:]

    /// Where the emitter's beacons are: on the air, off it (a disruption), waiting for the
    /// adapter, stopped.
    public enum State: String, CaseIterable, Sendable {
        case onAir = "on-air", offAir = "off-air", waiting, stopped
    }

    public private(set) var state = State.onAir

    /// A disruption's kind, the `kind` label: a fixed set, whatever the detail.
    public static func kind(of disruption: Disruption) -> String {
        switch disruption {
        case .controllerReset: "reset"
        case .hardwareError: "hardware_error"
        case .poweredOff, .adapterDown: "power"
        case .adapterRemoved, .linkClosed: "unplug"
        case .instanceTakenOver, .instanceRemoved, .advertisingChanged, .advertisingLost: "takeover"
        case .notHeard: "not_heard"
        }
    }

    /// Every `kind` label, each series there (at 0) from the start.
    public static let kinds = ["reset", "hardware_error", "power", "unplug", "takeover", "not_heard"]
    /// Every control command label (`other`: a line that is no request).
    public static let commands = ["list", "status", "add", "update", "remove", "other"]
    /// How a control request ended.
    public enum Outcome: String, CaseIterable, Sendable {
        /// Done as asked.
        case ok
        /// Refused: by the controller or the advertising's rules, or held past its limit.
        case refused
        /// Not a request (bad JSON, an unknown command or field).
        case error
    }

    private let beacons: Gauge
    private let onAir: Gauge
    private let states: [State: Gauge]
    private let disruptions: [String: Counter]
    private let restore: ValueHistogram
    private let requests: [String: Counter]
    private var refusals: [String: (counter: Counter, counted: Int)] = [:]
    private var canaryHeard: [Int: (slot: Int, heard: Gauge, last: Gauge?)] = [:]
    private let process = ProcessFigures()
    private let processGauges: [String: Gauge]
    private let cpu: Counter
    /// A beacon's new identity that did not go on the air (`EmitterEvent.withheld`).
    private let withheld: Counter
    /// CPU seconds counted so far.
    private var cpuCounted = 0.0

    /// Restore times' buckets, in seconds: a restore in the same loop turn to a minute's wait
    /// for an adapter plugged back in.
    public static let restoreBuckets: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

    /// - Parameters:
    ///   - adapter: the `adapter` label (hci0, an adapter's address, tcp:HOST:PORT).
    ///   - version: the `version` of `beacon_emit_build_info`.
    public init(adapter: String, version: String) {
        registry = PrometheusCollectorRegistry()
        let labels = [("adapter", adapter)]
        let registry = registry
        registry.makeGauge(descriptor: Self.named("beacon_emit_build_info", "The running beacon-emit's version (value 1)."),
                           labels: [("version", version)]).set(to: 1)
        beacons = registry.makeGauge(descriptor: Self.named(
            "beacon_emit_beacons", "Beacons the emitter advertises (on the air, waiting for their turn, or off the air)."),
                                     labels: labels)
        onAir = registry.makeGauge(descriptor: Self.named(
            "beacon_emit_beacons_on_air", "Beacons on the air now (0 while a disruption or the adapter keeps them off)."),
                                   labels: labels)
        let state = Self.named("beacon_emit_adapter_state",
                               "1 for the state the emitter's beacons are in (on-air, off-air, waiting for the adapter, stopped).")
        states = Dictionary(uniqueKeysWithValues: State.allCases.map { value in
            (value, registry.makeGauge(descriptor: state, labels: labels + [("state", value.rawValue)]))
        })
        let disruption = Self.named("beacon_emit_disruptions_total", "Times the beacons were knocked off the air, by kind "
                                    + "(reset, power, unplug, takeover, hardware_error, not_heard).")
        disruptions = Dictionary(uniqueKeysWithValues: Self.kinds.map { kind in
            (kind, registry.makeCounter(descriptor: disruption, labels: labels + [("kind", kind)]))
        })
        restore = registry.makeValueHistogram(descriptor: Self.named(
            "beacon_emit_restore_seconds", "From a disruption to the beacons back on the air, in seconds."),
                                              labels: labels, buckets: Self.restoreBuckets)
        let request = Self.named("beacon_emit_control_requests_total",
                                 "Control socket requests answered, by command and outcome (ok, refused, error).")
        var requests: [String: Counter] = [:]
        for command in Self.commands {
            for outcome in Outcome.allCases {
                requests[command + " " + outcome.rawValue] = registry.makeCounter(
                    descriptor: request, labels: [("command", command), ("outcome", outcome.rawValue)])
            }
        }
        self.requests = requests
        processGauges = Dictionary(uniqueKeysWithValues: ProcessFigures.names.map { name, help in
            (name, registry.makeGauge(descriptor: Self.named(name, help)))
        })
        cpu = registry.makeCounter(descriptor: Self.named(ProcessFigures.cpu.0, ProcessFigures.cpu.1))
        withheld = registry.makeCounter(descriptor: Self.named(
            "beacon_emit_identities_withheld_total", "Times a beacon's new identity (an Eddystone-EID's next identifier with "
            + "its new address) did not go on the air: the beacon off the air, or under its old identity, until the next try."),
                                        labels: labels)
        setState(.onAir)
    }

    /// How many events and control requests were noted: moves whenever a scraper must see a
    /// new rendering at once (`MetricsEndpoint.changes`).
    public private(set) var changes = 0

    /// Follows what the emitter reports.
    public func note(_ event: EmitterEvent) {
        changes &+= 1
        switch event {
        case .advertising: setState(.onAir)
        case let .offAir(disruption):
            disruptions[Self.kind(of: disruption)]?.increment()
            setState(.offAir)
        case .waiting: setState(.waiting)
        case let .restored(_, gap, _):
            restore.record(Double(gap.components.seconds) + Double(gap.components.attoseconds) / 1e18)
            setState(.onAir)
        case .stopped: setState(.stopped)
        case .withheld: withheld.increment()
        default: break
        }
    }

    /// Counts one answered control request.
    /// - Parameter command: the request's command (one not among `commands` counts as `other`).
    public func noteControl(command: String, outcome: Outcome) {
        changes &+= 1
        let key = (Self.commands.contains(command) ? command : "other") + " " + outcome.rawValue
        requests[key]?.increment()
    }

    private func setState(_ new: State) {
        state = new
        for (state, gauge) in states { gauge.set(to: state == new ? 1 : 0) }
    }

    /// The metrics now, in the text exposition format (version 0.0.4).
    public func exposition() -> [UInt8] {
        let now = sample?()
        let count = now?.beacons ?? 0
        beacons.set(to: Double(count))
        onAir.set(to: Double(state == .onAir ? count : 0))
        if let refused = now?.controlRefusals { countRefusals(refused) }
        if let counts = endpointCounts?() { countEndpoint(counts) }
        updateCanary(now?.canary)
        for (name, value) in process.read() {
            if name == ProcessFigures.cpu.0 {
                if value > cpuCounted { cpu.increment(by: value - cpuCounted) }
                cpuCounted = max(cpuCounted, value)
            } else {
                processGauges[name]?.set(to: value)
            }
        }
        return registry.emitToBuffer()
    }

    /// The metrics endpoint's requests as counters, by outcome (an outcome appears once it has
    /// happened).
    private func countEndpoint(_ counts: [String: Int]) {
        countGrowth(counts.filter { $0.value > 0 || endpointCounters[$0.key] != nil }, in: &endpointCounters,
                    metric: "beacon_emit_metrics_requests_total",
                    help: "Requests to the metrics endpoint and clients it dropped, by outcome.", label: "outcome")
    }

    /// The control socket's refusals as counters, by reason (in snake case).
    private func countRefusals(_ counts: [String: Int]) {
        countGrowth(Dictionary(counts.map { (Self.snakeCase($0.key), $0.value) }) { $0 + $1 }, in: &refusals,
                    metric: "beacon_emit_control_refusals_total",
                    help: "Control socket clients and requests the socket's bounds refused or dropped, by reason.", label: "reason")
    }

    /// Counts kept elsewhere as counters of `metric`, one per `label` value: each count's growth
    /// since the last rendering (a counter is made for a value the first time it is given).
    private func countGrowth(_ counts: [String: Int], in counters: inout [String: (counter: Counter, counted: Int)],
                             metric: String, help: String, label: String) {
        for (value, count) in counts.sorted(by: { $0.key < $1.key }) {
            let entry = counters[value] ?? (registry.makeCounter(descriptor: Self.named(metric, help), labels: [(label, value)]), 0)
            if count > entry.counted { entry.counter.increment(by: Int64(count - entry.counted)) }
            counters[value] = (entry.counter, max(count, entry.counted))
        }
    }

    /// The canary's gauges for the beacons there now, by slot; a removed beacon's series are
    /// unregistered and its slot is free for the next beacon added.
    private func updateCanary(_ beacons: [(id: Int, heard: Bool, lastHeard: Duration?)]?) {
        let now = beacons ?? []
        for id in Set(canaryHeard.keys).subtracting(now.map(\.id)) {
            if let gone = canaryHeard.removeValue(forKey: id) {
                registry.unregisterGauge(gone.heard)
                if let last = gone.last { registry.unregisterGauge(last) }
            }
        }
        var taken = Set(canaryHeard.values.map(\.slot))
        for beacon in now {
            var gauges: (slot: Int, heard: Gauge, last: Gauge?)
            if let known = canaryHeard[beacon.id] {
                gauges = known
            } else {
                let slot = Self.lowestFree(taken)
                taken.insert(slot)
                gauges = (slot, registry.makeGauge(descriptor: Self.named(
                    "beacon_emit_canary_heard", "1 while the canary hears the beacon (by its slot), else 0."),
                                                    labels: [("slot", "\(slot)")]), nil)
            }
            // Its age appears with the first sighting (before it there is no age: no NaN to chart).
            if let lastHeard = beacon.lastHeard {
                let last = gauges.last ?? registry.makeGauge(descriptor: Self.named(
                    "beacon_emit_canary_last_heard_seconds", "Seconds since the canary last heard the beacon (from its first sighting)."),
                                                             labels: [("slot", "\(gauges.slot)")])
                last.set(to: Double(lastHeard.components.seconds) + Double(lastHeard.components.attoseconds) / 1e18)
                gauges.last = last
            }
            canaryHeard[beacon.id] = gauges
            gauges.heard.set(to: beacon.heard ? 1 : 0)
        }
    }

    /// The smallest slot from 1 not in `taken`.
    static func lowestFree(_ taken: Set<Int>) -> Int {
        var slot = 1
        while taken.contains(slot) { slot += 1 }
        return slot
    }

    /// A metric's whole name and help line, as swift-prometheus takes them.
    static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// `heldBound` as `held_bound`.
    static func snakeCase(_ name: String) -> String {
        name.reduce(into: "") { text, character in
            if character.isUppercase {
                text += "_" + character.lowercased()
            } else {
                text.append(character)
            }
        }
    }
}
