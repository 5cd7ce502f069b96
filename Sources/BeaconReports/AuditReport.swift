// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An audit's outcome as people read it (a verdict first, then the rules and the measurements),
/// as one JSON object, or as a JUnit report with a test case per rule.
public struct AuditReport: Codable, Sendable {
    public struct Rule: Codable, Sendable {
        public var name: String
        public var verdict: String
        public var seen: String
        public var wanted: String
        public var source: String
    }

    public struct Interval: Codable, Sendable {
        public var intervalMs: Double
        public var eventPeriodMs: Double
        public var meanDelayMs: Double
        public var minimumSpacingMs: Double
        public var medianSpacingMs: Double
        public var p90SpacingMs: Double
        public var eventsSent: Int
        public var eventsHeard: Int
        /// Its stays (1, or more where it went and came back: silences not counted as events sent).
        public var stays: Int
        public var heardPercent: Double
        /// How far the event period may be off, either way.
        public var uncertaintyMs: Double
        /// Reports read in a burst or late by a quarter period: heard, not timed.
        public var lateReads: Int
        /// Whether enough reports came on time to count the periods surely.
        public var sure: Bool
    }

    public struct Address: Codable, Sendable {
        public var address: String
        public var firstHeardSeconds: Double
    }

    /// pass, warn, inconclusive or fail: fail when a rule fails, else inconclusive when one
    /// could not be judged, else warn when one warns.
    public var verdict: String
    /// The name the JUnit suite goes by: `--name`, else the beacon's identity (the one chosen,
    /// or the one heard), never an address that may rotate unless an address chose it.
    public var name: String
    public var profile: String?
    public var profileChosenBy: String
    public var beacon: String?
    public var address: String
    public var addressType: String?
    public var addresses: [Address]
    public var reports: Int
    public var scanResponses: Int
    public var seconds: Double
    public var interval: Interval?
    public var rssiMean: Double?
    public var rssiDeviation: Double?
    public var rssiMin: Int?
    public var rssiMax: Int?
    public var pdu: [String]
    public var advertisedTxPower: Int?
    public var distinctData: Int
    /// Reports of other formats from the same advertiser, set apart: "eddystone-tlm x16".
    public var interleaved: [String]
    /// What the reports are: HCI reports (when the controller reported) or a capture's.
    public var source: String
    public var rules: [Rule]
    /// Where the interval could not be estimated: seconds of listening that would have done.
    public var neededSeconds: Double?

    /// - Parameters:
    ///   - source: what the times are ("HCI reports from hci1: ...").
    ///   - name: the suite's name (`AuditReport.suiteName`).
    public init(address: BluetoothAddress, result: AuditResult, source: String, name: String) {
        verdict = !result.failed.isEmpty ? "fail" : !result.inconclusive.isEmpty ? "inconclusive"
            : !result.warned.isEmpty ? "warn" : "pass"
        self.name = name
        neededSeconds = result.neededSeconds
        profile = result.profile?.name
        profileChosenBy = result.profileAsked ? "--profile" : result.profile == nil ? "none heard" : "what was heard"
        beacon = result.beacon.map { SightingFormatter.text(BeaconSighting(beacon: $0)) }
        self.address = address.description
        addressType = result.addressType.map { "\($0)" }
        addresses = result.addresses.map { Address(address: $0.address.description, firstHeardSeconds: Self.round($0.firstHeard, 3)) }
        reports = result.reports
        scanResponses = result.scanResponses
        seconds = Self.round(result.span, 3)
        interval = result.interval.map {
            Interval(intervalMs: Self.round($0.interval, 1), eventPeriodMs: Self.round($0.eventPeriod, 1),
                     meanDelayMs: Self.round($0.meanDelay, 1), minimumSpacingMs: Self.round($0.minimumSpacing, 1),
                     medianSpacingMs: Self.round($0.medianSpacing, 1), p90SpacingMs: Self.round($0.p90Spacing, 1),
                     eventsSent: $0.eventsSent, eventsHeard: $0.eventsHeard, stays: $0.stays, heardPercent: Self.round($0.heardShare * 100, 1),
                     uncertaintyMs: Self.round($0.uncertainty, 1), lateReads: $0.lateReads, sure: $0.isSure)
        }
        rssiMean = result.rssiMean.map { Self.round($0, 1) }
        rssiDeviation = result.rssiDeviation.map { Self.round($0, 1) }
        rssiMin = result.rssiRange.map { Int($0.lowerBound) }
        rssiMax = result.rssiRange.map { Int($0.upperBound) }
        pdu = result.pduKinds.map { "\($0.kind) x\($0.count)" }
        advertisedTxPower = result.advertisedTxPower.map(Int.init)
        distinctData = result.distinctData
        interleaved = result.interleaved.map { "\($0.profile.name) x\($0.reports)" }
        self.source = source
        rules = result.rules.map { Rule(name: $0.name, verdict: $0.verdict.rawValue, seen: $0.seen, wanted: $0.wanted,
                                       source: $0.source) }
    }

    private static func round(_ value: Double, _ places: Int) -> Double {
        let scale = places == 1 ? 10.0 : 1000.0
        return (value * scale).rounded() / scale
    }

