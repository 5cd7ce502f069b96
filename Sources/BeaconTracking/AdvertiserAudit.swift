// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The advertising interval of one advertiser, estimated from when its reports arrived.
///
/// Each advertising event comes `interval + advDelay` after the one before, `advDelay` a
/// pseudo-random 0 to 10 ms (Core Vol 6 Part B 4.4.2.2.1); a scanner misses some events. The
/// spacings between reports therefore cluster at one, two, three ... event periods. The
/// shortest cluster gives the period to count with; every spacing then counts as the whole
/// number of periods nearest to it, and the period is their total over their count. The delay
/// shows as the width of the shortest cluster (uniform over 10 ms on a real controller, none on
/// a virtual one): half of it is taken off, so the interval is what was configured.
public struct IntervalEstimate: Sendable, Hashable {
    /// The mean time between advertising events (the interval and the mean delay), in ms.
    public var eventPeriod: Double
    /// The advertising interval the advertiser was configured with, estimated, in ms.
    public var interval: Double
    /// The mean random delay added to each event, as measured (0 to 5 ms), in ms.
    public var meanDelay: Double
    /// The spacings between the reports heard, in ms.
    public var minimumSpacing: Double
    public var medianSpacing: Double
    public var p90Spacing: Double
    /// The advertising events the advertiser sent from the first report heard to the last, estimated.
    public var eventsSent: Int
    /// The reports heard (one per event).
    public var eventsHeard: Int

    /// The share of the advertiser's events a report was heard for (0...1).
    public var heardShare: Double { eventsSent > 0 ? Double(eventsHeard) / Double(eventsSent) : 0 }

    /// Reports closer than this are one event heard twice (on two channels).
    public static let sameEvent = 0.003

    /// The estimate from the times (seconds) reports of one advertiser arrived; nil with fewer
    /// than four reports.
    public init?(times: [Double]) {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= Self.sameEvent }) ?? true {
            events.append(time)
        }
        guard events.count >= 4 else { return nil }
        let spacings = zip(events.dropFirst(), events).map { ($0 - $1) * 1000 }
        let sorted = spacings.sorted()
        func quantile(_ values: [Double], _ q: Double) -> Double {
            values[min(values.count - 1, max(0, Int((Double(values.count - 1) * q).rounded())))]
        }
        // The shortest cluster: spacings within half a period of the lower tail; when that
        // tail is itself two periods (few reports, many missed), the single ones below it.
        var low = quantile(sorted, 0.1)
        if let single = sorted.first(where: { $0 >= low * 0.4 && $0 <= low * 0.75 }) { low = single }
        let single = sorted.filter { $0 < low * 1.45 }
        var base = quantile(single, 0.5)
        // Spacings halfway between two multiples of it (three periods against two, with no
        // single one heard) say the period is a half or a third of it.
        func misfits(_ period: Double) -> Int {
            spacings.filter { abs($0 / period - ($0 / period).rounded()) > 0.3 }.count
        }
        if misfits(base) >= max(1, spacings.count / 10),
           let divisor = [2.0, 3.0].first(where: { misfits(base / $0) == 0 }) {
            base /= divisor
        }
        var periods = 0
        for spacing in spacings { periods += max(1, Int((spacing / base).rounded())) }
        eventPeriod = spacings.reduce(0, +) / Double(periods)
        // A uniform delay over width w: the shortest cluster's 10th to 90th percentile is 0.8 w.
        let width = single.count >= 5 ? (quantile(single, 0.9) - quantile(single, 0.1)) / 0.8 : 0
        meanDelay = min(5, max(0, width / 2))
        interval = eventPeriod - meanDelay
        minimumSpacing = sorted[0]
        medianSpacing = quantile(sorted, 0.5)
        p90Spacing = quantile(sorted, 0.9)
        eventsSent = periods + 1
        eventsHeard = events.count
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
        switch beacon {
        case .iBeacon: self = .ibeacon
        case .altBeacon: self = .altbeacon
        case .eddystone(.uid): self = .eddystoneUID
        case .eddystone(.url): self = .eddystoneURL
        case .eddystone(.tlm), .eddystone(.encryptedTLM): self = .eddystoneTLM
        default: return nil
        }
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
        case pass, warn, fail
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

    /// The first rule that failed, if any.
    public var failed: [AuditRule] { rules.filter { $0.verdict == .fail } }
    public var warned: [AuditRule] { rules.filter { $0.verdict == .warn } }
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
                                 rules: [])
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
        result.rules = AuditRules(profile: chosen, data: firstData, parsed: parsed, kinds: kindOrder,
                                  estimate: estimate, configured: configuredInterval, distinctData: data.count).all
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
        guard !kinds.isEmpty else { return nil }
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
        guard !kinds.isEmpty else { return nil }
        let extended = kinds.contains { !$0.contains(.legacy) }
        return AuditRule(name: "legacy-pdu", verdict: extended ? .warn : .pass,
                         seen: extended ? "extended advertising PDUs" : "legacy advertising PDUs",
                         wanted: "legacy PDUs (phones that scan for legacy advertising only miss extended PDUs)",
                         source: Self.core)
    }

    /// The interval: what the device was configured to do (`--interval`), else the profile's custom.
    func interval() -> AuditRule {
        guard let estimate else {
            return AuditRule(name: "interval", verdict: .warn, seen: "too few reports to estimate (4 needed)",
                             wanted: configured.map { "\(format($0)) ms" } ?? "an estimate", source: source)
        }
        let seen = "\(format(estimate.interval)) ms (events every \(format(estimate.eventPeriod)) ms)"
        // The random delay cannot be told from a host's timing jitter over a few events: the
        // interval is taken to lie between the event period less the standard's mean delay
        // (5 ms) and the period itself.
        func near(_ wanted: Double, within tolerance: Double) -> Bool {
            wanted >= estimate.eventPeriod - 5 - tolerance && wanted <= estimate.eventPeriod + tolerance
        }
        if let configured {
            let tolerance = max(2, configured * 0.02)
            return AuditRule(name: "interval", verdict: near(configured, within: tolerance) ? .pass : .fail,
                             seen: seen, wanted: "\(format(configured)) ms (--interval) within \(format(tolerance)) ms",
                             source: "the device's configuration")
        }
        if profile == .ibeacon {
            return AuditRule(name: "interval", verdict: near(100, within: 10) ? .pass : .fail, seen: seen,
                             wanted: "100 ms (within 10 ms)", source: Self.apple)
        }
        return AuditRule(name: "interval", verdict: estimate.eventPeriod - 5 <= 1050 ? .pass : .warn, seen: seen,
                         wanted: "at most 1 s (common practice: 100 ms to 1 s)", source: source)
    }

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
