// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// An audit of one advertiser: its reports in (live or from a capture), what it does measured,
/// and the rules of its profile judged. Pure: the caller chooses the advertiser and feeds
/// the reports with the times they arrived.
public struct AdvertiserAudit: Sendable {
    public let profile: AuditProfile?
    /// The interval the device under test was configured with (`--interval`), in ms.
    public let configuredInterval: Double?

    private var times: [Double] = []
    private var rssi: [Int8] = []
    /// When each of `rssi` was heard.
    private var rssiTimes: [Double] = []
    private var kinds: [AdvertisingPDUKind: Int] = [:]
    private var kindOrder: [AdvertisingPDUKind] = []
    private var addresses: [(address: BluetoothAddress, firstHeard: Double)] = []
    private var addressType: AddressType?
    /// The different advertising data heard (at most 1000 kept).
    private var data: Set<[UInt8]> = []
    private var firstData: [UInt8]?
    private var scanResponses = 0
    /// The format audited: the one asked for, else the first heard.
    private var primary: AuditProfile?
    /// Reports of other formats' frames, in the order first heard.
    private var interleaved: [(profile: AuditProfile, reports: Int)] = []
    /// Whether a report carried a beacon of a format this audit knows.
    private(set) var heardBeacon = false

    /// The app's layouts its data is read with too (`audit --layout`): nothing decodes a
    /// layout's beacon without its layout.
    public var layouts: [(name: String, layout: BeaconLayout)] = []

    public init(profile: AuditProfile? = nil, configuredInterval: Double? = nil) {
        self.profile = profile
        self.configuredInterval = configuredInterval
        primary = profile
    }

    /// Takes in one report of the advertiser, arrived at `time` (seconds). A report of another
    /// beacon format than the one audited (the TLM frames an Eddystone-UID beacon interleaves,
    /// on a set of their own) is counted apart, not measured.
    public mutating func add(_ report: ScanReport, at time: Double) {
        if report.isScanResponse {
            scanResponses += 1
            return
        }
        if let heard = AuditProfile(heardIn: report.data) {
            heardBeacon = true
            if primary == nil { primary = heard }
            if heard != primary {
                if let index = interleaved.firstIndex(where: { $0.profile == heard }) {
                    interleaved[index].reports += 1
                } else {
                    interleaved.append((heard, 1))
                }
                return
            }
        }
        times.append(time)
        if let value = report.rssi {
            rssi.append(value)
            rssiTimes.append(time)
        }
        if let kind = report.kind {
            if kinds[kind] == nil { kindOrder.append(kind) }
            kinds[kind, default: 0] += 1
        }
        if addresses.last?.address != report.address, !addresses.contains(where: { $0.address == report.address }) {
            addresses.append((report.address, time))
        }
        addressType = report.addressType
        if firstData == nil { firstData = report.data }
        if data.count < 1000 { data.insert(report.data) }
    }

    /// Reports of the advertising measured (scan responses and interleaved frames apart).
    var heard: Int { times.count }

    /// The mean RSSI of those reports; nil where the source gave none.
    var meanRSSI: Double? {
        rssi.isEmpty ? nil : Double(rssi.reduce(0) { $0 + Int($1) }) / Double(rssi.count)
    }

    /// What was measured, and the rules judged.
    public func result() -> AuditResult {
        let chosen = primary
        let estimate = IntervalEstimate(times: times)
        var result = AuditResult(profile: chosen, profileAsked: profile != nil, beacon: nil, reports: times.count,
                                 scanResponses: scanResponses,
                                 span: (times.max() ?? 0) - (times.min() ?? 0), interval: estimate,
                                 rssiMean: nil, rssiDeviation: nil, rssiRange: nil,
                                 pduKinds: kindOrder.map { ($0, kinds[$0] ?? 0) }, addressType: addressType,
                                 addresses: addresses, advertisedTxPower: nil, distinctData: data.count,
                                 interleaved: interleaved,
                                 rules: [], neededSeconds: nil)
        result.series = AuditSeries(times: times, rssi: zip(rssiTimes, rssi).map { ($0, $1) })
        if !rssi.isEmpty {
            let values = rssi.map(Double.init)
            let mean = values.reduce(0, +) / Double(values.count)
            result.rssiMean = mean
            result.rssiDeviation = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
            result.rssiRange = rssi.min()!...rssi.max()!
        }
        guard let firstData else { return result }
        let parsed = try? AdvertisingData(parsing: firstData)
        result.advertisedTxPower = parsed?.structures.lazy.compactMap(\.txPowerLevel).first
        result.beacon = parsed.flatMap { try? LayoutBeacon.beacons(in: $0, reading: layouts).first }
        var rules = AuditRules(profile: chosen, data: firstData, parsed: parsed, kinds: kindOrder,
                               estimate: estimate, configured: configuredInterval, distinctData: data.count)
        if let estimate {
            if !estimate.isSure {
                // Enough events for a sure count, at the period and the share heard so far.
                let events = Double(IntervalEstimate.reportsSure + 2) / max(0.3, estimate.heardShare)
                rules.needed = events * estimate.eventPeriod / 1000
            }
        } else {
            (rules.reportsOnTime, rules.needed) = IntervalEstimate.listening(times)
        }
        result.neededSeconds = rules.needed.map { $0.rounded(.up) }
        result.rules = rules.all
        return result
    }
}

