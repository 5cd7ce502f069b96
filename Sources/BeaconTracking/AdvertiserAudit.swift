// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The advertising interval of one advertiser, estimated from when its reports arrived.
///
/// Each advertising event comes `interval + advDelay` after the one before, `advDelay` a
/// pseudo-random 0 to 10 ms (Core Vol 6 Part B 4.4.2.2.1); a scanner misses some events, and
/// a busy host reads some reports late. So:
/// - Reads closer together than any two events can be (15 ms; no interval is under 20 ms) are
///   one event heard on its channels and read apart (up to three: its first read is kept), or
///   a burst the host read after being held up (more): a burst's times say nothing of the air,
///   and it is set aside (counted as heard, not timed).
/// - The period to count with is the longest that most spacings are whole multiples of.
/// - Each report is then numbered by the periods since the last report that came on time (one
///   read a quarter period late or more is numbered but never counted from), and the period is
///   the time between the first and the last report on time over the periods between them: a
///   late read in the middle costs nothing, one at an end a few ms over the whole span.
/// - The delay shows as the width of the single-period spacings (uniform over 10 ms on a real
///   controller, none on a virtual one): half of it is taken off, so the interval is what was
///   configured.
public struct IntervalEstimate: Sendable, Hashable {
    /// The mean time between advertising events (the interval and the mean delay), in ms.
    public var eventPeriod: Double
    /// The advertising interval the advertiser was configured with, estimated, in ms.
    public var interval: Double
    /// The mean random delay added to each event, as measured (0 to 5 ms), in ms.
    public var meanDelay: Double
    /// How far the event period may be off (ms, either way), from how the reports at the two
    /// ends of the span scatter.
    public var uncertainty: Double
    /// The spacings between the reports heard, in ms.
    public var minimumSpacing: Double
    public var medianSpacing: Double
    public var p90Spacing: Double
    /// The advertising events the advertiser sent from the first report heard to the last,
    /// estimated, over its stays (`Presence`: a silence that is a going sends nothing).
    public var eventsSent: Int
    /// Its stays: 1, or more where it went and came back (`Presence.isGoing`).
    public var stays = 1
    /// The reports heard (one per event).
    public var eventsHeard: Int
    /// Reports read in a burst or a quarter period late or more: heard, not timed.
    public var lateReads: Int

    /// Whether enough reports came on time for the count of periods to be trusted: at least 16,
    /// and at least half of those heard. With fewer, or a host that read more late, the count
    /// can be wrong by a period, or the period taken for a half or a third of itself
    /// (simulated with a host held up a fifth of the time, it was, from 37 % late or 15 on time).
    public var isSure: Bool {
        eventsHeard - lateReads >= Self.reportsSure && lateReads * 2 <= eventsHeard
    }

    /// Reports on time for a sure estimate.
    public static let reportsSure = 16

    /// Whether a value is further from the event period than a miscount could make it (a
    /// factor of 3.5): an unsure estimate can still tell 1000 ms from 100.
    public func isFar(_ value: Double) -> Bool {
        value * 3.5 < eventPeriod || value > eventPeriod * 3.5
    }

    /// The share of the advertiser's events a report was heard for (0...1).
    public var heardShare: Double { eventsSent > 0 ? min(1, Double(eventsHeard) / Double(eventsSent)) : 0 }

    /// Reports closer than this are one event heard twice (on two channels).
    public static let sameEvent = 0.003
    /// Reads closer than this are a burst the host read late (seconds).
    public static let burst = 0.015
    /// Reports on time needed for an estimate.
    public static let reportsNeeded = 4

    /// How many of the reports at `times` (seconds) could be timed (one per event, bursts a
    /// busy host read apart), and the seconds of listening that would give `reportsNeeded` of
    /// them at the spacing heard (nil with fewer than two).
    public static func listening(_ times: [Double]) -> (onTime: Int, needed: Double?) {
        let timed = onTime(times)
        guard timed.count >= 2 else { return (timed.count, nil) }
        let spacing = (timed[timed.count - 1] - timed[0]) / Double(timed.count - 1)
        return (timed.count, max(1, spacing * Double(reportsNeeded + 2)))
    }

