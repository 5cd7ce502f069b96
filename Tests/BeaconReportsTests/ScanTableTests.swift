// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconReports
import BeaconTracking
import Foundation
import Testing

/// `scan`'s table on a terminal: per beacon how many reports, how long ago the last, and the
/// mean period between its reports.
@Suite struct ScanTableTests {
    @Test func theTableCountsReportsAndEstimatesTheInterval() throws {
        let uuid = try UUID(beaconText: "39ED98FF2900441A802F9C398FC199D2")
        let address = try BluetoothAddress(parsing: "11:22:33:44:55:66")
        let sighting = BeaconSighting(beacon: .iBeacon(IBeacon(proximityUUID: uuid, major: 1, minor: 2)), address: address,
                                      addressType: .randomDevice, rssi: -60)
        var tracker = BeaconTracker()
        // Eleven reports 0.1 s apart, from 1.0 s to 2.0 s: ten periods of 100 ms.
        for index in 0...10 { tracker.observe(sighting, at: 1 + Double(index) / 10) }
        let lines = ScanPrinter.tableLines(tracker, now: 2.5)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[1].contains("count   seen     every"), "\(lines[1])")
        let row = lines[2].split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        // distance, proximity, rssi, count, seen (value, unit), every (value, unit), address, beacon...
        #expect(row.contains("11") && lines[2].contains("0.5 s") && lines[2].contains("100 ms"), "\(lines[2])")
        #expect(lines[2].contains("11:22:33:44:55:66  iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2"), "\(lines[2])")
        // One report: no period to estimate.
        var single = BeaconTracker()
        single.observe(sighting, at: 1)
        #expect(ScanPrinter.tableLines(single, now: 1)[2].contains(" ?  "), "\(ScanPrinter.tableLines(single, now: 1))")
    }
}
