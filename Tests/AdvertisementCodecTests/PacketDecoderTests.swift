// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

@Suite struct PacketDecoderTests {
    let iBeacon = Beacon.iBeacon(IBeacon(proximityUUID: appleExampleUUID, major: 101, minor: 2))

    @Test func rawAdvertisingData() throws {
        let packet = try PacketDecoder.decode(appleExampleAdvertisingData)
        #expect(packet.kind == .advertisingData)
        #expect(packet.sightings == [BeaconSighting(beacon: iBeacon)])
    }

    @Test func manufacturerDataAlone() throws {
        let packet = try PacketDecoder.decode(Array(appleExampleAdvertisingData[5...]))
        #expect(packet.kind == .manufacturerData)
        #expect(packet.sightings.map(\.beacon) == [iBeacon])
    }

    @Test func hciEventAndH4EventCarryAddressAndRSSI() throws {
        for (bytes, kind) in [(threeReportEvent, PacketKind.hciEvent), ([0x04] + threeReportEvent, .h4Event)] {
            let packet = try PacketDecoder.decode(bytes)
            #expect(packet.kind == kind)
            #expect(packet.sightings.count == 2)
            #expect(packet.sightings.map(\.address?.description) == ["DA:4C:10:DE:17:01", "C0:00:00:00:00:02"])
            #expect(packet.sightings.map(\.rssi) == [-60, -80])
            #expect(packet.sightings.first?.beacon == iBeacon)
        }
    }

    @Test func commandsThatSetAdvertisingData() throws {
        let legacy = try LESetAdvertisingData(data: appleExampleAdvertisingData).packet
        let extended = try LESetExtendedAdvertisingData(data: appleExampleAdvertisingData).packet
        #expect(try PacketDecoder.decode(legacy.h4Bytes).kind == .h4Command)
        #expect(try PacketDecoder.decode(legacy.bytes).kind == .hciCommand)
        #expect(try PacketDecoder.decode(extended.h4Bytes).sightings.map(\.beacon) == [iBeacon])
        #expect(try PacketDecoder.decode(extended.bytes).sightings.map(\.beacon) == [iBeacon])
    }

    @Test func noBeaconPointsAtTheAdvertisingData() throws {
        let flagsOnly = try PacketDecoder.decode(hex("02 01 06"))
        #expect(flagsOnly.sightings.isEmpty)
        let error = codecError { try flagsOnly.requireBeacons() }
        #expect(error?.offset == 0)
        #expect(error?.reason == .unrecognized(expected: "a beacon (iBeacon, AltBeacon or Eddystone)"))
        let reset = try PacketDecoder.decode(hex("04 0E 04 01 03 0C 00"))
        #expect(reset.kind == .h4Event)
        #expect(codecError { try reset.requireBeacons() } != nil)
    }

    @Test func errorsInsideReportsGiveOffsetsInTheWholeInput() {
        // The second report's manufacturer data is cut by one byte inside an otherwise valid event.
        var bytes = [0x04] + threeReportEvent
        // Report 2 data starts at: H4 type 1 + header 4 + report 1 (9 + 30 + 1) + report 2 header 9.
        let report2Data = 1 + 4 + 40 + 9
        bytes[report2Data + 3] = 0x1C // length 0x1C: 27 data bytes claimed, 26 remain
        let error = codecError { _ = try PacketDecoder.decode(bytes) }
        #expect(error?.structure == "advertising data")
        #expect(error?.offset == report2Data + 5)
    }

    @Test func truncatedBeaconIsAnErrorNotSilence() {
        let error = codecError { _ = try PacketDecoder.decode(Array(appleExampleAdvertisingData.dropLast())) }
        #expect(error?.offset == 5)
    }
}
