// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

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
    /// The reports' times and RSSI, for a picture.
    public var series = AuditSeries()

    /// The first rule that failed, if any.
    public var failed: [AuditRule] { rules.filter { $0.verdict == .fail } }
    public var warned: [AuditRule] { rules.filter { $0.verdict == .warn } }
    public var inconclusive: [AuditRule] { rules.filter { $0.verdict == .inconclusive } }
}