    /// One time per event (reports within `sameEvent` are one), bursts set aside.
    static func onTime(_ times: [Double]) -> [Double] { timedEvents(times).onTime }

    /// One time per event, and how many reads were in bursts (each taken as an event of its own).
    static func timedEvents(_ times: [Double]) -> (onTime: [Double], burstReads: Int) {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= sameEvent }) ?? true {
            events.append(time)
        }
        // Reads closer than `burst` form a group: up to three are one event heard on its three
        // channels and read apart (its first read kept); more are a burst the host read late.
        var onTime: [Double] = []
        var burstReads = 0
        var group: [Double] = []
        func close() {
            if group.count > 3 { burstReads += group.count } else if let first = group.first { onTime.append(first) }
            group.removeAll()
        }
        for time in events {
            if let last = group.last, time - last >= burst { close() }
            group.append(time)
        }
        close()
        return (onTime, burstReads)
    }

    /// The estimate from the times (seconds) reports of one advertiser arrived; nil with fewer
    /// than four reports on time.
    public init?(times: [Double]) {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= Self.sameEvent }) ?? true {
            events.append(time)
        }
        let (onTime, burstReads) = Self.timedEvents(times)
        guard onTime.count >= Self.reportsNeeded else { return nil }
        let spacings = zip(onTime.dropFirst(), onTime).map { ($0 - $1) * 1000 }
        let sorted = spacings.sorted()
        func quantile(_ values: [Double], _ q: Double) -> Double {
            values[min(values.count - 1, max(0, Int((Double(values.count - 1) * q).rounded())))]
        }
        // The period to count with: of the spacings in the lower half (and their halves and
        // thirds, for when no single period was heard), the longest that nearly as many
        // spacings are whole multiples of as of any
        // (at least 70 % as many: late reads fit a half period more often by chance).
        func fit(_ period: Double) -> Int {
            spacings.filter { abs($0 / period - ($0 / period).rounded()) <= 0.25 }.count
        }
        var candidates: [Double] = []
        // At most 64 of them, evenly through the lower half: each candidate is scored over every
        // spacing, and a long capture has hundreds of thousands.
        let lower = sorted.prefix(max(1, (sorted.count + 1) / 2)).filter { $0 >= 15 }
        let step = max(1, lower.count / 64)
        for spacing in stride(from: 0, to: lower.count, by: step).map({ lower[$0] }) {
            candidates += [spacing, spacing / 2, spacing / 3].filter { $0 >= 15 }
        }
        if candidates.isEmpty { candidates = [max(15, sorted[0])] }
        let scored = candidates.map { ($0, fit($0)) }
        let best = scored.map(\.1).max() ?? 0
        var base = scored.filter { Double($0.1) >= Double(best) * 0.7 }.map(\.0).max() ?? candidates[0]
        let singles = spacings.filter { ($0 / base).rounded() == 1 && abs($0 / base - 1) <= 0.25 }
        if !singles.isEmpty { base = quantile(singles.sorted(), 0.5) }
        // Number each report by the periods since the last one on time. A report early against
        // that one, and on time against one a little before, shows those after it were late (a
        // host never reads early): they are no longer counted from. Early against all, it is
        // itself late by over half a period.
        // On time: within a quarter period of where the count puts it, and the random delay's
        // own 10 ms spread beside a short period.
        let onTimeWithin = min(base * 0.4, base * 0.25 + 8)
        var numbers = [0]
        var anchors = [0]
        func place(_ index: Int, after anchor: Int) -> (number: Int, residual: Double) {
            let elapsed = (onTime[index] - onTime[anchor]) * 1000
            let number = numbers[anchor] + max(1, Int((elapsed / base).rounded()))
            return (number, elapsed - Double(number - numbers[anchor]) * base)
        }
        // Reports early against every one on time, each on time against the one before: three
        // of them say the ones counted from were all late (the first report among them).
        var early: [Int] = []
        for index in 1..<onTime.count {
            var (number, residual) = place(index, after: anchors[anchors.count - 1])
            if residual < -onTimeWithin {
                // The last few on time may all have been late (one stall, several reports).
                for back in stride(from: anchors.count - 2, through: max(0, anchors.count - 6), by: -1) {
                    let before = place(index, after: anchors[back])
                    guard abs(before.residual) <= onTimeWithin else { continue }
                    anchors.removeLast(anchors.count - 1 - back)
                    (number, residual) = before
                    break
                }
            }
            if residual < -onTimeWithin {
                if let last = early.last, abs(place(index, after: last).residual) <= onTimeWithin {
                    number = place(index, after: last).number
                    early.append(index)
                } else {
                    early = [index]
                }
                numbers.append(number)
                if early.count == 3 {
                    anchors = early
                    early = []
                }
                continue
            }
            early = []
            numbers.append(number)
            if abs(residual) <= onTimeWithin { anchors.append(index) }
        }
        guard anchors.count >= 2, numbers[anchors[anchors.count - 1]] > 0 else { return nil }
        // Nine steps in ten between reports on time a multiple of two (or three): the period is that
        // multiple of the base (a beacon heard at every second event cannot be told from one
        // advertising half as often; the evidence says the longer).
        let steps = zip(anchors.dropFirst(), anchors).map { numbers[$0] - numbers[$1] }
        if steps.count >= 6,
           let factor = [3, 2].first(where: { factor in steps.filter { $0 % factor == 0 }.count * 10 >= steps.count * 9 }) {
            for index in numbers.indices { numbers[index] /= factor }
        }
        // The period over the whole span, from the least late of the first few reports on time
        // to the least late of the last few (a host reads late, never early).
        func residuals(_ slice: ArraySlice<Int>, from start: Int, period: Double) -> [(index: Int, residual: Double)] {
            slice.map { ($0, (onTime[$0] - onTime[start]) * 1000 - Double(numbers[$0] - numbers[start]) * period) }
        }
        var first = anchors[0], last = anchors[anchors.count - 1]
        var eventPeriod = (onTime[last] - onTime[first]) * 1000 / Double(numbers[last] - numbers[first])
        for _ in 0..<2 {
            let start = first
            let head = residuals(anchors.prefix(5), from: start, period: eventPeriod)
            let tail = residuals(anchors.suffix(5), from: start, period: eventPeriod)
            first = head.min { $0.residual < $1.residual }!.index
            last = tail.min { $0.residual < $1.residual }!.index
            guard numbers[last] > numbers[first] else { return nil }
            eventPeriod = (onTime[last] - onTime[first]) * 1000 / Double(numbers[last] - numbers[first])
        }
        self.eventPeriod = eventPeriod
        // How late the ends may still be: the scatter of the first and the last few about the line.
        func scatter(_ slice: ArraySlice<Int>) -> Double {
            let values = residuals(slice, from: first, period: eventPeriod).map(\.residual)
            return (values.max() ?? 0) - (values.min() ?? 0)
        }
        uncertainty = (scatter(anchors.prefix(5)) + scatter(anchors.suffix(5))) / Double(numbers[last] - numbers[first])
        let single = zip(onTime.indices.dropFirst(), onTime.indices).filter { numbers[$0] - numbers[$1] == 1 }
            .map { (onTime[$0] - onTime[$1]) * 1000 }.sorted()
        // A uniform delay over width w: the single spacings' 10th to 90th percentile is 0.8 w.
        let width = single.count >= 5 ? (quantile(single, 0.9) - quantile(single, 0.1)) / 0.8 : 0
        meanDelay = min(5, max(0, width / 2))
        interval = eventPeriod - meanDelay
        minimumSpacing = sorted[0]
        medianSpacing = quantile(sorted, 0.5)
        p90Spacing = quantile(sorted, 0.9)
        eventsHeard = onTime.count + burstReads
        lateReads = eventsHeard - anchors.count
        let present = Presence.stays(events, interval: eventPeriod)
        stays = present.count
        eventsSent = present.reduce(0) { $0 + Int((($1.upperBound - $1.lowerBound) * 1000 / eventPeriod).rounded()) + 1 }
    }
}

