// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation
import Testing

/// A reproducible generator (SplitMix64), so that a timeline with random delays and misses is
/// the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// When an advertiser's events arrive at a scanner: every `interval` ms plus the standard's
/// 0-10 ms random delay (or none, as on a virtual controller), each heard with `heard` odds.
func eventTimes(interval: Double, seconds: Double, delay: Bool = true, heard: Double = 1, seed: UInt64 = 1) -> [Double] {
    var generator = SeededGenerator(state: seed)
    var times: [Double] = []
    var now = 0.0
    while now < seconds {
        if Double.random(in: 0..<1, using: &generator) < heard { times.append(now) }
        now += (interval + (delay ? Double.random(in: 0...10, using: &generator) : 0)) / 1000
    }
    return times
}

@Suite struct IntervalEstimateTests {
    /// The configured interval within 1 ms (0.2 % at 1 s) from 30 s of reports (120 s at 1 s), with the
    /// standard's random delay and a scanner that hears every report, or misses half of them
    /// at random; the events sent and the share heard as they were.
    @Test(arguments: [20.0, 100.0, 1000.0], [1.0, 0.5])
    func theConfiguredIntervalIsFoundThroughDelaysAndMisses(interval: Double, heard: Double) throws {
        let times = eventTimes(interval: interval, seconds: interval >= 1000 ? 120 : 30, heard: heard, seed: UInt64(interval))
        let estimate = try #require(IntervalEstimate(times: times))
        #expect(abs(estimate.interval - interval) <= max(1, interval * 0.002), "estimated \(estimate.interval) ms")
        #expect(abs(estimate.meanDelay - 5) <= 1, "the delay's mean: \(estimate.meanDelay) ms")
        #expect(abs(estimate.heardShare - heard) <= 0.1, "heard \(estimate.heardShare)")
    }

    /// A virtual controller adds no delay: the spacing is the interval, exactly.
    @Test func withoutTheRandomDelayTheSpacingIsTheInterval() throws {
        let estimate = try #require(IntervalEstimate(times: eventTimes(interval: 100, seconds: 10, delay: false, heard: 0.7)))
        #expect(abs(estimate.interval - 100) < 0.01 && estimate.meanDelay < 0.01)
    }

    /// No single period heard, only two and three at a time: the period is what both are multiples of.
    @Test func spacingsOfTwoAndThreePeriodsGiveThePeriod() throws {
        let estimate = try #require(IntervalEstimate(times: [0, 2, 5, 7, 10, 12, 15]))
        #expect(abs(estimate.eventPeriod - 1000) < 0.01 && estimate.eventsSent == 16, "\(estimate)")
    }

    @Test func fewerThanFourReportsGiveNoEstimate() {
        #expect(IntervalEstimate(times: [0, 0.1, 0.2]) == nil)
        #expect(IntervalEstimate(times: [0, 0.001, 0.1, 0.2]) == nil, "two reports of one event are one")
    }
}

