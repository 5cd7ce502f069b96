// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A beacon's own PHY and connectability (`--beacon ...,phy=coded`, `connectable=true`): a rig
/// mixes a phone-visible legacy beacon with a long-range one, each set with its own
/// properties and PHY, byte for byte; refused before anything is sent where the controller or
/// the kernel cannot.
@Suite struct PerBeaconPHYTests {
    static let beacons = OwnParametersTests.beacons

    /// LE Set Extended Advertising Parameters on `set` at 100 ms, no TX power preference, with
    /// `properties` (two bytes, little-endian) and `phy` as primary and secondary PHY.
    static func parameters(set: UInt8, properties: String, phy: UInt8) -> [UInt8] {
        let handle = String(format: "%02X", set)
        let phyByte = String(format: "%02X", phy)
        return hex("36 20 19 \(handle) \(properties)  A0 00 00 A0 00 00 07  00 00 00 00 00 00 00 00 00"
                   + "  7F \(phyByte) 00 \(phyByte) \(handle) 00")
    }

    static func sentParameters(_ transport: ScriptedTransport) -> [[UInt8]] {
        transport.sent.filter { $0.prefix(2) == [0x36, 0x20] }
    }

    static let coded = BeaconParameters(phy: .coded)
    static let connectable = BeaconParameters(connectable: true)

    /// A legacy 1M beacon, a long-range one and a connectable one, on three sets: the first
    /// legacy non-connectable (0x0010) on LE 1M; the second extended, non-connectable and
    /// non-scannable (0x0000) on the Coded PHY; the third legacy connectable (0x0013).
    @Test func eachBeaconsSetHasItsOwnPHYAndProperties() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Self.beacons,
                                                                beaconParameters: [.run, Self.coded, Self.connectable]))
        try advertiser.start(capabilities: AdvertisingCapabilities(supportsExtendedAdvertising: true,
                                                                   numberOfAdvertisingSets: 4, supportsCodedPHY: true))
        #expect(Self.sentParameters(transport) == [Self.parameters(set: 0, properties: "10 00", phy: 0x01),
                                                   Self.parameters(set: 1, properties: "00 00", phy: 0x03),
                                                   Self.parameters(set: 2, properties: "13 00", phy: 0x01)])
        // No scan response on any of them (none asked), and the coded set's data as its own.
        #expect(!transport.sent.contains { $0.prefix(2) == [0x38, 0x20] })
        #expect(transport.sent.contains(hex("37 20 22 01 03 01 1E") + Self.beacons[1].advertisingData.bytes))
    }

    /// A beacon moved to the Coded PHY while on the air: its set disabled, its new parameters,
    /// enabled again; back to the run's PHY the same way.
    @Test func aBeaconMovesToTheCodedPHYWithAGapOnItsSetOnly() throws {
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2))))
        try advertiser.start(capabilities: AdvertisingCapabilities(supportsExtendedAdvertising: true,
                                                                   numberOfAdvertisingSets: 4, supportsCodedPHY: true))
        let before = transport.sent.count
        try advertiser.live.update(2, to: Self.beacons[1], parameters: Self.coded)
        #expect(Array(transport.sent.dropFirst(before)) == [
            hex("39 20 06 00 01 01 00 00 00   // disable set 1"),
            Self.parameters(set: 1, properties: "00 00", phy: 0x03),
            hex("39 20 06 01 01 01 00 00 00   // enable set 1"),
        ])
        #expect(advertiser.live.parameters == [.run, Self.coded])
    }

    /// Where the controller lacks the Coded PHY, or has legacy advertising only, a beacon's own
    /// `phy=coded` is refused before anything is sent, naming the beacon; added later, refused
    /// before its set is made.
    @Test func theCodedPHYIsRefusedBeforeAnythingIsSentWhereThereIsNone() throws {
        for extended in [true, false] {
            let transport = ScriptedTransport(answeringEverything: true)
            let advertiser = Advertiser(controller: HCIController(transport: transport),
                                        options: AdvertisingOptions(beacons: Array(Self.beacons.prefix(2)),
                                                                    beaconParameters: [.run, Self.coded]))
            #expect {
                try advertiser.start(capabilities: capabilities(extended: extended))
            } throws: { error in
                "\(error)".contains("beacon 2's LE Coded PHY")
            }
            #expect(transport.sent.isEmpty, "nothing sent (extended: \(extended))")
        }
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [Self.beacons[0]]))
        try advertiser.start(capabilities: capabilities(extended: true))
        let before = transport.sent.count
        #expect(throws: HostError.self) { try advertiser.live.add(Self.beacons[1], parameters: Self.coded) }
        #expect(transport.sent.count == before && advertiser.running.map(\.beacon).count == 1)
    }

    /// A beacon on the Coded PHY goes in extended PDUs, which carry no scan response here: one
    /// with a scan response is refused, the others keep theirs.
    @Test func aCodedBeaconWithAScanResponseIsRefused() throws {
        let named = Beacon.custom(CustomAdvertisement(data: Self.beacons[0].advertisingData,
                                                      scanResponse: try AdvertisingData(parsing: hex("06 09 6C 6F 62 62 79"))))
        let transport = ScriptedTransport(answeringEverything: true)
        let advertiser = Advertiser(controller: HCIController(transport: transport),
                                    options: AdvertisingOptions(beacons: [named, named], beaconParameters: [.run, Self.coded]))
        #expect {
            try advertiser.start(capabilities: AdvertisingCapabilities(supportsExtendedAdvertising: true,
                                                                       numberOfAdvertisingSets: 4, supportsCodedPHY: true))
        } throws: { error in
            "\(error)".contains("LE Coded PHY")
        }
        #expect(transport.sent.isEmpty)
    }

    /// Through the management API: a connectable beacon's instance has the connectable flag and
    /// the other's not; a beacon's own Coded PHY where the kernel offers none is refused after
    /// the features are read, before any instance is added.
    @Test func theKernelsInstancesTakeEachBeaconsConnectabilityAndPHY() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 4)] + addSteps(instance: 1)
            + [featuresStep(maximum: 4, taken: [1]),
               completes(AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters, .connectable],
                                                          minimumInterval: 160, maximumInterval: 160),
                         returning: [2, 0x00, 31, 31]),
               completes(try AddExtendedAdvertisingData(instance: 2, advertisingData: Self.beacons[1].advertisingData.bytes),
                         returning: [2])])
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon, Self.beacons[1]],
                                                                       beaconParameters: [.run, Self.connectable]))
        #expect(try advertiser.start().handles == [1, 2])
        #expect(kernel.remainingSteps == 0)

        let noCoded = ScriptedKernel([featuresStep(maximum: 4)])
        let refusing = ManagedAdvertiser(client: MgmtClient(transport: noCoded, index: 0),
                                         options: AdvertisingOptions(beacons: [referenceBeacon, Self.beacons[1]],
                                                                     beaconParameters: [.run, Self.coded]))
        #expect {
            try refusing.start()
        } throws: { error in
            "\(error)".contains("beacon 2's LE Coded PHY: the kernel offers no Coded PHY")
        }
        #expect(noCoded.sent.count == 1, "only the features were read")
    }
}
