// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconReports
@testable import BeaconRig
import BeaconTracking
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

    /// The steps of `scenario` that change something, as text, and the waits between them.
    static func changes(_ scenario: Scenario) -> [String] {
        scenario.steps.compactMap { step in
            switch step.action {
            case let .advertise(names): "+" + names.joined(separator: ",")
            case let .stop(names): "-" + (names ?? []).joined(separator: ",")
            case let .wait(seconds, _) where seconds > 0: "wait \(seconds)"
            default: nil
            }
        }
    }

    /// Those coming within a few milliseconds of each other (as a capture has them) come as
    /// one change at the first one's time, and those going as one before those coming; a gap
    /// longer than `ReplayPlan.together` keeps them apart.
    @Test func thoseDueTogetherChangeAsOne() throws {
        let advertisers = [Self.advertiser(1, from: 0, to: 2), Self.advertiser(2, from: 0.01, to: 2),
                           Self.advertiser(3, from: 0.02, to: 2), Self.advertiser(4, from: 1.5, to: 4)]
        let plan = try ReplayPlan(advertisers)
        let names = plan.entries.map(\.name)
        let changes = Self.changes(try plan.scenario(device: nil))
        #expect(changes == ["+\(names[0]),\(names[1]),\(names[2])", "wait 1.5", "+\(names[3])", "wait 0.6",
                    "-\(names[0]),\(names[1]),\(names[2])", "wait 2.0", "-\(names[3])"],
                "\(changes)")
        // 60 ms apart: two changes.
        let apart = try ReplayPlan([Self.advertiser(1, from: 0, to: 2), Self.advertiser(2, from: 0.06, to: 2)])
        let apartChanges = Self.changes(try apart.scenario(device: nil))
        #expect(apartChanges.prefix(3) == ["+\(apart.entries[0].name)", "wait 0.06", "+\(apart.entries[1].name)"], "\(apartChanges)")
    }

    /// A tail of the capture shorter than half a turn belongs to the last turn: no turn of a
    /// few milliseconds that would change every set at the end.
    @Test func aShortTailIsNoTurnOfItsOwn() throws {
        let plan = try ReplayPlan((1...4).map { Self.advertiser($0, from: 0, to: 3.94) }, sets: 2, turn: 1)
        #expect(plan.length == 4.04 || abs(plan.length - 4.04) < 0.001, "\(plan.length)")
        for entry in plan.entries {
            for span in entry.onAir { #expect(span.upperBound - span.lowerBound >= 0.999, "\(entry.name): \(entry.onAir)") }
        }
    }

    /// Before it starts, the plan says what its busiest instant asks of the controller, and
    /// whether its changes fit between its instants.
    @Test func thePaceIsSaidBeforeItStarts() throws {
        let crowd = try ReplayPlan((1...40).map { Self.advertiser($0, from: 0, to: 19.9) }, sets: 16, turn: 1)
        let pace = try #require(ReplayPace(of: try crowd.scenario(device: nil)))
        // 16 going (one disable), 16 coming (3 commands each, one enable).
        #expect(pace.changes == 32 && pace.commands == 50 && pace.crowded == 0 && pace.keepsUp, "\(pace)")
        #expect(pace.line(json: true).contains("\"keepsUp\":true"))
        #expect(pace.warning == nil)
        let tight = try ReplayPlan((1...40).map { Self.advertiser($0, from: 0, to: 19.9) }, sets: 16, turn: 0.1)
        let fast = try #require(ReplayPace(of: try tight.scenario(device: nil)))
        #expect(!fast.keepsUp && fast.crowded > 100, "\(fast)")
        #expect(fast.warning?.contains("cannot keep to the capture's clock") == true)
        // Nothing that changes: no pace.
        #expect(ReplayPace(of: Scenario(device: nil, beacons: [], steps: [])) == nil)
    }

    /// On a controller slower than the plan's estimate (8 ms a command where the estimate
    /// starts at 5: a turn of 16 going and 16 coming is 0.4 s of commands), each instant starts
    /// early by half what its commands have been taking, so its changes are made around their
    /// deadline (within 0.3 s either way, the first while the pace is learned; one started on
    /// time would be 0.4 s late each turn), and the replay still ends on the capture's clock.
    @Test func changesAreMadeAroundTheirDeadline() throws {
        let crowd = try ReplayPlan((1...40).map { Self.advertiser($0, from: 0, to: 19.9) }, sets: 16, turn: 1)
        let air = SimulatedAir()
        air.commandSeconds = 0.008
        let outcome = ScenarioRunner(scenario: try crowd.scenario(device: nil), stage: air, observer: air,
                                     makeBeacon: testBeacon, report: { _ in }).run()
        let lateness = outcome.lateness
        #expect(outcome.passed && lateness.steps >= 40, "\(outcome)")
        #expect(lateness.largest < 0.3 && lateness.largestEarliness < 0.3, "\(lateness)")
        #expect(lateness.largestEarliness > 0.1 && lateness.mean < 0.25, "centred, not shifted: \(lateness)")
        #expect(abs(outcome.duration - crowd.length) < 0.5, "\(outcome.duration) for \(crowd.length)")
    }

    /// The lead learns the controller's pace from the changes made: half of what the commands
    /// up to the next wait took, never more than a quarter of a second.
    @Test func theLeadLearnsThePace() {
        var lead = ChangeLead()
        let coming = Scenario.Step(.advertise((1...16).map { "a\($0)" })), going = Scenario.Step(.stop(["a1"]))
        #expect(abs(lead.lead(before: [going, coming, Scenario.Step(.wait(seconds: 1)), coming]) - 0.005 * 50 / 2) < 1e-9)
        for _ in 1...20 { lead.note(coming.action, took: 0.49) }
        #expect(abs(lead.secondsPerCommand - 0.01) < 0.0005, "\(lead.secondsPerCommand)")
        #expect(lead.lead(before: [going, coming, coming]) == ChangeLead.largest)
        #expect(lead.lead(before: [Scenario.Step(.wait(seconds: 1)), coming]) == 0)
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

    /// Report times every `period` s from `from` to `to`.
    static func times(every period: Double, from: Double, to: Double) -> [Double] {
        Array(stride(from: from, through: to, by: period))
    }

    /// A survey of one advertiser heard at `times`, with `gap`.
    static func surveyed(_ times: [Double], gap: Double = Presence.defaultGap) -> CapturedAdvertiser? {
        var survey = CaptureSurvey(gap: gap)
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0xFF, 0x01, 0x02]
        let report = AdvertisingReportFields(address: BluetoothAddress(0xC1_22_33_44_55_66), addressType: .randomDevice, rssi: -60,
                                             reportedTxPower: nil, data: data[...], kind: [.legacy])
        for time in times { survey.add(report, data: data[...], at: time) }
        return survey.advertisers.first
    }

    /// An advertiser that walks out and back: its silence of 8 s is a going (longer than 2 s
    /// and 5 of its 300 ms intervals); a silence its own interval explains is not, nor one
    /// shorter than --gap; a capture's clock stepping back lands in its place.
    @Test func aSilenceLongerThanTheGapIsAGoing() throws {
        let walker = try #require(Self.surveyed(Self.times(every: 0.3, from: 0, to: 7.9) + Self.times(every: 0.3, from: 15.9, to: 23.9)))
        #expect(walker.spans.count == 2 && abs(walker.spans[0].upperBound - 7.8) < 0.01 && walker.spans[1].lowerBound == 15.9,
                "\(walker.spans)")
        // 1.8 s of silence: under the 2 s default, over a --gap of 1 (and 5 x 300 ms).
        let pause = Self.times(every: 0.3, from: 0, to: 3) + Self.times(every: 0.3, from: 4.8, to: 8)
        #expect(try #require(Self.surveyed(pause)).spans.count == 1)
        #expect(try #require(Self.surveyed(pause, gap: 1)).spans.count == 2)
        // A 1 s beacon missing a second event now and then (2 s silences), with --gap 1: its
        // own 5 intervals (5 s) explain them.
        let sparse = Self.times(every: 1, from: 0, to: 10) + Self.times(every: 1, from: 12, to: 20)
        #expect(try #require(Self.surveyed(sparse, gap: 1)).spans.count == 1)
        // Out of order: a report of the first stay read after the second.
        let shuffled = try #require(Self.surveyed(Self.times(every: 0.3, from: 10, to: 12) + [0, 0.3, 0.6]))
        #expect(shuffled.spans.map(\.lowerBound) == [-10, 0], "from the first report read: \(shuffled.spans)")
        // More stays than kept: the last silences are presence, counted.
        var many: [Double] = []
        for stay in 0..<(CaptureSurvey.mostSpans + 5) { many += [Double(stay) * 10, Double(stay) * 10 + 0.1] }
        let busy = try #require(Self.surveyed(many))
        #expect(busy.spans.count == CaptureSurvey.mostSpans && busy.silencesMerged == 5)
        #expect(try ReplayPlan([busy]).leftOut.contains { $0.contains("its last 5 silences replayed as presence") })
    }

    /// The plan follows the stays: two spans, silent between, each to its last event's period;
    /// taking turns shares the sets among those there now, none in its silence.
    @Test func aPlanFollowsTheStays() throws {
        var walker = Self.advertiser(1, from: 0, to: 23.9, interval: 300)
        walker.spans = [0...7.9, 15.9...23.9]
        let plan = try ReplayPlan([walker], speed: 2)
        let entry = try #require(plan.entries.first)
        #expect(entry.spans.count == 2 && abs(entry.spans[0].upperBound - (3.95 + 0.3)) < 0.001 && entry.spans[1].lowerBound == 7.95,
                "\(entry.spans)")
        #expect(entry.onAir == entry.spans)
        let scenario = try plan.scenario(device: nil)
        let changes = scenario.steps.compactMap { step -> String? in
            switch step.action {
            case .advertise: "advertise"
            case .stop: "stop"
            default: nil
            }
        }
        #expect(changes == ["advertise", "stop", "advertise", "stop"], "\(changes)")
        // Every wait on the capture's clock.
        #expect(scenario.steps.allSatisfy { step in
            if case let .wait(_, paced) = step.action { paced } else { true }
        })
        // Three on one set: the walker's silence leaves the set to the others.
        var others = [Self.advertiser(2, from: 0, to: 23.9), Self.advertiser(3, from: 0, to: 23.9)]
        others[0].spans = [0...23.9]
        others[1].spans = [0...23.9]
        let turns = try ReplayPlan([walker] + others, sets: 2, turn: 1)
        #expect(turns.entries[0].onAir.allSatisfy { $0.upperBound <= 8.3 || $0.lowerBound >= 15.9 }, "\(turns.entries[0].onAir)")
        for time in stride(from: 9.05, to: 14.9, by: 0.5) {
            #expect(Self.onAir(turns, at: time) == 2, "the two others on the air at \(time) s while the walker is away: \(turns.entries.map(\.onAir))")
        }
        // While all three are there, each gets its share: two turns of every three.
        for entry in turns.entries {
            let on = entry.onAir.reduce(0) { $0 + max(0, min($1.upperBound, 8) - $1.lowerBound) }
            #expect(abs(on - 8 * 2 / 3) < 1.01, "\(entry.name): on the air \(on) s of the first 8: \(entry.onAir)")
        }
        // With --duration, the stays cut.
        let cut = try ReplayPlan([walker], duration: 10)
        #expect(cut.entries[0].spans.count == 1 && abs(cut.entries[0].end - 8.2) < 0.001, "\(cut.entries[0].spans)")
        let cutLater = try ReplayPlan([walker], duration: 20)
        #expect(cutLater.entries[0].spans.count == 2 && cutLater.entries[0].spans[1] == 15.9...20, "\(cutLater.entries[0].spans)")
    }

    /// A scannable advertiser a passive scan heard (no scan response) goes out scannable with
    /// an empty scan response over raw HCI; through the management API (which makes an
    /// instance without scan response data non-scannable) the plan says what goes instead.
    @Test func aScannableAdvertiserWithoutAScanResponseStaysScannable() throws {
        var scannable = Self.advertiser(1, from: 0, to: 2)
        scannable.kind = [.legacy, .scannable]
        let raw = try ReplayPlan([scannable])
        #expect(raw.entries[0].pduType == "ADV_SCAN_IND" && raw.entries[0].capturedPDUType == "ADV_SCAN_IND")
        #expect(ReplayPlan.fields(of: raw.entries[0])["scan-response"] == "")
        let scenario = try raw.scenario(device: nil)
        #expect(scenario.beacons[0].beacon.scanResponseData == AdvertisingData(), "scannable, its scan response empty")
        let managed = try ReplayPlan([scannable], ownAddresses: false, scannableWithoutResponse: false)
        #expect(managed.entries[0].pduType == "ADV_NONCONN_IND" && managed.entries[0].capturedPDUType == "ADV_SCAN_IND")
        #expect(managed.leftOut.contains { $0.contains("captured as ADV_SCAN_IND, sent as ADV_NONCONN_IND") }, "\(managed.leftOut)")
        #expect(ReplayPlan.fields(of: managed.entries[0])["scan-response"] == nil)
        // An empty scan response captured: the same, never an error about an option.
        scannable.scanResponse = []
        let empty = try ReplayPlan([scannable])
        #expect(empty.entries[0].pduType == "ADV_SCAN_IND")
        #expect(try empty.scenario(device: nil).beacons[0].beacon.scanResponseData == AdvertisingData())
    }

    /// Looping, an advertiser there at the capture's end and its start stays on the air across
    /// the wrap (it goes only where the capture has it go); one away across the wrap goes and
    /// comes back each round.
    @Test func loopingCarriesAnAdvertiserAcrossTheWrap() throws {
        var walker = Self.advertiser(1, from: 0, to: 8.9, interval: 300)
        walker.spans = [0...2.9, 5.9...8.9]
        var visitor = Self.advertiser(2, from: 3, to: 5, interval: 300)
        visitor.spans = [3...5]
        let plan = try ReplayPlan([walker, visitor])
        let scenario = try plan.scenario(device: nil, rounds: 3)
        guard scenario.steps.count == 3, case .advertise(["a1"]) = scenario.steps[0].action,
              case let .repeatSteps(3, round) = scenario.steps[1].action, case .stop(["a1"]) = scenario.steps[2].action else {
            Issue.record("\(scenario.steps.map(\.action))")
            return
        }
        let changes = round.compactMap { step -> String? in
            switch step.action {
            case let .advertise(names): "+" + names.joined()
            case let .stop(names): "-" + (names ?? []).joined()
            default: nil
            }
        }
        #expect(changes == ["+a2", "-a1", "-a2", "+a1"], "a2 comes at 3 s, a1 goes at 3.2 s, a2 goes at 5.3 s, a1 comes at 5.9 s: \(changes)")
        // One round: as before, every change in the round.
        let once = try plan.scenario(device: nil)
        #expect(once.steps.filter { if case .advertise = $0.action { true } else { false } }.count == 3)
    }
}
