// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconReports
import BeaconRig
import Testing

/// More advertisers at once than sets: the plan shares the sets in turns, never more on the air
/// at once than sets, everyone on the air in its turn, and the period it says a receiver will
/// hear each at follows from the time each is on the air.
@Suite struct ReplayTurnsTests {
    static func advertiser(_ number: Int, from first: Double, to last: Double, interval: Double = 100) -> CapturedAdvertiser {
        CapturedAdvertiser(address: BluetoothAddress(0xC0_00_00_00_00_00 + UInt64(number)), addressType: .randomDevice,
                           data: [0x02, 0x01, 0x06, 0x03, 0xFF, 0x01, UInt8(number)], scanResponse: nil,
                           kind: [.legacy], first: first, last: last, reports: 10, interval: interval, rssi: -60)
    }

    /// How many are on the air at `time` under the plan.
    static func onAir(_ plan: ReplayPlan, at time: Double) -> Int {
        plan.entries.filter { entry in entry.onAir.contains { $0.lowerBound <= time && time < $0.upperBound } }.count
    }

    /// A capture whose clock steps back (found by the capture-replay fuzz target: its plan
    /// crashed on a span that ended before it began), one with no finite time, and one that
    /// spans more than a day: planned from the earliest report to the latest, left out, and
    /// refused unless --duration cuts it, never a crash.
    @Test func aCaptureClockThatStepsBackOrRunsAwayIsPlannedOrRefused() throws {
        let back = try ReplayPlan([Self.advertiser(1, from: 5, to: 2)])
        #expect(back.entries.count == 1 && back.entries[0].start == 2 && back.entries[0].end > 5, "\(back.entries)")
        let lost = try ReplayPlan([Self.advertiser(1, from: 0, to: 3), Self.advertiser(2, from: .nan, to: 1)])
        #expect(lost.entries.count == 1 && lost.leftOut.first?.contains("no finite time") == true, "\(lost.leftOut)")
        let eons = [Self.advertiser(1, from: 0, to: 1.8e15)]
        #expect { try ReplayPlan(eons) } throws: { "\($0)".contains("more than a day (86400 s") && "\($0)".contains("--duration") }
        #expect(try ReplayPlan(eons, duration: 60).length == 60)
    }

