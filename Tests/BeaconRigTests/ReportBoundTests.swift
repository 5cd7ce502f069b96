// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
@testable import BeaconRig
import BeaconTracking
import Foundation
import Testing

/// The reports' pages stay a bounded size whatever was run or heard: an hour's run of 20
/// beacons heard ten times a second with 20,000 steps, region changes, phone lines and
/// expectations, and a 200,000-report audit.
@Suite struct ReportBoundTests {
    @Test func anHoursRunGivesAPageOfAFewMegabytes() {
        var outcome = ScenarioOutcome()
        outcome.timeline = ScenarioTimeline(beacons: 20)
        let names = (1...20).map { "beacon-\($0)" }
        outcome.timeline.began(names, at: 0)
        for tenth in 0..<36_000 {
            for name in names { outcome.timeline.sighting(name, at: Double(tenth) / 10) }
        }
        for index in 0..<20_000 {
            let at = Double(index) * 0.18
            outcome.timeline.step("\(index + 1)", nil, "expect beacon-1 seen within 1 s", at: at)
            outcome.timeline.region("store", index % 2 == 0 ? "inside" : "outside", at: at)
            outcome.timeline.phone(PhoneLine(phone: "pixel", text: "didEnterRegion store", at: at, region: "store", transition: .enter))
            outcome.results.append(ScenarioResult(number: "\(index + 1)", round: nil, place: Scenario.Place(line: 9, column: 5),
                                                  text: "expect beacon-1 seen within 1 s", passed: index % 7 != 0, started: at,
                                                  ended: at + 0.1, detail: "seen after 100 ms"))
        }
        outcome.timeline.ended(nil, at: 3600)
        outcome.duration = 3600
        let html = ScenarioReport.html(title: "hour", outcome: outcome, startedUnix: 0)
        print("an hour's run: \(html.utf8.count) bytes")
        #expect(html.utf8.count < 8_000_000, "\(html.utf8.count) bytes")
        #expect(outcome.timeline.sightings.values.map(\.count).reduce(0, +) <= ScenarioTimeline.maximumSightings)
        #expect(outcome.timeline.stride["beacon-1"] == 64 && outcome.timeline.sighted["beacon-1"] == 36_000)
        #expect(html.contains("sightings thinned: beacon-1 every 64th of 36000") && html.contains("15000 more expectations"))
        #expect(outcome.timeline.leftOut == 45_000)
    }

    @Test func aLargeAuditGivesAPageOfAFewHundredKilobytes() throws {
        var audit = AdvertiserAudit(configuredInterval: 100)
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0x39, count: 16) + [0, 1, 0, 2, 0xC5]
        for index in 0..<200_000 {
            audit.add(ScanReport(address: BluetoothAddress(0xC0FFEE), addressType: .randomDevice,
                                 rssi: Int8(-60 - index % 20), data: data), at: Double(index) * 0.1)
        }
        let result = audit.result()
        let report = AuditReport(address: BluetoothAddress(0xC0FFEE), result: result, source: "a test", name: "big")
        let html = AuditPage.html(report, series: result.series, configuredMs: 100, startedUnix: 0)
        print("a 200,000-report audit: \(html.utf8.count) bytes")
        #expect(html.utf8.count < 500_000, "\(html.utf8.count) bytes")
    }
}