/// The rules of a profile, judged on what was heard.
struct AuditRules {
    let profile: AuditProfile?
    let data: [UInt8]
    let parsed: AdvertisingData?
    let kinds: [AdvertisingPDUKind]
    let estimate: IntervalEstimate?
    let configured: Double?
    let distinctData: Int
    /// Reports that could be timed (for the interval rule's "too few").
    var reportsOnTime = 0
    /// Seconds an audit would have needed to estimate the interval, from the spacing heard so far.
    var needed: Double?

    static let core = BeaconSpecification.coreSource

    /// The document the rules come from: the profile's, else common practice.
    var source: String { profile?.source ?? "common practice for beacons" }

    /// Where the PDU type rule comes from: the profile's document when it forbids a connectable
    /// beacon, else the Core Specification.
    var connectableSource: String { profile.map { $0.connectableFails ? $0.source : Self.core } ?? Self.core }

    var all: [AuditRule] {
        var rules = [flags(), layout(), connectable(), legacy(), interval(), constant()]
        if let heard = heard() { rules.append(heard) }
        return rules.compactMap { $0 }
    }

    private func hex(_ bytes: some Sequence<UInt8>) -> String {
        HexText.format(bytes, separator: " ")
    }

    /// Flags 0x06 (LE General Discoverable, BR/EDR not supported): some SDKs ignore a beacon without Flags.
    func flags() -> AuditRule {
        let flags = parsed?.structures.first { $0.type == .flags }
        let wanted = "Flags 0x06 (LE General Discoverable, BR/EDR not supported); some SDKs do not detect a beacon without Flags"
        guard let flags, let value = flags.data.first else {
            return AuditRule(name: "flags", verdict: .fail, seen: "no Flags structure", wanted: wanted, source: source)
        }
        let seen = "Flags 0x" + hex([value])
        return AuditRule(name: "flags", verdict: value == 0x06 ? .pass : .warn, seen: seen, wanted: wanted, source: source)
    }

    /// The format's exact layout, as its specification states it.
    func layout() -> AuditRule? {
        guard let profile else { return nil }
        let found = profile.layout(parsed?.structures ?? [])
        if found.problems.isEmpty, let warning = found.warning {
            return AuditRule(name: "layout", verdict: .warn, seen: warning.seen, wanted: warning.wanted, source: profile.source)
        }
        return AuditRule(name: "layout", verdict: found.problems.isEmpty ? .pass : .fail,
                         seen: found.problems.isEmpty ? "\(profile.displayName)'s layout" : found.problems.joined(separator: "; "),
                         wanted: profile.layoutWanted, source: profile.source)
    }

    /// Beacons are non-connectable; Apple's spec says ADV_NONCONN_IND.
    func connectable() -> AuditRule? {
        guard !kinds.isEmpty else {
            return AuditRule(name: "non-connectable", verdict: .inconclusive, seen: "the source does not give the PDU type",
                             wanted: "non-connectable, non-scannable (ADV_NONCONN_IND)",
                             source: connectableSource)
        }
        let seen = kinds.map(\.description).joined(separator: ", ")
        let connectable = kinds.contains { $0.contains(.connectable) }
        let scannable = kinds.contains { $0.contains(.scannable) }
        let verdict: AuditRule.Verdict = connectable ? (profile?.connectableFails == true ? .fail : .warn) : (scannable ? .warn : .pass)
        return AuditRule(name: "non-connectable", verdict: verdict, seen: seen,
                         wanted: "non-connectable, non-scannable (ADV_NONCONN_IND)",
                         source: connectableSource)
    }

    /// Legacy PDUs reach every phone; many scan for legacy advertising only.
    func legacy() -> AuditRule? {
        guard !kinds.isEmpty else {
            return AuditRule(name: "legacy-pdu", verdict: .inconclusive, seen: "the source does not give the PDU type",
                             wanted: "legacy PDUs (phones that scan for legacy advertising only miss extended PDUs)",
                             source: Self.core)
        }
        let extended = kinds.contains { !$0.contains(.legacy) }
        return AuditRule(name: "legacy-pdu", verdict: extended ? .warn : .pass,
                         seen: extended ? "extended advertising PDUs" : "legacy advertising PDUs",
                         wanted: "legacy PDUs (phones that scan for legacy advertising only miss extended PDUs)",
                         source: Self.core)
    }