    @Test func sixAdvertisersOnTwoSetsTakeTurns() throws {
        let advertisers = (1...6).map { Self.advertiser($0, from: 0, to: 11.9) }
        let plan = try ReplayPlan(advertisers, sets: 2, turn: 1)
        #expect(plan.length == 12)
        for step in stride(from: 0.05, to: plan.length, by: 0.1) {
            #expect(Self.onAir(plan, at: step) == 2, "two on the air at \(step) s")
        }
        for entry in plan.entries {
            let on = entry.onAir.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
            #expect(abs(on - 4) < 0.01, "\(entry.name): a third of 12 s: \(on) s")
            // Never more than two turns apart: everyone comes round every 3 s.
            for (a, b) in zip(entry.onAir, entry.onAir.dropFirst()) { #expect(b.lowerBound - a.upperBound <= 2.001) }
            // 100 ms + 5 of advDelay, on the air a third of the time: heard every 315 ms on average.
            #expect(entry.achievedInterval.map { abs($0 - 315) < 1 } == true, "\(entry.achievedInterval as Any)")
        }
        // As a scenario: each turn a stop then an advertise, never more than two advertising.
        let scenario = try plan.scenario(device: nil)
        var advertising = Set<String>(), most = 0
        for step in scenario.steps {
            switch step.action {
            case let .advertise(names): advertising.formUnion(names)
            case let .stop(names): advertising.subtract(names ?? Array(advertising))
            default: break
            }
            most = max(most, advertising.count)
        }
        #expect(most == 2 && advertising.isEmpty)
    }

    /// What was sent, said at the end: the time each was on the air by then (whole rounds of a
    /// loop, then the part of the last) and the events that makes at its interval.
    @Test func whatWasSentFollowsThePlan() throws {
        let plan = try ReplayPlan((1...6).map { Self.advertiser($0, from: 0, to: 11.9) }, sets: 2, turn: 1)
        let entry = plan.entries[0]
        #expect(abs(plan.sent(entry, after: 12).seconds - 4) < 0.01)
        #expect(plan.sent(entry, after: 12).events == 38, "4 s at 100 ms + 5 of advDelay")
        #expect(abs(plan.sent(entry, after: 6).seconds - 2) < 0.01)
        #expect(abs(plan.sent(entry, after: 30, loops: true).seconds - 10) < 0.01, "two rounds, then half of one")
        #expect(abs(plan.sent(entry, after: 12.4).seconds - 4) < 0.01, "not looping: the run ends with the plan")
        #expect(plan.sent(entry, after: 0).events == 0)
    }

    /// Enough sets: each on the air for its whole span, heard at its interval; one that comes
    /// later takes a set that fell free.
    @Test func enoughSetsMeansNoTurns() throws {
        let plan = try ReplayPlan([Self.advertiser(1, from: 0, to: 4), Self.advertiser(2, from: 0, to: 2),
                                   Self.advertiser(3, from: 2.5, to: 4)], sets: 2)
        #expect(plan.entries.map(\.onAir.count) == [1, 1, 1])
        #expect(plan.entries.allSatisfy { $0.achievedInterval == 105 })
    }

    /// Each advertiser's strength in the capture becomes its TX power: the strongest 0 dBm, the
    /// others as many dB below as their RSSI was, at most 30; none without an RSSI or when not asked.
    @Test func theCapturesStrengthsBecomeTXPowers() throws {
        var advertisers = [-48, -60, -95, 0].enumerated().map { index, rssi in
            var advertiser = Self.advertiser(index + 1, from: 0, to: 2)
            advertiser.rssi = rssi == 0 ? nil : rssi
            return advertiser
        }
        let plan = try ReplayPlan(advertisers, strength: true)
        #expect(plan.entries.map(\.txPower) == [0, -12, -30, nil])
        #expect(ReplayPlan.fields(of: plan.entries[1])["tx-power"] == "-12")
        #expect(try ReplayPlan(advertisers).entries.allSatisfy { $0.txPower == nil })
        advertisers.removeAll { $0.rssi != nil }
        #expect(try ReplayPlan(advertisers, strength: true).entries.allSatisfy { $0.txPower == nil })
    }

    /// An advertiser heard in extended PDUs goes out in them, whatever its length; a legacy one
    /// in legacy PDUs unless its data needs more than 31 bytes.
    @Test func extendedPDUsAsCaptured() throws {
        var extended = Self.advertiser(1, from: 0, to: 1)
        extended.kind = []
        let plan = try ReplayPlan([extended, Self.advertiser(2, from: 0, to: 1)])
        #expect(plan.entries.map(\.pduType) == ["ADV_EXT_IND", "ADV_NONCONN_IND"])
        #expect(plan.entries.map { ReplayPlan.fields(of: $0)["pdu"] } == ["extended", "legacy"])
    }

    /// What this host cannot send is left out and said, the rest replayed: data that is no list
    /// of AD structures, data over 251 bytes; a scan response that does not parse is dropped.
    @Test func whatCannotBeSentIsLeftOutAndSaid() throws {
        var broken = Self.advertiser(1, from: 0, to: 1)
        broken.data = [0x05, 0xFF, 0x01]
        var long = Self.advertiser(2, from: 0, to: 1)
        long.data = [0xFE, 0xFF] + [UInt8](repeating: 0, count: 253)
        var response = Self.advertiser(3, from: 0, to: 1)
        response.scanResponse = [0x0B, 0x09, 0x41]
        let plan = try ReplayPlan([broken, long, response, Self.advertiser(4, from: 0, to: 1)])
        #expect(plan.entries.map(\.name) == ["a1", "a2"] && plan.entries[0].advertiser.scanResponse == nil)
        #expect(plan.leftOut.count == 3 && plan.leftOut[0].contains("no list of AD structures") && plan.leftOut[0].hasSuffix("left out")
                && plan.leftOut[1].contains("255 bytes") && plan.leftOut[2].hasSuffix("sent without it"), "\(plan.leftOut)")
        #expect { try ReplayPlan([broken]) } throws: { "\($0)".contains("no advertiser of the capture can be sent") }
    }

    /// A capture hours long in short turns is refused before anything is planned per turn.
    @Test func tooManyTurnsAreRefused() {
        let advertisers = (1...3).map { Self.advertiser($0, from: 0, to: 200_000) }
        #expect { try ReplayPlan(advertisers, sets: 1, turn: 1) } throws: { "\($0)".contains("--duration") }
    }
}
