// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

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
        if let region = choice.layout { chosen.layouts = [(region.name, region.layout)] }
    }

    public mutating func add(_ report: ScanReport, at time: Double) {
        if choice.byBeacon {
            if let data = try? AdvertisingData(parsing: report.data), choice.chooses(data) {
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