/// What an audit holds a beacon to: a format's specification, or the common practice for it.
public enum AuditProfile: String, CaseIterable, Sendable {
    case ibeacon
    case altbeacon
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneTLM = "eddystone-tlm"

    /// The profile of the beacon a report's data carries, if any.
    public init?(heardIn data: [UInt8]) {
        guard let parsed = try? AdvertisingData(parsing: data), let beacon = try? Beacon.beacons(in: parsed).first else {
            return nil
        }
        // The profile named as its format is (none for a format without rules: Eddystone-EID).
        self.init(rawValue: beacon.format.formatName.description)
    }

    public var name: String {
        switch self {
        case .ibeacon: "iBeacon"
        case .altbeacon: "AltBeacon"
        case .eddystoneUID: "Eddystone-UID"
        case .eddystoneURL: "Eddystone-URL"
        case .eddystoneTLM: "Eddystone-TLM"
        }
    }

    var isEddystone: Bool { self == .eddystoneUID || self == .eddystoneURL || self == .eddystoneTLM }
}

/// One rule of an audit, judged.
public struct AuditRule: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
        /// `inconclusive`: what was heard cannot judge the rule (too few reports, a source that
        /// does not say); a gate must not pass on it unless told to.
        case pass, warn, fail, inconclusive
    }

    /// Short name (`flags`, `interval`).
    public var name: String
    public var verdict: Verdict
    /// What was heard.
    public var seen: String
    /// What the specification or common practice wants.
    public var wanted: String
    /// Where the rule comes from.
    public var source: String
}