@Suite struct AdvertiserAuditTests {
    static let address = BluetoothAddress(0x0011_2233_4455)
    static let iBeaconData = Array(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                           major: 101, minor: 2).advertisingData.bytes)

    /// 10 s of one advertiser's reports into an audit.
    func audit(data: [UInt8] = iBeaconData, kind: AdvertisingPDUKind = [.legacy], interval: Double = 100,
               profile: AuditProfile? = nil, configured: Double? = nil) -> AuditResult {
        var audit = AdvertiserAudit(profile: profile, configuredInterval: configured)
        for time in eventTimes(interval: interval, seconds: 10) {
            audit.add(ScanReport(address: Self.address, addressType: .randomDevice, rssi: -60, data: data, kind: kind), at: time)
        }
        return audit.result()
    }

    func verdicts(_ result: AuditResult) -> [String: AuditRule.Verdict] {
        Dictionary(uniqueKeysWithValues: result.rules.map { ($0.name, $0.verdict) })
    }

    /// Each format that states rules is audited by them under its own name: its own bytes pass
    /// its layout, and the profile heard is the one its name finds.
    @Test func eachFormatsSpecificationHoldsItsOwnBytes() throws {
        let uuid = UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!
        let beacons: [(Beacon, BeaconSpecification)] = [
            (.iBeacon(IBeacon(proximityUUID: uuid, major: 1, minor: 2)), IBeacon.specification),
            (.altBeacon(AltBeacon(id1: uuid, id2: 1, id3: 2)), AltBeacon.specification),
            (.eddystone(.uid(try EddystoneUID(txPowerAt0m: -20, namespace: Array(repeating: 1, count: 10),
                                              instance: Array(repeating: 2, count: 6)))), EddystoneUID.specification),
            (.eddystone(.url(try EddystoneURL(txPowerAt0m: -20, url: "https://example.com/"))), EddystoneURL.specification),
            (.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 1, uptimeDeciseconds: 1))),
             EddystoneTLM.specification),
        ]
        for (beacon, specification) in beacons {
            let data = beacon.advertisingData
            #expect(specification.name == beacon.format.formatName.description)
            #expect(AuditProfile(heardIn: data.bytes) == specification)
            #expect(specification.layout(data.structures) == .init(), "\(specification): \(specification.layout(data.structures))")
            // And another format's bytes do not.
            let other = beacons.first { $0.1 != specification }!.0.advertisingData
            #expect(!specification.layout(other.structures).problems.isEmpty, "\(specification)")
        }
        #expect(AuditProfile.all.prefix(5).map(\.name) == ["ibeacon", "altbeacon", "eddystone-uid", "eddystone-url", "eddystone-tlm"])
    }

    @Test func aProperIBeaconPassesEveryRule() {
        let result = audit()
        #expect(result.profile == IBeacon.specification && !result.profileAsked)
        #expect(verdicts(result) == ["flags": .pass, "layout": .pass, "non-connectable": .pass, "legacy-pdu": .pass,
                                     "interval": .pass, "data-constant": .pass, "events-heard": .pass])
        #expect(result.rssiMean == -60 && result.addresses.count == 1)
    }

    /// Each deliberate mistake fails its own rule, and only that one.
    @Test func eachMistakeFailsExactlyItsRule() throws {
        var connectable = verdicts(audit(kind: [.legacy, .connectable, .scannable]))
        #expect(connectable.removeValue(forKey: "non-connectable") == .fail)
        #expect(connectable.values.allSatisfy { $0 == .pass })

        var slow = verdicts(audit(interval: 1000))
        #expect(slow.removeValue(forKey: "interval") == .fail)
        #expect(slow.values.allSatisfy { $0 == .pass })

        var noFlags = verdicts(audit(data: Array(Self.iBeaconData.dropFirst(3)), profile: IBeacon.specification))
        #expect(noFlags.removeValue(forKey: "flags") == .fail)
        #expect(noFlags.values.allSatisfy { $0 == .pass })

        var otherCompany = Self.iBeaconData
        otherCompany[5] = 0x59
        let result = audit(data: otherCompany, profile: IBeacon.specification)
        var wrong = verdicts(result)
        #expect(wrong.removeValue(forKey: "layout") == .fail)
        #expect(wrong.values.allSatisfy { $0 == .pass })
        #expect(result.rules.first { $0.name == "layout" }?.seen.contains("company ID 0x0059") == true)
    }

    @Test func theConfiguredIntervalIsTheComparison() {
        #expect(verdicts(audit(interval: 500, configured: 500))["interval"] == .pass)
        #expect(verdicts(audit(interval: 500, configured: 250))["interval"] == .fail)
    }

    @Test func changingDataFailsExceptForTelemetry() {
        var audit = AdvertiserAudit()
        for (index, time) in eventTimes(interval: 100, seconds: 2).enumerated() {
            var data = Self.iBeaconData
            data[29] = UInt8(index % 2)
            audit.add(ScanReport(address: Self.address, addressType: .randomDevice, rssi: -60, data: data, kind: [.legacy]),
                      at: time)
        }
        #expect(audit.result().rules.first { $0.name == "data-constant" }?.verdict == .fail)
    }

    /// With no choice the strongest beacon is audited; by identifiers, the beacon whose
    /// address rotates is followed across addresses.
    @Test func theCollectorChoosesTheStrongestOrFollowsTheBeacon() throws {
        let other = Array(IBeacon(proximityUUID: UUID(), major: 1, minor: 1).advertisingData.bytes)
        var strongest = AuditCollector(choice: AuditChoice())
        var chosen = AuditCollector(choice: AuditChoice(region: BeaconRegion(
            uuid: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!, major: 101, minor: 2)))
        for (index, time) in eventTimes(interval: 100, seconds: 5).enumerated() {
            let ours = ScanReport(address: BluetoothAddress(UInt64(0xC000_0000_0000 + index / 20)), addressType: .randomDevice,
                                  rssi: -70, data: Self.iBeaconData, kind: [.legacy])
            let louder = ScanReport(address: Self.address, addressType: .publicDevice, rssi: -40, data: other, kind: [.legacy])
            for report in [ours, louder] {
                strongest.add(report, at: time)
                chosen.add(report, at: time)
            }
        }
        #expect(try #require(strongest.result()).address == Self.address)
        let followed = try #require(chosen.result())
        #expect(followed.audit.addresses.count >= 2 && followed.audit.rssiMean == -70)
        #expect(followed.audit.rules.allSatisfy { $0.verdict == .pass })
    }

    /// `audit --layout`: the advertiser whose data reads, through the app's layout, as a beacon
    /// of the region (its first identifiers), not another beacon of the layout beside it, nor
    /// an iBeacon; named by the layout and the identifiers given.
    @Test func aLayoutsRegionChoosesItsAdvertiser() throws {
        let layout = try BeaconLayout(parsing: "m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l")
        func data(_ first: [UInt8]) throws -> [UInt8] {
            Array(try layout.advertisingData(identifiers: [first, [0, 7]], data: [300], measuredPower: -62).bytes)
        }
        let ours = try data([1, 2, 3, 4])
        let sibling = try data([10, 11, 12, 13])
        var collector = AuditCollector(choice: AuditChoice(
            layout: try BeaconLayout.Region(name: "acme", layout: layout, identifiers: ["0x01020304"])))
        #expect(collector.choice.identity == "layout=acme id1=0x01020304")
        let times = eventTimes(interval: 100, seconds: 5)
        for time in times {
            for (address, bytes) in [(Self.address, ours), (BluetoothAddress(0x00AA_BBCC_DDEE), sibling),
                                     (BluetoothAddress(0x0011_1111_1111), Self.iBeaconData)] {
                collector.add(ScanReport(address: address, addressType: .publicDevice, rssi: -60, data: bytes, kind: [.legacy]),
                              at: time)
            }
        }
        let chosen = try #require(collector.result())
        #expect(chosen.address == Self.address)
        #expect(chosen.audit.reports == times.count && collector.others == 2 * times.count)
        // The beacon audited, as the reports show it: read through the layout, under its name.
        let beacon = try #require(chosen.audit.beacon)
        #expect(beacon.format.identity == "layout layout=acme ids=0x01020304,7", "\(beacon.format.identity)")
        #expect(beacon.measuredPower == -62)
    }
}
