// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A rule as `audit --list-rules` lists it: what it checks, where it comes from, which
/// profiles apply it, and what makes it a failure, a warning, or not judged.
public struct AuditRuleInfo: Sendable, Hashable {
    public var name: String
    public var checks: String
    public var source: String
    /// The profiles that apply it (all of them, or those named).
    public var profiles: [AuditProfile]
    public var verdicts: String

    /// Every rule, in the order an audit judges them, as the profiles registered now state them.
    public static var all: [AuditRuleInfo] {
        let profiles = AuditProfile.all
        func names(_ chosen: [AuditProfile]) -> String { chosen.map(\.displayName).joined(separator: ", ") }
        let strict = profiles.filter(\.connectableFails)
        let timed = profiles.filter { $0.interval != nil }
        let moving = profiles.filter(\.dataMayChange)
        let intervals = timed.map {
            "\($0.displayName) \(AuditRules.format($0.interval!.ms)) ms within \(AuditRules.format($0.interval!.within)) ms"
        }
        return [
            AuditRuleInfo(name: "flags", checks: "a Flags structure of 0x06 (LE General Discoverable, BR/EDR not supported)",
                          source: "common practice: some SDKs ignore a beacon without Flags", profiles: profiles,
                          verdicts: "fail: no Flags; warn: another value"),
            AuditRuleInfo(name: "layout", checks: "the format's exact bytes: "
                          + profiles.map { "\($0.displayName) \($0.layoutWanted)" }.joined(separator: "; "),
                          source: unique(profiles.map(\.source)).joined(separator: "; "), profiles: profiles,
                          verdicts: "fail: a byte out of place; warn: a value the specification finds unusual "
                          + "(an iBeacon measured power outside -100 to -30 dBm)"),
            AuditRuleInfo(name: "non-connectable", checks: "the PDU type: ADV_NONCONN_IND (neither connectable nor scannable)",
                          source: (strict.map { "\($0.source) (\($0.displayName))" } + [AuditRules.core]).joined(separator: "; "),
                          profiles: profiles,
                          verdicts: "fail: a connectable \(names(strict)); warn: other formats connectable, or scannable; "
                          + "inconclusive: the source does not give the PDU type"),
            AuditRuleInfo(name: "legacy-pdu", checks: "legacy advertising PDUs (phones that scan for legacy only miss extended ones)",
                          source: AuditRules.core, profiles: profiles,
                          verdicts: "warn: extended PDUs; inconclusive: the source does not give the PDU type"),
            AuditRuleInfo(name: "interval", checks: "the advertising interval, estimated through missed events, the standard's "
                          + "0-10 ms random delay and reports a busy host read late: with --interval MS, that within 2 % (at "
                          + "least 2 ms); else \((intervals + ["other formats at most 1 s"]).joined(separator: ", "))",
                          source: "the device's configuration (--interval); "
                          + timed.map { "\($0.source) (\($0.displayName)); " }.joined() + "common practice",
                          profiles: profiles,
                          verdicts: "fail: outside, surely; warn: over 1 s for a format without a rule; inconclusive: fewer "
                          + "than \(IntervalEstimate.reportsNeeded) reports on time, or too few (\(IntervalEstimate.reportsSure)) "
                          + "or under half on time to count the periods surely, or outside by less than the estimate is unsure of"),
            AuditRuleInfo(name: "data-constant", checks: "the same advertising data throughout (\(names(moving)) may change)",
                          source: "common practice; " + moving.map { "\($0.source) (\($0.displayName))" }.joined(separator: "; "),
                          profiles: profiles,
                          verdicts: "fail: the data changed (except \(names(moving)))"),
            AuditRuleInfo(name: "events-heard", checks: "the share of the advertiser's events a report was heard for",
                          source: "the scanner's view", profiles: profiles,
                          verdicts: "warn: under 50 % (a busy air, a weak signal, a scanner that misses reports); never a failure"),
        ]
    }

    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
