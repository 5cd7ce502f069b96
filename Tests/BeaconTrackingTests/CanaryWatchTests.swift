// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation
import Testing

/// The canary's judgement (`advertise --canary`) on a clock the test moves.
@Suite struct CanaryWatchTests {
    static let uuid = UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!
    static func iBeacon(minor: UInt16) -> Beacon { .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: minor, measuredPower: -59)) }
    static let start = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    /// A report of `beacon` as the air carries it (its advertising data), from another address.
    static func report(of beacon: Beacon, scanResponse: Bool = false) -> ScanReport {
        ScanReport(address: BluetoothAddress(0x0605_0403_0201), addressType: .randomDevice, rssi: -60,
                   data: beacon.advertisingData.bytes, isScanResponse: scanResponse)
    }

    @Test func aBeaconHeardIsNeverJudged() {
        var watch = CanaryWatch(beacons: [Self.iBeacon(minor: 1)], after: .seconds(5), now: Self.at(0))
        for tenth in 1...200 {
            #expect(watch.heard(Self.report(of: Self.iBeacon(minor: 1)), now: Self.at(Double(tenth) / 10)).isEmpty)
            #expect(watch.check(now: Self.at(Double(tenth) / 10)).isEmpty)
        }
        #expect(watch.states(now: Self.at(20.5)) == [.init(lastHeard: .milliseconds(500), unheard: false)])
        #expect(watch.ownReportsHeard == 200)
    }

    /// Unheard for `after`: one `.notHeard` (to reprogram), then `.stillNotHeard` every `after`,
    /// never a second `.notHeard` in the same episode; heard: `.heardAgain` with the time unheard.
    @Test func anEpisodeIsReprogrammedOnceReportedThenEnds() {
        let beacons = [Self.iBeacon(minor: 1), Self.iBeacon(minor: 2)]
        var watch = CanaryWatch(beacons: beacons, after: .seconds(5), now: Self.at(0))
        _ = watch.heard(Self.report(of: beacons[0]), now: Self.at(1))
        _ = watch.heard(Self.report(of: beacons[1]), now: Self.at(1))
        _ = watch.heard(Self.report(of: beacons[1]), now: Self.at(3))
        #expect(watch.check(now: Self.at(5.9)).isEmpty)
        #expect(watch.nextCheck == Self.at(6))
        #expect(watch.check(now: Self.at(6)) == [.notHeard(beacons: [0], for: .seconds(5))])
        // The emitter reprograms: off the air, then back; nothing is judged in between.
        watch.offAir(now: Self.at(6.1))
        #expect(watch.nextCheck == nil)
        #expect(watch.check(now: Self.at(30)).isEmpty)
        watch.back(now: Self.at(6.2))
        // Beacon 2 has 5 s from the return; beacon 1 is reported again 5 s after it, not reprogrammed.
        #expect(watch.check(now: Self.at(11.1)).isEmpty)
        #expect(watch.check(now: Self.at(11.2)) == [.notHeard(beacons: [1], for: .milliseconds(8200)),
                                                      .stillNotHeard(beacon: 0, for: .milliseconds(10200))])
        #expect(watch.check(now: Self.at(16.2)) == [.stillNotHeard(beacon: 0, for: .milliseconds(15200)),
                                                      .stillNotHeard(beacon: 1, for: .milliseconds(13200))])
        #expect(watch.states(now: Self.at(16.2)).map(\.unheard) == [true, true])
        #expect(watch.heard(Self.report(of: beacons[0]), now: Self.at(17)) == [.heardAgain(beacon: 0, after: .seconds(16))])
        #expect(watch.heard(Self.report(of: beacons[0]), now: Self.at(17.1)).isEmpty)
        #expect(watch.states(now: Self.at(17.5)) == [.init(lastHeard: .milliseconds(400), unheard: false),
                                                     .init(lastHeard: .seconds(14.5), unheard: true)])
    }

    /// A beacon of an app's layout is heard through its layout (nothing decodes one without it):
    /// its own advertising counts, another beacon of the same layout does not. The bytes are
    /// written out by hand from the layout's terms.
    @Test func aLayoutsBeaconIsHeardThroughItsLayout() throws {
        let layout = try BeaconLayout(parsing: "m:2-2=7a,i:3-6,p:7-7")
        let ours = Beacon.registered(RegisteredBeacon(try LayoutBeacon(name: "acme", layout: layout, identifiers: ["0x01020304"],
                                                                         data: [], measuredPower: -70)))
        #expect(ours.advertisingData.bytes == [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFF, 0xFF, 0x7A, 0x01, 0x02, 0x03, 0x04, 0xBA])
        var watch = CanaryWatch(beacons: [ours], after: .seconds(5), now: Self.at(0))
        // The same layout, another identifier, from the emitter's own address: not ours.
        let other = ScanReport(address: BluetoothAddress(0x0605_0403_0201), addressType: .randomDevice, rssi: -60,
                               data: [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFF, 0xFF, 0x7A, 0x01, 0x02, 0x03, 0x05, 0xBA])
        #expect(watch.heard(other, now: Self.at(1)).isEmpty && watch.ownReportsHeard == 0)
        #expect(watch.check(now: Self.at(5)) == [.notHeard(beacons: [0], for: .seconds(5))])
        // Its own bytes again, the power byte changed (the layout reads it: another power, the same
        // beacon by its identifiers): heard, and the episode ends.
        let changed = ScanReport(address: BluetoothAddress(0x0605_0403_0201), addressType: .randomDevice, rssi: -60,
                                 data: [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFF, 0xFF, 0x7A, 0x01, 0x02, 0x03, 0x04, 0xC4])
        #expect(watch.heard(changed, now: Self.at(6)) == [.heardAgain(beacon: 0, after: .seconds(6))])
        #expect(watch.ownReportsHeard == 1)
    }

    /// Scan responses, other beacons and other data do not count; a changed beacon has `after`
    /// from its change; an Eddystone-TLM beacon is heard in any TLM frame (its counters move).
    @Test func onlyTheBeaconsOwnAdvertisingCounts() throws {
        let tlm = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 1,
                                                      uptimeDeciseconds: 10)))
        let moved = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 2990, advertisingPDUCount: 50,
                                                        uptimeDeciseconds: 90)))
        var watch = CanaryWatch(beacons: [Self.iBeacon(minor: 1), tlm], after: .seconds(5), now: Self.at(0))
        _ = watch.heard(Self.report(of: Self.iBeacon(minor: 1), scanResponse: true), now: Self.at(1))
        _ = watch.heard(Self.report(of: Self.iBeacon(minor: 9)), now: Self.at(1))
        _ = watch.heard(Self.report(of: moved), now: Self.at(1))
        #expect(watch.states(now: Self.at(2)).map(\.lastHeard) == [nil, .seconds(1)])
        #expect(watch.ownReportsHeard == 1 && watch.reportsHeard == 3)
        // Beacon 1 changes at 4 s: its new identity has until 9 s.
        watch.track([Self.iBeacon(minor: 3), tlm], now: Self.at(4))
        _ = watch.heard(Self.report(of: moved), now: Self.at(5))
        #expect(watch.check(now: Self.at(8.9)).isEmpty)
        #expect(watch.check(now: Self.at(9)) == [.notHeard(beacons: [0], for: .seconds(5))])
    }

    @Test func theDefaultBoundIsAFewIntervalsAtLeastFiveSecondsAndARoundOfTurns() {
        #expect(CanaryWatch.defaultAfter(interval: .milliseconds(100), rotating: false, beacons: 1, rotation: .seconds(1))
                == .seconds(5))
        #expect(CanaryWatch.defaultAfter(interval: .seconds(2), rotating: false, beacons: 1, rotation: .seconds(1))
                == .seconds(20))
        #expect(CanaryWatch.defaultAfter(interval: .milliseconds(100), rotating: true, beacons: 3, rotation: .seconds(1))
                == .seconds(8))
    }
}
