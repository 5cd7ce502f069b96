// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Testing

/// When Eddystone-EID identifiers change, on the caller's clock (`IdentifierSchedule`).
@Suite struct IdentifierScheduleTests {
    let identity = try! EddystoneEIDIdentity(identityKey: Array(repeating: 7, count: 16), rotationExponent: 3)

    func frame(_ counter: UInt32) -> EddystoneEID {
        EddystoneEID(txPowerAt0m: -20, identity: identity, counter: counter, aes: BoringAES())
    }

    /// The counter advances from its start with the clock; each period's end gives that
    /// period's identifier; one changed by someone else starts anew from its own counter.
    @Test func eachPeriodsEndGivesItsIdentifier() {
        var schedule = IdentifierSchedule<Int>()
        schedule.follow([1: frame(5)], now: 100)
        #expect(schedule.nextDue == 103, "the period of 8 s that holds 5 ends at 8, 3 s on")
        #expect(schedule.takeDue(at: 102.9).isEmpty)
        let due = schedule.takeDue(at: 103.2)
        #expect(due.map(\.key) == [1] && due.first?.frame == frame(8))
        #expect(schedule.nextDue == 111)
        // Someone else put another frame on (an update): it starts from its counter now.
        schedule.follow([1: frame(0)], now: 104)
        #expect(schedule.nextDue == 112)
        schedule.follow([:], now: 105)
        #expect(schedule.nextDue == nil, "a beacon gone is dropped")
    }

    /// A frame that did not go on the air is tried again a second later, for the counter then,
    /// without restarting the counter; the counter's last period has no end.
    @Test func aFailedFrameIsTriedAgainAndTheLastPeriodNeverEnds() {
        var schedule = IdentifierSchedule<Int>()
        schedule.follow([1: frame(0)], now: 0)
        let first = schedule.takeDue(at: 8)
        #expect(first.first?.frame == frame(8))
        schedule.failed(1, now: 8)
        schedule.follow([1: frame(0)], now: 8.5)
        #expect(schedule.nextDue == 9, "tried again a second later, the old frame still on the air")
        #expect(schedule.takeDue(at: 9).first?.frame.source?.counter == 9)
        schedule.follow([1: frame(9)], now: 9.1)
        #expect(schedule.nextDue == 16)

        var last = IdentifierSchedule<Int>()
        last.follow([1: frame(UInt32.max - 3)], now: 0)
        #expect(last.nextDue == nil)
    }
}