/// Everything an audit measured of one advertiser, and its rules judged.
public struct AuditResult: Sendable {
    public var profile: AuditProfile?
    /// Whether the profile was asked for (`--profile`) rather than chosen by what was heard.
    public var profileAsked: Bool
    /// The beacon heard (in the first report).
    public var beacon: Beacon?
    /// Reports heard of the advertising (scan responses apart).
    public var reports: Int
    public var scanResponses: Int
    /// From the first report to the last, in seconds.
    public var span: Double
    public var interval: IntervalEstimate?
    public var rssiMean: Double?
    public var rssiDeviation: Double?
    public var rssiRange: ClosedRange<Int8>?
    /// The PDU kinds heard (nil where the source does not say), with how many of each.
    public var pduKinds: [(kind: AdvertisingPDUKind, count: Int)]
    public var addressType: AddressType?
    /// Each address in the order it was heard, with the time (seconds) it was first heard.
    public var addresses: [(address: BluetoothAddress, firstHeard: Double)]
    /// The TX power level the data advertises (AD type 0x0A), if any.
    public var advertisedTxPower: Int8?
    /// How many different advertising data were heard (1: unchanged).
    public var distinctData: Int
    /// Reports of other beacon formats from the same advertiser (interleaved frames), not measured.
    public var interleaved: [(profile: AuditProfile, reports: Int)]
    public var rules: [AuditRule]
    /// Where the interval could not be estimated: the seconds of listening that would have
    /// given enough reports, at the spacing heard.
    public var neededSeconds: Double?

    /// The first rule that failed, if any.
    public var failed: [AuditRule] { rules.filter { $0.verdict == .fail } }
    public var warned: [AuditRule] { rules.filter { $0.verdict == .warn } }
    public var inconclusive: [AuditRule] { rules.filter { $0.verdict == .inconclusive } }
}

/// An audit of one advertiser: its reports in (live or from a capture), what it does measured,
/// and the rules of its profile judged. Pure: the caller chooses the advertiser and feeds
/// the reports with the times they arrived.
public struct AdvertiserAudit: Sendable {
    public let profile: AuditProfile?
    /// The interval the device under test was configured with (`--interval`), in ms.
    public let configuredInterval: Double?

