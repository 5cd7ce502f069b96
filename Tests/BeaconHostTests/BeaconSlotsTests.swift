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
    /// The books, for what an added slot carries.
    weak var books: BeaconSlots?

    init(capacity: Int) { self.capacity = capacity }

    private func check(_ kind: String) throws(HostError) {
        guard refuse == kind else { return }
        refuse = nil
        calls.append("refused \(kind)")
        throw .unsupported("refused")
    }

    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        try check("data")
        let slot = plan.handle(ofBeacon: index)
        onSlot[slot] = Self.minor(data)
        calls.append("data \(slot) \(onSlot[slot]!)")
    }

    /// Each slot's random address, where one was put with data at a turn.
    private(set) var slotAddress: [UInt8: BluetoothAddress] = [:]

    func setData(_ data: [UInt8], scanResponse: [UInt8]?, from address: BluetoothAddress, onSlotOf index: Int,
                 plan: AdvertisingPlan) throws(HostError) {
        try check("data")
        let slot = plan.handle(ofBeacon: index)
        onSlot[slot] = Self.minor(data)
        slotAddress[slot] = address
        calls.append("data \(slot) \(onSlot[slot]!) from \(address)")
    }

    /// The minor is the two bytes before the measured power, the data's last byte.
    static func minor(_ data: [UInt8]) -> Int { Int(data[data.count - 3]) << 8 | Int(data[data.count - 2]) }

    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try check("add")
        guard let slot = (0..<UInt8(capacity)).first(where: { !plan.handles.contains($0) }) else {
            // None free: it takes turns on the last, where there is one.
            guard plan.handles.isEmpty else { return nil }
            throw .unsupported("full")
        }
        calls.append("add \(slot)")
        if let data = books?.beacons[index].advertisingData.bytes { onSlot[slot] = Self.minor(data) }
        return slot
    }

    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan, with data: SlotData?) throws(HostError) {
        try check("parameters")
        calls.append("parameters \(plan.handle(ofBeacon: index))" + (data.map { " with data \(HexText.format($0.data))" } ?? ""))
    }

    func removeSlot(_ slot: UInt8) throws(HostError) {
        try check("remove")
        onSlot[slot] = nil
        calls.append("remove \(slot)")
    }

    var canShowFrames: Bool { true }

    func putAddress(_ address: BluetoothAddress, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        calls.append("address \(plan.handle(ofBeacon: index))")
    }

    func removeLeftovers() { calls.append("remove leftovers") }

    func slotInBooks(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        guard let slot = (0..<UInt8(capacity)).first(where: { !plan.handles.contains($0) }) else {
            guard plan.handles.isEmpty else { return nil }
            throw .unsupported("full")
        }
        return slot
    }

    func checkParameters(ofBeacon index: Int, plan: AdvertisingPlan) throws(HostError) {}

    private(set) var left: [UInt8] = []
    func leaveSlot(_ slot: UInt8) { left.append(slot) }
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
        try slots.remove(1, on: backend)
        #expect(slots.plan?.rotating == false && slots.beacons == [minor(1)])
        #expect(backend.onSlot == [0: 1], "beacon 1 was on the air: nothing to send")
        #expect(backend.calls == ["data 0 2", "data 0 30", "data 0 1"])
        // The core takes the last one off too: keeping it is `advertise`'s rule (`LiveBeacons`).
        try slots.remove(0, on: backend)
        #expect(slots.beacons.isEmpty && backend.calls.last == "remove 0")
    }

    /// One rule for more beacons than slots: a slot each while there are slots, and the
    /// beacons beyond take turns on the last one with the beacon there; an added beacon joins
    /// the turns and goes on the air at its turn.
    @Test func beaconsBeyondTheSlotsTakeTurnsOnTheLastOne() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        backend.books = slots
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        for value in 1...4 { _ = try slots.add(minor(UInt16(value)), on: backend) }
        #expect(backend.calls == ["add 0", "add 1"], "beacons 3 and 4 join the turns: nothing sent")
        #expect(slots.plan?.handles == [0, 1] && slots.plan?.firstTurn == 1)
        var seen: [Int] = []
        for _ in 1...6 {
            try slots.rotate(on: backend)
            seen.append(backend.onSlot[1] ?? -1)
        }
        #expect(seen == [3, 4, 2, 3, 4, 2])
        #expect(backend.onSlot[0] == 1, "beacon 1 keeps its own slot")
        #expect(!backend.calls.contains { $0.hasPrefix("remove") })
        // A beacon waiting for its turn changes at its turn; one with its own slot at once.
        try slots.update(2, to: minor(33), on: backend)
        try slots.update(0, to: minor(11), on: backend)
        #expect(backend.onSlot == [0: 11, 1: 2])
        try slots.rotate(on: backend)
        #expect(backend.onSlot == [0: 11, 1: 33])
    }

    /// A slot that falls free goes to the first beacon in the turns, with its parameters where
    /// the removed beacon had its own; the beacon on turn stays on the shared slot, or, where
    /// the moved one was on turn, the next goes on it. With one beacon left in them, the turns end.
    @Test func aSlotThatFallsFreeGoesToTheFirstBeaconInTheTurns() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        backend.books = slots
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try slots.add(minor(1), parameters: BeaconParameters(intervalUnits: 800), on: backend)
        for value in 2...4 { _ = try slots.add(minor(UInt16(value)), on: backend) }
        #expect(backend.onSlot == [0: 1, 1: 2])
        try slots.rotate(on: backend)
        #expect(backend.onSlot == [0: 1, 1: 3])
        try slots.remove(0, on: backend)
        // Beacon 2 (first in the turns) moves to slot 0 with the run's parameters; 3 stays on.
        #expect(backend.calls.suffix(2) == ["parameters 0", "data 0 2"])
        #expect(backend.onSlot == [0: 2, 1: 3] && slots.plan?.handles == [0, 1] && slots.plan?.rotating == true)
        #expect(slots.beacons == [minor(2), minor(3), minor(4)])
        try slots.rotate(on: backend)
        #expect(backend.onSlot == [0: 2, 1: 4])
        // The first in the turns is 3 (waiting), 4 is on the air: 3 moves to slot 0, 4 has slot 1 to itself.
        try slots.remove(0, on: backend)
        #expect(backend.calls.last == "data 0 3")
        #expect(backend.onSlot == [0: 3, 1: 4] && slots.plan?.rotating == false)
        // Now with the moved one on the air: the next goes on the shared slot at once.
        let other = FakeSlots(capacity: 2)
        let turns = BeaconSlots(beacons: [])
        other.books = turns
        turns.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        for value in 1...3 { _ = try turns.add(minor(UInt16(value)), on: other) }
        try turns.remove(0, on: other)
        #expect(other.calls == ["add 0", "add 1", "data 0 2", "data 1 3"])
        #expect(other.onSlot == [0: 2, 1: 3] && turns.plan?.rotating == false)
    }

    /// Beacons that take turns share one slot's parameters: a beacon of its own is refused
    /// from the turns, and a beacon with its own on the last slot keeps others from sharing it.
    @Test func theTurnsTakeNoBeaconWithItsOwnParameters() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try slots.add(minor(1), on: backend)
        _ = try slots.add(minor(2), parameters: BeaconParameters(txPower: -8), on: backend)
        var before = slots.liveState
        #expect { try slots.add(minor(3), on: backend) } throws: { "\($0)".contains("beacon 2's own TX power -8 dBm: the beacons would take turns") }
        slots.revert(to: before)
        try slots.update(1, to: minor(2), parameters: .run, on: backend)
        _ = try slots.add(minor(3), on: backend)
        before = slots.liveState
        #expect(throws: HostError.self) { try slots.update(2, to: minor(3), parameters: BeaconParameters(txPower: 0), on: backend) }
        slots.revert(to: before)
        // Beacon 1 has a slot of its own: its own parameters stay possible.
        try slots.update(0, to: minor(1), parameters: BeaconParameters(txPower: 0), on: backend)
        #expect(backend.calls == ["add 0", "add 1", "parameters 1", "parameters 0"])
    }

    /// A crowd whose members each have an address of their own takes turns on one slot: each
    /// member's data goes on with its own address, the same one at every turn, and no two share
    /// one; a new address for a member waiting for its turn goes on at its turn; removing one
    /// so that the turns end leaves the last from its own address.
    @Test func membersWithAddressesOfTheirOwnTakeTurnsFromThem() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        backend.books = slots
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        let own = BeaconParameters(address: .generatedStaticRandom)
        for value in 1...5 { _ = try slots.add(minor(UInt16(value)), parameters: own, on: backend) }
        // Each member's address is made as it comes, before its first turn.
        let made = slots.running.map(\.ownAddress)
        #expect(made.allSatisfy { $0 != nil } && Set(made.compactMap { $0 }).count == 5, "\(made)")
        var heardFrom: [Int: Set<BluetoothAddress>] = [:]
        for _ in 1...12 {
            try slots.rotate(on: backend)
            if let minor = backend.onSlot[1], let address = backend.slotAddress[1] { heardFrom[minor, default: []].insert(address) }
        }
        #expect(Set(heardFrom.keys) == [2, 3, 4, 5], "every member in the turns went on: \(heardFrom)")
        for (minor, addresses) in heardFrom {
            #expect(addresses == [made[minor - 1]!], "minor \(minor) from its own address only: \(addresses)")
        }
        // A new address for a member waiting for its turn: nothing sent until its turn.
        let waiting = (1...4).first { slots.rotationIndex != $0 }!
        let calls = backend.calls.count
        let renewed = try slots.renewAddress(waiting, on: backend)
        #expect(backend.calls.count == calls, "\(backend.calls.suffix(2))")
        while slots.rotationIndex != waiting { try slots.rotate(on: backend) }
        #expect(backend.slotAddress[1] == renewed && backend.onSlot[1] == waiting + 1)
        // Down to two beacons: the turns end, and the one left on the shared slot is from its own address.
        for _ in 1...3 { try slots.remove(slots.entries.count - 1, on: backend) }
        #expect(slots.plan?.rotating == false && slots.entries.count == 2)
        #expect(backend.onSlot[1] == 2 && backend.slotAddress[1] == slots.running[1].ownAddress, "\(backend.calls.suffix(3))")
    }

    /// Taking turns, beacons keep one set of parameters apart from their addresses: an address
    /// of its own for some and not others (the run's public), or an interval of its own, is
    /// refused before anything is sent.
    @Test func theTurnsTakeAddressesOfTheirOwnOnlyForAll() throws {
        let backend = FakeSlots(capacity: 1)
        let slots = BeaconSlots(beacons: [])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try slots.add(minor(1), parameters: BeaconParameters(address: .generatedNonResolvable), on: backend)
        #expect { try slots.add(minor(2), on: backend) } throws: { "\($0)".contains("beacon 2's own address: the beacons would take turns on one set, some with an address of their own") }
        #expect(BeaconParameters.firstUnableToTakeTurns([.run, .run], runAddressIsRandom: false) == nil)
        #expect(BeaconParameters.firstUnableToTakeTurns([BeaconParameters(address: .generatedStaticRandom), .run],
                                                        runAddressIsRandom: true) == nil, "the run's random address for the other")
        #expect(BeaconParameters.firstUnableToTakeTurns([BeaconParameters(address: .generatedStaticRandom), .run],
                                                        runAddressIsRandom: false) == 1)
        #expect(BeaconParameters.firstUnableToTakeTurns([BeaconParameters(address: .publicAddress),
                                                         BeaconParameters(address: .generatedStaticRandom)],
                                                        runAddressIsRandom: true) == 1)
        #expect(BeaconParameters.firstUnableToTakeTurns([.run, BeaconParameters(intervalUnits: 320, address: .generatedStaticRandom)],
                                                        runAddressIsRandom: true) == 1)
    }

    /// A beacon like `minor(value)` with a scan response ("lobby" as a complete local name).
    func named(_ value: UInt16) throws -> Beacon {
        .custom(CustomAdvertisement(data: minor(value).advertisingData,
                                    scanResponse: try AdvertisingData(parsing: hex("06 09 6C 6F 62 62 79"))))
    }

    /// The shared slot's type (scannable or not) stays while beacons take turns on it: a beacon
    /// with a scan response is refused from turns on a slot that is not scannable.
    @Test func theTurnsKeepTheSharedSlotsType() throws {
        let backend = FakeSlots(capacity: 1)
        let slots = BeaconSlots(beacons: [])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try slots.add(minor(1), on: backend)
        #expect { try slots.add(try named(2), on: backend) } throws: { "\($0)".contains("not scannable") }
    }

    /// One scan-response rule, however the beacons came (given at the start as `advertise`
    /// gives them, or added one at a time as a scenario adds them): a slot is scannable when a
    /// beacon on it has a scan response; beacons without one on a scannable slot send an empty
    /// one; a slot of a beacon's own is not scannable for a beacon without one. When the last
    /// beacon with a scan response leaves the turns, the shared slot gets its parameters anew.
    @Test func aSlotIsScannableWhenABeaconOnItHasAScanResponse() throws {
        let given = BeaconSlots(beacons: [minor(1), try named(2), minor(3), try named(4)])
        given.plan = AdvertisingPlan(mode: .extended, handles: [0, 1, 2], rotating: true, address: nil, addressIsRandom: false)
        #expect(!given.isScannable(0) && given.isScannable(1), "slots of their own: as their beacon")
        #expect(given.scanResponse(of: minor(1), at: 0) == nil)
        #expect(given.isScannable(2) && given.isScannable(3), "the shared slot: beacon 4 on it has one")
        #expect(given.scanResponse(of: minor(3), at: 2) == [], "beacon 3 sends an empty one")
        let backend = FakeSlots(capacity: 1)
        let added = BeaconSlots(beacons: [])
        backend.books = added
        added.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        _ = try added.add(try named(1), on: backend)
        _ = try added.add(minor(2), on: backend)
        _ = try added.add(minor(3), on: backend)
        #expect(added.isScannable(2) && added.scanResponse(of: minor(2), at: 1) == [])
        try added.rotate(on: backend)
        try added.remove(0, on: backend)
        #expect(!added.isScannable(0) && backend.calls.contains("parameters 0"),
                "beacon 1 gone: the slot is not scannable any more, its parameters sent anew")
        // Its own slot's type stays with a beacon on the air.
        #expect(throws: HostError.self) { try added.update(0, to: try named(2), on: backend) }
    }

    /// A scenario's beacons come and go: the slots start with none, each beacon gets a slot
    /// of its own, the last may go, and a beacon that would gain a scan response is refused.
    /// A backend with no slot free and none to share refuses.
    @Test func beaconsComeAndGoEachOnASlotOfItsOwn() throws {
        let none = BeaconSlots(beacons: [])
        none.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        #expect(throws: HostError.self) { try none.add(minor(1), on: FakeSlots(capacity: 0)) }
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        #expect(try slots.add(minor(1), on: backend) == 0)
        #expect(try slots.add(minor(2), on: backend) == 1)
        try slots.remove(0, on: backend)
        #expect(slots.plan?.handles == [1] && slots.beacons == [minor(2)])
        #expect(throws: HostError.self) { try slots.update(0, to: try named(2), on: backend) }
        try slots.remove(0, on: backend)
        #expect(slots.beacons.isEmpty && slots.plan?.handles == [])
        #expect(backend.calls == ["add 0", "add 1", "remove 0", "remove 1"])
    }

    /// Off the air, changes go through `InBooks`: the books change as on the air (a new beacon
    /// numbered as the backend numbers slots, a removed one's slot left for the restore), and
    /// nothing reaches the backend's air.
    @Test func changesInTheBooksSendNothing() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [], rotating: false, address: nil, addressIsRandom: false)
        #expect(try slots.add(minor(1), on: backend) == 0)
        let books = InBooks(backend)
        #expect(try slots.add(minor(2), on: books) == 1)
        try slots.update(0, to: minor(3), on: books)
        try slots.remove(0, on: books)
        #expect(slots.plan?.handles == [1] && slots.beacons == [minor(2)])
        #expect(backend.calls == ["add 0"], "only the add made on the air: \(backend.calls)")
        #expect(backend.left == [0], "the removed beacon's slot is the restore's to remove")
        // The same changes on the air reach it.
        try slots.update(0, to: minor(4), on: backend)
        #expect(backend.calls == ["add 0", "data 1 4"])
    }

    /// A change the backend refuses leaves the books as they were once reverted (what each
    /// advertiser's `atomically` does): a failed remove keeps the beacon on its slot, a failed
    /// add keeps no beacon.
    @Test func aFailedChangeLeavesTheBooksAsTheyWere() throws {
        let backend = FakeSlots(capacity: 2)
        let slots = BeaconSlots(beacons: [])
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

    /// Each beacon has one id from the core: the first ones 1, 2, ... as given, each added one
    /// the next number; an id stays with its beacon while others go (its index shifts), is
    /// never given again, and a failed add gives none away.
    @Test func aBeaconKeepsItsIdWhileOthersComeAndGo() throws {
        let backend = FakeSlots(capacity: 4)
        let slots = BeaconSlots(beacons: [minor(1), minor(2)])
        slots.plan = AdvertisingPlan(mode: .extended, handles: [0, 1], rotating: false, address: nil, addressIsRandom: false)
        #expect(slots.ids == [1, 2])
        let third = try slots.add(minor(3), on: backend)
        #expect(slots.ids[third] == 3)
        try slots.remove(0, on: backend)
        #expect(slots.ids == [2, 3], "beacon 2 keeps its id at index 0")
        #expect(slots.beacons == [minor(2), minor(3)])
        let before = slots.liveState
        backend.refuse = "add"
        #expect(throws: HostError.self) { try slots.add(minor(4), on: backend) }
        slots.revert(to: before)
        #expect(try slots.add(minor(4), on: backend) == 2)
        #expect(slots.ids == [2, 3, 4], "the refused add gave no id away, and 1 is not given again")
    }
}
