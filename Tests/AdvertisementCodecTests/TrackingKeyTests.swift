// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
import Testing

/// The identifiers a tracker hashes per report (`Beacon.trackingKey`): equal for the same
/// beacon, different when any identifier or the format differs, none for formats that pack none.
@Suite struct TrackingKeyTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    func uid(_ namespace: [UInt8], _ instance: [UInt8]) throws -> Beacon {
        .eddystone(.uid(try EddystoneUID(txPowerAt0m: -20, namespace: namespace, instance: instance)))
    }

    @Test func theSameBeaconHasTheSameKeyAndAnyOtherAnother() throws {
        let one = Beacon.iBeacon(IBeacon(proximityUUID: uuid, major: 1, minor: 2, measuredPower: -59))
        // The measured power is no identifier: another power, the same beacon.
        #expect(one.trackingKey == Beacon.iBeacon(IBeacon(proximityUUID: uuid, major: 1, minor: 2, measuredPower: -70)).trackingKey)
        let others: [Beacon] = [
            .iBeacon(IBeacon(proximityUUID: uuid, major: 1, minor: 3)),
            .iBeacon(IBeacon(proximityUUID: uuid, major: 2, minor: 2)),
            .iBeacon(IBeacon(proximityUUID: UUID(), major: 1, minor: 2)),
            .altBeacon(AltBeacon(id1: uuid, id2: 1, id3: 2)),
            try uid(Array(0..<10), Array(10..<16)),
            try uid(Array(0..<10), Array(10..<15) + [99]),
            try uid(Array(1..<11), Array(10..<16)),
            .eddystone(.url(try EddystoneURL(txPowerAt0m: -20, url: "https://example.com"))),
            .eddystone(.url(try EddystoneURL(txPowerAt0m: -20, url: "https://example.org"))),
        ]
        let keys = [one.trackingKey] + others.map(\.trackingKey)
        #expect(keys.allSatisfy { $0 != nil })
        #expect(Set(keys).count == keys.count, "every beacon its own key: \(keys)")
        #expect(try uid(Array(0..<10), Array(10..<16)).trackingKey == uid(Array(0..<10), Array(10..<16)).trackingKey)
        #expect(one.trackingKey?.description.hasPrefix("ibeacon ") == true)
    }

    @Test func formatsWithoutPackedIdentifiersHaveNone() throws {
        let telemetry = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 1, uptimeDeciseconds: 1)))
        #expect(telemetry.trackingKey == nil)
        #expect(Beacon.eddystone(.eid(try EddystoneEID(txPowerAt0m: 0, eid: Array(repeating: 1, count: 8)))).trackingKey == nil)
    }
}