    private var times: [Double] = []
    private var rssi: [Int8] = []
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
    private var interleaved: [AuditProfile: Int] = [:]
    /// Whether a report carried a beacon of a format this audit knows.
    private(set) var heardBeacon = false

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
                interleaved[heard, default: 0] += 1
                return
            }
        }
        times.append(time)
        if let value = report.rssi { rssi.append(value) }
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
                                 interleaved: AuditProfile.allCases.compactMap { kind in interleaved[kind].map { (kind, $0) } },
                                 rules: [], neededSeconds: nil)
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
        result.beacon = parsed.flatMap { try? Beacon.beacons(in: $0).first }
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

/// A rule as `audit --list-rules` lists it: what it checks, where it comes from, which
/// profiles apply it, and what makes it a failure, a warning, or not judged.
public struct AuditRuleInfo: Sendable, Hashable {
    public var name: String
    public var checks: String
    public var source: String
    /// The profiles that apply it (all of them, or those named).
    public var profiles: [AuditProfile]
    public var verdicts: String

    /// Every rule, in the order an audit judges them.
    public static let all: [AuditRuleInfo] = [
        AuditRuleInfo(name: "flags", checks: "a Flags structure of 0x06 (LE General Discoverable, BR/EDR not supported)",
                      source: "common practice: some SDKs ignore a beacon without Flags", profiles: AuditProfile.allCases,
                      verdicts: "fail: no Flags; warn: another value"),
        AuditRuleInfo(name: "layout", checks: "the format's exact bytes: iBeacon 1A FF 4C 00 02 15 and 21 bytes; AltBeacon "
                      + "BE AC; Eddystone 03 03 AA FE and service data of the frame", source: "\(AuditRules.apple); "
                      + "\(AuditRules.altBeacon); \(AuditRules.eddystone)", profiles: AuditProfile.allCases,
                      verdicts: "fail: a byte out of place; warn: an iBeacon measured power outside -100 to -30 dBm"),
        AuditRuleInfo(name: "non-connectable", checks: "the PDU type: ADV_NONCONN_IND (neither connectable nor scannable)",
                      source: "\(AuditRules.apple) (iBeacon); \(AuditRules.core)", profiles: AuditProfile.allCases,
                      verdicts: "fail: a connectable iBeacon; warn: other formats connectable, or scannable; "
                      + "inconclusive: the source does not give the PDU type"),
        AuditRuleInfo(name: "legacy-pdu", checks: "legacy advertising PDUs (phones that scan for legacy only miss extended ones)",
                      source: AuditRules.core, profiles: AuditProfile.allCases,
                      verdicts: "warn: extended PDUs; inconclusive: the source does not give the PDU type"),
        AuditRuleInfo(name: "interval", checks: "the advertising interval, estimated through missed events, the standard's "
                      + "0-10 ms random delay and reports a busy host read late: with --interval MS, that within 2 % (at "
                      + "least 2 ms); else iBeacon 100 ms within 10 ms, other formats at most 1 s",
                      source: "the device's configuration (--interval); \(AuditRules.apple) (iBeacon); common practice",
                      profiles: AuditProfile.allCases,
                      verdicts: "fail: outside, surely; warn: over 1 s for a format without a rule; inconclusive: fewer "
                      + "than \(IntervalEstimate.reportsNeeded) reports on time, or too few (\(IntervalEstimate.reportsSure)) "
                      + "or under half on time to count the periods surely, or outside by less than the estimate is unsure of"),
        AuditRuleInfo(name: "data-constant", checks: "the same advertising data throughout (TLM's counters may move)",
                      source: "common practice; \(AuditRules.eddystone) (TLM)", profiles: AuditProfile.allCases,
                      verdicts: "fail: the data changed (except TLM)"),
        AuditRuleInfo(name: "events-heard", checks: "the share of the advertiser's events a report was heard for",
                      source: "the scanner's view", profiles: AuditProfile.allCases,
                      verdicts: "warn: under 50 % (a busy air, a weak signal, a scanner that misses reports); never a failure"),
    ]
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

    static let apple = "Apple, Proximity Beacon Specification R1"
    static let altBeacon = "AltBeacon specification (altbeacon.org)"
    static let eddystone = "Eddystone protocol specification (google/eddystone)"
    static let core = "Bluetooth Core Specification, Vol 6 Part B"

