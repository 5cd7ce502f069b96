// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// Beacons that come and go together (a replay's instant): one disable for those going, their
/// sets kept idle a moment and readied again for those coming (only what differs sent), one
/// enable for those coming; all or none. The whole conversation, command by command.
@Suite struct BatchedChangeTests {
    static func beacon(minor: UInt16) -> (beacon: Beacon, data: [UInt8]) {
        let beacon = Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                            major: 101, minor: minor))
        return (beacon, hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D20065") + [UInt8(minor >> 8), UInt8(minor & 0xFF)]
                + hex("C5"))
    }

    /// Sets 0 and 1 (each on or off): one LE Set Extended Advertising Enable for both.
    static func both(enable: Bool, status: UInt8 = 0) -> ScriptedTransport.Step {
        .init(command: hex("39 20 0A") + [enable ? 1 : 0] + hex("02 00 00 00 00 01 00 00 00"),
              answers: [complete(0x2039, status: status)])
    }

    static func data(set: UInt8, _ data: [UInt8]) -> ScriptedTransport.Step {
        .init(command: hex("37 20 22") + [set] + hex("03 01 1E") + data, answers: [complete(0x2037)])
    }

    /// Set `set`'s parameters and data, not yet enabled.
    static func readying(set: UInt8, _ data: [UInt8]) -> [ScriptedTransport.Step] {
        Array(ComeAndGoTests.adding(set: set, data: data).prefix(2))
    }

    @Test func aCrowdComesAndGoesByOneEnableAndOneDisable() throws {
        let (one, two, three, four) = (Self.beacon(minor: 1), Self.beacon(minor: 2), Self.beacon(minor: 3), Self.beacon(minor: 4))
        let transport = ScriptedTransport(ComeAndGoTests.preparing
            + Self.readying(set: 0, one.data) + Self.readying(set: 1, two.data) + [Self.both(enable: true)]
            + [Self.both(enable: false)]
            // The idle sets have the parameters the new beacons need: only their data is sent.
            + [Self.data(set: 0, three.data), Self.data(set: 1, four.data), Self.both(enable: true)])
        let (advertiser, run) = try ComeAndGoTests.core(transport)
        let first = try run.live.add([(one.beacon, .run), (two.beacon, .run)])
        #expect(advertiser.running.map(\.beacon) == [one.beacon, two.beacon])
        try run.live.remove(first)
        #expect(advertiser.running.map(\.beacon).isEmpty)
        _ = try run.live.add([(three.beacon, .run), (four.beacon, .run)])
        #expect(advertiser.running.map(\.beacon) == [three.beacon, four.beacon])
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
    }

    @Test func anIdleSetNoBeaconTakesIsRemovedAfterAMoment() throws {
        let (one, two) = (Self.beacon(minor: 1), Self.beacon(minor: 2))
        let transport = ScriptedTransport(ComeAndGoTests.preparing
            + Self.readying(set: 0, one.data) + Self.readying(set: 1, two.data) + [Self.both(enable: true), Self.both(enable: false)]
            + [.init(command: hex("3C 20 01 00"), answers: [complete(0x203C)]),
               .init(command: hex("3C 20 01 01"), answers: [complete(0x203C)])])
        let (advertiser, run) = try ComeAndGoTests.core(transport)
        try run.live.remove(try run.live.add([(one.beacon, .run), (two.beacon, .run)]))
        // Within the moment, nothing is removed.
        advertiser.releaseIdleSets(now: .now)
        #expect(transport.remainingSteps == 2)
        advertiser.releaseIdleSets(now: .now + Advertiser.idleHold)
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
        #expect(advertiser.leftovers.isEmpty)
    }

    /// An idle set readied for another kind of PDU (scannable now) is removed and made again.
    @Test func anIdleSetOfAnotherKindIsMadeAgain() throws {
        let (one, two) = (Self.beacon(minor: 1), Self.beacon(minor: 2))
        let plain = Self.beacon(minor: 3)
        let response = try AdvertisingData(parsing: hex("03 09 41 42"))
        let scannableBeacon = Beacon.custom(CustomAdvertisement(data: plain.beacon.advertisingData, scanResponse: response))
        var made = ComeAndGoTests.adding(set: 0, data: plain.data)
        // Legacy scannable (0x0012), then its scan response.
        made[0] = .init(command: hex("36 20 19 00 12") + made[0].command!.dropFirst(5), answers: made[0].answers)
        made.insert(.init(command: hex("38 20 08 00 03 01 04 03 09 41 42"), answers: [complete(0x2038)]), at: 2)
        let transport = ScriptedTransport(ComeAndGoTests.preparing
            + Self.readying(set: 0, one.data) + Self.readying(set: 1, two.data) + [Self.both(enable: true), Self.both(enable: false)]
            + [.init(command: hex("3C 20 01 00"), answers: [complete(0x203C)])] + made)
        let (advertiser, run) = try ComeAndGoTests.core(transport)
        try run.live.remove(try run.live.add([(one.beacon, .run), (two.beacon, .run)]))
        _ = try run.live.add([(scannableBeacon, .run)])
        #expect(transport.remainingSteps == 0, "\(transport.sent.map { HexText.format($0, separator: " ") })")
        #expect(advertiser.running.map(\.beacon) == [scannableBeacon])
    }

    /// All or none: an enable the controller refuses leaves no beacon in the books, and the
    /// sets it readied are leftovers (off the air), removed at the stop.
    @Test func aRefusedEnableAddsNone() throws {
        let (one, two) = (Self.beacon(minor: 1), Self.beacon(minor: 2))
        let transport = ScriptedTransport(ComeAndGoTests.preparing
            + Self.readying(set: 0, one.data) + Self.readying(set: 1, two.data) + [Self.both(enable: true, status: 0x07)])
        let (advertiser, run) = try ComeAndGoTests.core(transport)
        #expect(throws: HostError.self) { _ = try run.live.add([(one.beacon, .run), (two.beacon, .run)]) }
        #expect(advertiser.running.map(\.beacon).isEmpty)
        #expect(advertiser.leftovers == [0, 1])
        #expect(transport.remainingSteps == 0)
    }
}
