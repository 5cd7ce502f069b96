// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A backend faked: what each slot carries (by minor), every call, and a refusal when armed.
final class FakeSlots: SlotBackend {
    var capacity: Int
    private(set) var onSlot: [UInt8: Int] = [:]
    private(set) var calls: [String] = []
    /// The next call of this kind ("data", "add", "parameters", "remove") is refused.
    var refuse: String?

    init(capacity: Int) { self.capacity = capacity }

    private func check(_ kind: String) throws(HostError) {
        guard refuse == kind else { return }
        refuse = nil
        calls.append("refused \(kind)")
        throw .unsupported("refused")
    }

    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        try check("data")
        let slot = plan.handles[plan.rotating ? 0 : index]
        // The minor is the two bytes before the measured power, the data's last byte.
        onSlot[slot] = Int(data[data.count - 3]) << 8 | Int(data[data.count - 2])
        calls.append("data \(slot) \(onSlot[slot]!)")
    }

    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try check("add")
        guard let slot = (0..<UInt8(capacity)).first(where: { !plan.handles.contains($0) }) else {
            throw .unsupported("full")
        }
        calls.append("add \(slot)")
        return slot
    }

    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        try check("parameters")
        calls.append("parameters \(plan.handles[index])")
    }

    func removeSlot(_ slot: UInt8) throws(HostError) {
        try check("remove")
        onSlot[slot] = nil
        calls.append("remove \(slot)")
    }

    var canShowFrames: Bool { true }
}

func minor(_ value: UInt16) -> Beacon {
    .iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!, major: 101, minor: value))
}

/// The advertising policy (`BeaconSlots`), written once for both ways in, against a scripted
/// backend: the turns, beacons that come and go, and the books a failed change puts back.
@Suite struct BeaconSlotsTests {
    /// Three beacons on one slot take turns: the next goes on at each turn; a change of a
    /// beacon waiting for its turn sends nothing until its turn; removing the beacon on the air
    /// puts the next on at once; with as many slots as beacons the turns end.
    @Test func beaconsTakeTurnsOnOneSlot() throws {
        let backend = FakeSlots(capacity: 1)
        let slots = BeaconSlots(beacons: [minor(1), minor(2), minor(3)])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [0], rotating: true, address: nil, addressIsRandom: false)
        try slots.rotate(on: backend)
        #expect(backend.onSlot == [0: 2])
        try slots.update(2, to: minor(30), on: backend)
        #expect(backend.calls == ["data 0 2"], "beacon 3 waits for its turn")
        try slots.rotate(on: backend)
        #expect(backend.onSlot == [0: 30], "its turn brings the change")
        try slots.remove(2, on: backend)
        #expect(backend.onSlot == [0: 1], "the next beacon goes on at once")
        #expect(slots.beacons == [minor(1), minor(2)] && slots.plan?.rotating == true)
        slots.plan?.handles = [0, 1]
        try slots.remove(1, on: backend)
        #expect(slots.plan?.rotating == false && slots.beacons == [minor(1)])
        #expect(throws: HostError.self) { try slots.remove(0, on: backend) }
        #expect(slots.beacons == [minor(1)], "advertise's last beacon stays")
    }

    /// A scenario's beacons come and go: the slots start with none, each beacon gets a slot
    /// of its own, the last may go, and a beacon that would gain a scan response is refused.
    @Test func beaconsComeAndGoEachOnASlotOfItsOwn() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [], comeAndGo: true)
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        #expect(try slots.add(minor(1), on: backend) == 0)
        #expect(try slots.add(minor(2), on: backend) == 1)
        let full = slots.liveState
        #expect(throws: HostError.self) { try slots.add(minor(3), on: backend) }
        slots.revert(to: full)
        try slots.remove(0, on: backend)
        #expect(slots.plan?.handles == [1] && slots.beacons == [minor(2)])
        // The same data as beacon 2's, with a scan response ("lobby" as a complete local name).
        let withName = Beacon.custom(CustomAdvertisement(data: minor(2).advertisingData,
                                                         scanResponse: try AdvertisingData(parsing: hex("06 09 6C 6F 62 62 79"))))
        #expect(throws: HostError.self) { try slots.update(0, to: withName, on: backend) }
        try slots.remove(0, on: backend)
        #expect(slots.beacons.isEmpty && slots.plan?.handles == [])
        #expect(backend.calls == ["add 0", "add 1", "remove 0", "remove 1"])
    }

    /// A change the backend refuses leaves the books as they were once reverted (what each
    /// advertiser's `atomically` does): a failed remove keeps the beacon on its slot, a failed
    /// add keeps no beacon.
    @Test func aFailedChangeLeavesTheBooksAsTheyWere() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [], comeAndGo: true)
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try slots.add(minor(1), on: backend)
        _ = try slots.add(minor(2), on: backend)
        var before = slots.liveState
        backend.refuse = "remove"
        #expect(throws: HostError.self) { try slots.remove(0, on: backend) }
        slots.revert(to: before)
        #expect(slots.beacons == [minor(1), minor(2)] && slots.plan?.handles == [0, 1])
        try slots.remove(1, on: backend)
        before = slots.liveState
        backend.refuse = "add"
        #expect(throws: HostError.self) { try slots.add(minor(3), on: backend) }
        slots.revert(to: before)
        #expect(slots.beacons == [minor(1)] && slots.plan?.handles == [0] && slots.leftovers.isEmpty)
    }
}