    var source: String {
        switch profile {
        case .ibeacon: Self.apple
        case .altbeacon: Self.altBeacon
        case .some: Self.eddystone
        case nil: "common practice for beacons"
        }
    }

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

    /// The format's exact layout.
    func layout() -> AuditRule? {
        guard let profile else { return nil }
        let structures = parsed?.structures ?? []
        switch profile {
        case .ibeacon:
            let wanted = "1A FF 4C 00 02 15 and 21 bytes (UUID, major, minor, measured power): 30 bytes with the Flags"
            guard let maker = structures.first(where: { $0.type == .manufacturerSpecificData }),
                  let (company, payload) = maker.manufacturerData else {
                return AuditRule(name: "layout", verdict: .fail, seen: "no manufacturer specific data", wanted: wanted,
                                 source: Self.apple)
            }
            var problems: [String] = []
            if company != .apple { problems.append("company ID \(company), not 0x004C (Apple)") }
            if Array(payload.prefix(2)) != [0x02, 0x15] { problems.append("type and length \(hex(payload.prefix(2))), not 02 15") }
            if maker.data.count != 25 { problems.append("manufacturer data of \(maker.data.count + 1) bytes, not 26 (1A)") }
            if problems.isEmpty, let power = payload.dropFirst(22).first.map({ Int8(bitPattern: $0) }), !(-100 ... -30).contains(power) {
                return AuditRule(name: "layout", verdict: .warn, seen: "measured power \(power) dBm",
                                 wanted: "measured power at 1 m between -100 and -30 dBm (typically -59)", source: Self.apple)
            }
            return AuditRule(name: "layout", verdict: problems.isEmpty ? .pass : .fail,
                             seen: problems.isEmpty ? "Apple's layout" : problems.joined(separator: "; "),
                             wanted: wanted, source: Self.apple)
        case .altbeacon:
            let wanted = "manufacturer data 1B FF, company ID, BE AC, 20-byte beacon ID, reference RSSI, reserved byte"
            let maker = structures.first { $0.type == .manufacturerSpecificData }
            let ok = maker.map { $0.data.count == 26 && Array($0.data.dropFirst(2).prefix(2)) == [0xBE, 0xAC] } ?? false
            return AuditRule(name: "layout", verdict: ok ? .pass : .fail,
                             seen: maker.map { "manufacturer data of \($0.data.count + 1) bytes: \(hex($0.data.prefix(4)))" }
                                 ?? "no manufacturer specific data",
                             wanted: wanted, source: Self.altBeacon)
        case .eddystoneUID, .eddystoneURL, .eddystoneTLM:
            let frame: UInt8 = profile == .eddystoneUID ? 0x00 : profile == .eddystoneURL ? 0x10 : 0x20
            let wanted = "03 03 AA FE (0xFEAA in the complete 16-bit service UUIDs), then service data for 0xFEAA, frame 0x"
                + hex([frame])
            let listed = structures.contains { $0.type == .completeServiceUUIDs16 && Array($0.data.prefix(2)) == [0xAA, 0xFE] }
            let service = structures.lazy.compactMap(\.serviceData16).first { $0.uuid == EddystoneFrame.serviceUUID }
            var problems: [String] = []
            if !listed { problems.append("0xFEAA is not in a complete list of 16-bit service UUIDs") }
            if let service {
                if service.payload.first != frame { problems.append("frame 0x\(hex(service.payload.prefix(1))), not 0x\(hex([frame]))") }
            } else {
                problems.append("no service data for 0xFEAA")
            }
            return AuditRule(name: "layout", verdict: problems.isEmpty ? .pass : .fail,
                             seen: problems.isEmpty ? "Eddystone's layout" : problems.joined(separator: "; "),
                             wanted: wanted, source: Self.eddystone)
        }
    }