    /// The verdict first, then each rule, then what was measured.
    public var text: String {
        let failed = rules.filter { $0.verdict == "fail" }.map(\.name)
        let warned = rules.filter { $0.verdict == "warn" }.map(\.name)
        let unjudged = rules.filter { $0.verdict == "inconclusive" }.map(\.name)
        let format: String = profile.map { "\($0) (\(profileChosenBy))" } ?? "no beacon format recognised"
        var first: String = "\(verdict.uppercased()): \(format) at \(address)"
        if !failed.isEmpty { first += "; failed: \(failed.joined(separator: ", "))" }
        if !unjudged.isEmpty { first += "; not judged: \(unjudged.joined(separator: ", "))" }
        if !warned.isEmpty { first += "; warnings: \(warned.joined(separator: ", "))" }
        var lines: [String] = [first]
        if let beacon { lines.append("  \(beacon)") }
        lines.append("")
        let width = max(4, rules.map(\.name.count).max() ?? 0)
        for rule in rules {
            let shown = rule.verdict == "inconclusive" ? "?" : rule.verdict.uppercased()
            let verdict: String = shown.padding(toLength: 5, withPad: " ", startingAt: 0)
            let name: String = rule.name.padding(toLength: width + 2, withPad: " ", startingAt: 0)
            let indent = String(repeating: " ", count: width + 9)
            lines.append("  \(verdict)\(name)seen: \(rule.seen)")
            lines.append("\(indent)wanted: \(rule.wanted) [\(rule.source)]")
        }
        lines.append("")
        if let interval {
            let events = "events every \(interval.eventPeriodMs) ms, random delay \(interval.meanDelayMs) ms on average"
            let spacing = "min \(interval.minimumSpacingMs), median \(interval.medianSpacingMs), p90 \(interval.p90SpacingMs) ms"
            lines.append("  interval      \(interval.intervalMs) ms (\(events)); spacing \(spacing)")
            let share = "\(interval.eventsHeard) of about \(interval.eventsSent) events (\(interval.heardPercent) %)"
            lines.append("  heard         \(share) in \(seconds) s"
                         + (interval.stays > 1 ? ", in \(interval.stays) stays (it went and came back)" : ""))
        } else {
            lines.append("  heard         \(reports) reports in \(seconds) s (too few for an interval"
                         + (neededSeconds.map { "; about \(Int($0)) s would have done" } ?? "") + ")")
        }
        if let rssiMean, let rssiDeviation, let rssiMin, let rssiMax {
            lines.append("  rssi          mean \(rssiMean) dBm, deviation \(rssiDeviation) dB, \(rssiMin) to \(rssiMax) dBm")
        }
        var kinds: String = pdu.isEmpty ? "not reported by the source" : pdu.joined(separator: ", ")
        if scanResponses > 0 { kinds += "; \(scanResponses) scan responses" }
        lines.append("  pdu           \(kinds)")
        var sender: String = address
        if let addressType { sender += " (\(addressType))" }
        if addresses.count > 1 {
            let changes: [String] = addresses.dropFirst().map { "\($0.firstHeardSeconds) s" }
            sender += "; \(addresses.count) addresses, changed at \(changes.joined(separator: ", "))"
        } else {
            sender += "; unchanged"
        }
        lines.append("  address       \(sender)")
        if let advertisedTxPower { lines.append("  tx power      \(advertisedTxPower) dBm (advertised)") }
        var data: String = distinctData <= 1 ? "unchanged" : "\(distinctData) different"
        if !interleaved.isEmpty { data += "; interleaved, not measured: \(interleaved.joined(separator: ", "))" }
        lines.append("  data          \(data)")
        lines.append("  source        \(source)")
        return lines.joined(separator: "\n")
    }

    /// One JSON object, keys sorted.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JUnit report: a test case `heard`, then one per rule; a rule that fails is a failure,
    /// one not judged is skipped with why, a warning passes with what was seen as its output.
    public var junit: String { suite.xml }

    public var suite: JUnitSuite {
        var cases = [JUnitSuite.Case("heard", .passed, output: "\(reports) reports from \(address) in \(seconds) s")]
        for rule in rules {
            let detail = "seen: \(rule.seen); wanted: \(rule.wanted) [\(rule.source)]"
            switch rule.verdict {
            case "fail": cases.append(.init(rule.name, .failed(detail)))
            case "inconclusive": cases.append(.init(rule.name, .skipped("not judged: " + detail)))
            case "warn": cases.append(.init(rule.name, .passed, output: "warning: " + detail))
            default: cases.append(.init(rule.name, .passed))
            }
        }
        return JUnitSuite(name: name, cases: cases, time: seconds)
    }

    /// The suite's name: `beacon-emit audit NAME`, NAME `--name`'s, or `chosen` (what the
    /// options chose: identifiers, or an address), or the beacon heard, or the address heard.
    public static func suiteName(name: String?, chosen: String?, heard: Beacon?, address: BluetoothAddress?) -> String {
        "beacon-emit audit " + (name ?? chosen ?? heard.map(identity) ?? address?.description ?? "the strongest advertiser")
    }

    /// A beacon by its identifiers alone (what stays when its address rotates).
    public static func identity(_ beacon: Beacon) -> String {
        beacon.format.identity
    }
}

