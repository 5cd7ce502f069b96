// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// The rotation of beacons' own addresses on the emitter's loop: due when the first rotating
/// beacon's period has passed, each renewed on its own period, a refusal said and tried again
/// a period later, a beacon that stops rotating (or goes) left alone.
@Suite struct AddressRotationTests {
    final class Live: LiveAdvertising {
        var beacons: [Beacon]
        var parameters: [BeaconParameters]
        var renewed: [Int] = []
        var refuseNext = false
        init(_ parameters: [BeaconParameters]) {
            self.parameters = parameters
            beacons = parameters.map { _ in referenceBeacon }
        }
        func update(_ index: Int, to beacon: Beacon) throws(HostError) {}
        func add(_ beacon: Beacon) throws(HostError) -> Int { 0 }
        func remove(_ index: Int) throws(HostError) {
            beacons.remove(at: index)
            parameters.remove(at: index)
            ids.remove(at: index)
        }
        func show(_ index: Int, _ frame: Beacon) throws(HostError) {}
        lazy var ids: [BeaconID] = beacons.indices.map { BeaconID($0 + 1) }
        func renewAddress(_ index: Int) throws(HostError) -> BluetoothAddress {
            if refuseNext {
                refuseNext = false
                throw .controllerRefused(opcode: .leSetAdvertisingSetRandomAddress, status: .commandDisallowed, context: nil)
            }
            renewed.append(index)
            return BluetoothAddress(0x1000 + UInt64(index))
        }
    }

    @Test func eachRotatingBeaconIsRenewedOnItsPeriod() throws {
        let live = Live([.run, BeaconParameters(address: .generatedNonResolvable, addressRotation: 0.05),
                         BeaconParameters(address: .generatedStaticRandom, addressRotation: 60)])
        var said: [String] = []
        let started = ContinuousClock.now
        let rotation = AddressRotation(session: live, report: { said.append($0) })
        let first = try #require(rotation.due)
        let asked = ContinuousClock.now
        // Bounded by the clock read before and after, not by a window: under emulation on a
        // busy runner, creating the rotation can itself take longer than a few ms.
        #expect(first >= started + .milliseconds(50) && first <= asked + .milliseconds(50), "the first rotating beacon's period")
        rotation.serve()
        #expect(live.renewed.isEmpty, "nothing is due yet")
        // The loop's part: serve when due, until beacon 2 had three new addresses (bounded).
        while live.renewed.filter({ $0 == 1 }).count < 3 && ContinuousClock.now < started + .seconds(5) {
            if let due = rotation.due, due <= .now { rotation.serve() }
            Thread.sleep(forTimeInterval: 0.005)
        }
        #expect(live.renewed == [1, 1, 1], "beacon 2 every 50 ms; beacon 3 (60 s) and beacon 1 (none) not: \(live.renewed)")
        #expect(started.duration(to: .now) >= .milliseconds(150), "each a period after the one before")
        #expect(said.contains("beacon 2: new address 00:00:00:00:10:01"), "\(said)")

        // A refusal is said; the beacon's rotation stopped (an update): no more renewals.
        live.refuseNext = true
        Thread.sleep(forTimeInterval: 0.06)
        rotation.serve()
        #expect(said.last?.hasPrefix("beacon 2: no new address: controller refused") == true, "\(said)")
        live.parameters[1] = .run
        live.parameters[2] = .run
        #expect(rotation.due == nil)
    }

    /// A rotation goes with its beacon, not its place: beacon 3 rotates, beacon 1 goes (beacon 3
    /// is now at index 1), and beacon 3 is the one renewed, by its id.
    @Test func aRotationFollowsItsBeaconWhenOneBeforeItGoes() throws {
        let live = Live([.run, .run, BeaconParameters(address: .generatedNonResolvable, addressRotation: 0.02)])
        var said: [String] = []
        let rotation = AddressRotation(session: live, report: { said.append($0) })
        #expect(rotation.due != nil)
        try live.remove(0)
        let started = ContinuousClock.now
        while live.renewed.isEmpty && ContinuousClock.now < started + .seconds(5) {
            if let due = rotation.due, due <= .now { rotation.serve() }
            Thread.sleep(forTimeInterval: 0.005)
        }
        #expect(live.renewed.first == 1, "index 1 is beacon 3 now: \(live.renewed)")
        #expect(said.first?.hasPrefix("beacon 3: new address") == true, "\(said)")
    }
}

/// The one renewal schedule `advertise` and a scenario's stage keep (`RenewalSchedule`), on a
/// clock of the test's: due a period after the start, then a period after each time it was
/// due (at `now` when far behind); a beacon that stops rotating is dropped.
@Suite struct RenewalScheduleTests {
    @Test func eachIsDueAPeriodAfterTheLast() {
        var schedule = RenewalSchedule<String>()
        #expect(schedule.nextDue == nil)
        schedule.follow(["a": 2, "b": 5], now: 0)
        #expect(schedule.nextDue == 2)
        #expect(schedule.takeDue(at: 1.9, periods: ["a": 2, "b": 5]).isEmpty)
        #expect(schedule.takeDue(at: 2.1, periods: ["a": 2, "b": 5]) == ["a"])
        #expect(schedule.nextDue == 4, "a period after it was due, not after it was served")
        #expect(schedule.takeDue(at: 20, periods: ["a": 2, "b": 5]) == ["a", "b"], "in order")
        #expect(schedule.nextDue == 20, "far behind: at once, not a burst of the missed ones")
        schedule.keep("a", period: 2, now: 21)
        #expect(schedule.nextDue == 20, "kept: its time stays")
        schedule.start("a", period: 3, now: 21)
        schedule.follow(["a": 3], now: 21)
        #expect(schedule.nextDue == 24, "b no longer rotates: dropped; a started anew")
        #expect(schedule.takeDue(at: 30, periods: [:]).isEmpty && schedule.nextDue == nil, "without a period: dropped")
    }
}