    /// Beacons are non-connectable; Apple's spec says ADV_NONCONN_IND.
    func connectable() -> AuditRule? {
        guard !kinds.isEmpty else {
            return AuditRule(name: "non-connectable", verdict: .inconclusive, seen: "the source does not give the PDU type",
                             wanted: "non-connectable, non-scannable (ADV_NONCONN_IND)",
                             source: profile == .ibeacon ? Self.apple : Self.core)
        }
        let seen = kinds.map(\.description).joined(separator: ", ")
        let connectable = kinds.contains { $0.contains(.connectable) }
        let scannable = kinds.contains { $0.contains(.scannable) }
        let verdict: AuditRule.Verdict = connectable ? (profile == .ibeacon ? .fail : .warn) : (scannable ? .warn : .pass)
        return AuditRule(name: "non-connectable", verdict: verdict, seen: seen,
                         wanted: "non-connectable, non-scannable (ADV_NONCONN_IND)",
                         source: profile == .ibeacon ? Self.apple : Self.core)
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
        let wanted = configured.map { "\(format($0)) ms (--interval) within \(format(Self.tolerance($0))) ms" }
            ?? (profile == .ibeacon ? "100 ms (within 10 ms)" : "at most 1 s (common practice: 100 ms to 1 s)")
        let ruleSource = configured != nil ? "the device's configuration" : profile == .ibeacon ? Self.apple : source
        guard let estimate else {
            return AuditRule(name: "interval", verdict: .inconclusive,
                             seen: "\(reportsOnTime) report\(reportsOnTime == 1 ? "" : "s") on time, \(IntervalEstimate.reportsNeeded) needed to estimate"
                                 + (needed.map { ": listen for about \(Int($0.rounded(.up))) s (--duration)" } ?? ""),
                             wanted: wanted, source: ruleSource)
        }
        let sure = estimate.uncertainty < 0.05 ? "" : ", within \(format(max(0.1, estimate.uncertainty))) ms"
        let timed = estimate.eventsHeard - estimate.lateReads
        var late = estimate.lateReads > 0 ? "; \(estimate.lateReads) of \(estimate.eventsHeard) reports read late, not timed" : ""
        if !estimate.isSure && estimate.lateReads == 0 { late = "; \(timed) reports on time" }
        if !estimate.isSure {
            late += " (fewer than \(IntervalEstimate.reportsSure) reports on time, or under half of them: too few to count "
                + "the periods surely; listen for about \(Int((needed ?? 0).rounded(.up))) s (--duration), on a less busy host)"
        }
        let seen = "\(format(estimate.interval)) ms (events every \(format(estimate.eventPeriod)) ms\(sure))\(late)"
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
        if profile == .ibeacon {
            return AuditRule(name: "interval", verdict: judged(100, tolerance: 10), seen: seen,
                             wanted: wanted, source: ruleSource)
        }
        return AuditRule(name: "interval", verdict: estimate.eventPeriod - 5 - slack <= 1050 ? .pass : .warn, seen: seen,
                         wanted: wanted, source: ruleSource)
    }

    /// How close a measured interval must come to a configured one.
    static func tolerance(_ configured: Double) -> Double { max(2, configured * 0.02) }

