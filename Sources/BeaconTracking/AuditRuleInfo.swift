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