    /// The interval: what the device was configured to do (`--interval`), else the profile's
    /// custom. Inconclusive with too few reports on time, or where the estimate is too unsure
    /// to tell (a host that read most reports late); never a failure the evidence cannot carry.
    func interval() -> AuditRule {
        let specified = profile?.interval
        let wanted = configured.map { "\(Self.format($0)) ms (--interval) within \(Self.format(Self.tolerance($0))) ms" }
            ?? (specified.map { "\(Self.format($0.ms)) ms (within \(Self.format($0.within)) ms)" } ?? "at most 1 s (common practice: 100 ms to 1 s)")
        let ruleSource = configured != nil ? "the device's configuration" : source
        guard let estimate else {
            // Enough on time, and still none: too irregular to count whole periods between them.
            let seen = reportsOnTime >= IntervalEstimate.reportsNeeded
                ? "\(reportsOnTime) reports on time, too irregular to count the periods between them: listen again, on a less busy host"
                : "\(reportsOnTime) report\(reportsOnTime == 1 ? "" : "s") on time, \(IntervalEstimate.reportsNeeded) needed to estimate"
                    + (needed.map { ": listen for about \(Int($0.rounded(.up))) s (--duration)" } ?? "")
            return AuditRule(name: "interval", verdict: .inconclusive, seen: seen, wanted: wanted, source: ruleSource)
        }
        let sure = estimate.uncertainty < 0.05 ? "" : ", within \(Self.format(max(0.1, estimate.uncertainty))) ms"
        let timed = estimate.eventsHeard - estimate.lateReads
        var late = estimate.lateReads > 0 ? "; \(estimate.lateReads) of \(estimate.eventsHeard) reports read late, not timed" : ""
        if !estimate.isSure && estimate.lateReads == 0 { late = "; \(timed) reports on time" }
        if !estimate.isSure {
            late += " (fewer than \(IntervalEstimate.reportsSure) reports on time, or under half of them: too few to count "
                + "the periods surely; listen for about \(Int((needed ?? 0).rounded(.up))) s (--duration), on a less busy host)"
        }
        let seen = "\(Self.format(estimate.interval)) ms (events every \(Self.format(estimate.eventPeriod)) ms\(sure))\(late)"
        // The random delay cannot be told from a host's timing jitter over a few events: the
        // interval is taken to lie between the event period less the standard's mean delay
        // (5 ms) and the period itself, widened by how unsure the period is.
        let slack = estimate.uncertainty
        func near(_ value: Double, within tolerance: Double) -> Bool {
            value >= estimate.eventPeriod - 5 - tolerance - slack && value <= estimate.eventPeriod + tolerance + slack
        }
        func judged(_ value: Double, tolerance: Double) -> AuditRule.Verdict {
            if !estimate.isSure { return estimate.isFar(value) ? .fail : .inconclusive }
            if near(value, within: tolerance) { return .pass }
            // Outside, but by less than the evidence is unsure of: not a failure.
            return slack > tolerance && near(value, within: tolerance + 2 * slack) ? .inconclusive : .fail
        }
        if let configured {
            let tolerance = Self.tolerance(configured)
            return AuditRule(name: "interval", verdict: judged(configured, tolerance: tolerance),
                             seen: seen, wanted: wanted, source: ruleSource)
        }
        if let specified {
            return AuditRule(name: "interval", verdict: judged(specified.ms, tolerance: specified.within), seen: seen,
                             wanted: wanted, source: ruleSource)
        }
        return AuditRule(name: "interval", verdict: estimate.eventPeriod - 5 - slack <= 1050 ? .pass : .warn, seen: seen,
                         wanted: wanted, source: ruleSource)
    }

    /// How close a measured interval must come to a configured one.
    static func tolerance(_ configured: Double) -> Double { max(2, configured * 0.02) }

    /// A beacon's data stays the same; TLM's counters move.
    func constant() -> AuditRule {
        if let profile, profile.dataMayChange {
            return AuditRule(name: "data-constant", verdict: .pass, seen: "\(distinctData) different data",
                             wanted: "\(profile.displayName)'s data may change (its counters move)", source: profile.source)
        }
        return AuditRule(name: "data-constant", verdict: distinctData <= 1 ? .pass : .fail,
                         seen: distinctData <= 1 ? "unchanged" : "\(distinctData) different data",
                         wanted: "the same data throughout", source: source)
    }

    /// How many of the advertiser's events were heard (the scanner's view, never a failure).
    func heard() -> AuditRule? {
        guard let estimate else { return nil }
        let share = estimate.heardShare
        return AuditRule(name: "events-heard", verdict: share >= 0.5 ? .pass : .warn,
                         seen: "\(Int((share * 100).rounded())) % of \(estimate.eventsSent) events",
                         wanted: "at least 50 % (fewer: a busy air, a weak signal, or a scanner that misses reports)",
                         source: "the scanner's view")
    }

    /// Milliseconds as the rules write them: to a tenth, without ".0" (`--list-rules` too).
    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