    /// A beacon's data stays the same; TLM's counters move.
    func constant() -> AuditRule {
        if profile == .eddystoneTLM {
            return AuditRule(name: "data-constant", verdict: .pass, seen: "\(distinctData) different data",
                             wanted: "TLM counters may move", source: Self.eddystone)
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

    private func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// Which advertiser an audit listens to: one address, the advertiser of a beacon (whatever
/// its address, which may rotate), or, with neither, the strongest heard.
public struct AuditChoice: Sendable, Hashable {
    public var address: BluetoothAddress?
    /// iBeacon or AltBeacon identifiers.
    public var region: BeaconRegion?
    /// Eddystone-UID namespace and instance.
    public var namespace: [UInt8]?
    public var instance: [UInt8]?
    /// Eddystone-URL, as it decodes.
    public var url: String?

    public init(address: BluetoothAddress? = nil, region: BeaconRegion? = nil, namespace: [UInt8]? = nil,
                instance: [UInt8]? = nil, url: String? = nil) {
        self.address = address
        self.region = region
        self.namespace = namespace
        self.instance = instance
        self.url = url
    }

    /// Whether a beacon's identifiers choose the advertiser.
    public var byBeacon: Bool { region != nil || namespace != nil || instance != nil || url != nil }

    /// What chose the advertiser, the same from run to run (`uuid=... major=1`, `address ...`);
    /// nil where nothing did (the strongest is audited).
    public var identity: String? {
        var parts: [String] = []
        if let address { parts.append("address \(address)") }
        if let region {
            if let uuid = region.uuid { parts.append("uuid=\(uuid.uuidString)") }
            if let major = region.major { parts.append("major=\(major)") }
            if let minor = region.minor { parts.append("minor=\(minor)") }
        }
        if let namespace { parts.append("namespace=\(HexText.format(namespace))") }
        if let instance { parts.append("instance=\(HexText.format(instance))") }
        if let url { parts.append("url=\(url)") }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    public func matches(_ beacon: Beacon) -> Bool {
        switch beacon {
        case .iBeacon, .altBeacon:
            return namespace == nil && instance == nil && url == nil && (region?.matches(beacon) ?? true)
        case let .eddystone(.uid(frame)):
            return region == nil && url == nil && namespace.map { $0 == frame.namespace } != false
                && instance.map { $0 == frame.instance } != false
        case let .eddystone(.url(frame)):
            return region == nil && namespace == nil && instance == nil && url.map { $0 == frame.url } != false
        default:
            return false
        }
    }
}

/// Reports of every advertiser heard in, the audit of the one chosen out.
public struct AuditCollector: Sendable {
    public let choice: AuditChoice
    private let profile: AuditProfile?
    private let configuredInterval: Double?
    /// One audit per advertiser: by address, or all the chosen beacon's reports in one.
    private var audits: [BluetoothAddress: AdvertiserAudit] = [:]
    /// Addresses the chosen beacon was heard from (their scan responses belong to it).
    private var chosenAddresses: Set<BluetoothAddress> = []
    private var chosen: AdvertiserAudit
    /// Reports that were not the chosen advertiser's.
    public private(set) var others = 0

    public init(choice: AuditChoice, profile: AuditProfile? = nil, configuredInterval: Double? = nil) {
        self.choice = choice
        self.profile = profile
        self.configuredInterval = configuredInterval
        chosen = AdvertiserAudit(profile: profile, configuredInterval: configuredInterval)
    }

    public mutating func add(_ report: ScanReport, at time: Double) {
        if choice.byBeacon {
            let beacons = (try? AdvertisingData(parsing: report.data)).flatMap { try? Beacon.beacons(in: $0) } ?? []
            if beacons.contains(where: choice.matches) {
                chosenAddresses.insert(report.address)
            } else if !(report.isScanResponse && chosenAddresses.contains(report.address)) {
                others += 1
                return
            }
            chosen.add(report, at: time)
        } else if let address = choice.address {
            guard report.address == address else {
                others += 1
                return
            }
            chosen.add(report, at: time)
        } else {
            audits[report.address, default: AdvertiserAudit(profile: profile, configuredInterval: configuredInterval)]
                .add(report, at: time)
        }
    }

    /// The chosen advertiser's address (the last heard, for a beacon whose address rotates) and
    /// its audit; nil when it was not heard. With no choice, the strongest advertiser that
    /// carries a beacon (any advertiser when none does), by mean RSSI.
    public func result() -> (address: BluetoothAddress, audit: AuditResult)? {
        if choice.byBeacon || choice.address != nil {
            let result = chosen.result()
            guard result.reports > 0, let last = result.addresses.last?.address else { return nil }
            return (last, result)
        }
        // (A source without RSSI, an air sniffer's plain capture, ranks every advertiser equal.)
        func mean(_ audit: AdvertiserAudit) -> Double { audit.meanRSSI ?? -1000 }
        let heard = audits.filter { $0.value.heard > 0 }
        let pool = heard.contains { $0.value.heardBeacon } ? heard.filter { $0.value.heardBeacon } : heard
        guard let strongest = pool.max(by: { (mean($0.value), $1.key.description) < (mean($1.value), $0.key.description) })
        else { return nil }
        return (strongest.key, strongest.value.result())
    }
}
