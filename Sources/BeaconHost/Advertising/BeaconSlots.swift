// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What one way in does on the air for the advertising policy (`BeaconSlots`): HCI advertising
/// sets (`Advertiser`) or the kernel's advertising instances (`ManagedAdvertiser`). A slot is
/// a set handle or an instance number.
protocol SlotBackend: AnyObject {
    /// Puts `data` on the slot that carries beacon `index` (its own, or the last one where it
    /// takes turns: `AdvertisingPlan.handle(ofBeacon:)`), and `scanResponse` as its scan
    /// response (nil: left as it is).
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError)
    /// Puts the new last beacon, `index`, on the air on a slot of its own and returns the slot;
    /// nil when none is free (legacy advertising has one slot) and it joins the turns instead.
    /// - Throws: `HostError` when the controller refuses, or no slot is free and there is none
    ///   to share (no beacon yet); what the failed add created is the backend's leftover.
    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8?
    /// Gives the slot that carries beacon `index` (one of its own: never one beacons take
    /// turns on) the beacon's parameters as the books have them now, and `data` with them where
    /// given (new content that goes with them: a new address's, in the same step, so that no
    /// PDU pairs the new parameters with the old content). HCI: parameters the controller
    /// refuses leave the set enabled with the ones it had; data refused after them leaves it
    /// disabled. The kernel: the instance added again with the books' data.
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan, with data: SlotData?) throws(HostError)
    /// Takes `slot`, a removed beacon's (already out of the plan), off the air.
    func removeSlot(_ slot: UInt8) throws(HostError)
    /// Whether another frame may be put on a beacon's slot for now (`show`).
    var canShowFrames: Bool { get }
    /// Puts `address`, beacon `index`'s new one (in the books already), on the slot that
    /// carries it while the beacon is on the air there.
    func putAddress(_ address: BluetoothAddress, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError)
    /// Puts `data` (and `scanResponse`, as `setData`) on the shared slot from `address`, beacon
    /// `index`'s at its turn, so that no event carries one beacon's data from another's address.
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, from address: BluetoothAddress, onSlotOf index: Int,
                 plan: AdvertisingPlan) throws(HostError)
    /// Removes the slots of ours no beacon uses, refusals ignored.
    func removeLeftovers()
    /// Makes the changes `body` makes together where the backend can (HCI sets: one enable or
    /// disable for all, `Advertiser.batched`); else one by one.
    func batched<T>(_ body: () throws(HostError) -> T) throws(HostError) -> T
    /// Removes the slots a batch left idle for longer than a moment (`Advertiser.idleHold`).
    func releaseIdleSets()

    // The same, for the books only (`InBooks`): checked, numbered, nothing sent.

    /// The slot the new last beacon, `index`, would get (nil: none free, it joins the turns),
    /// its parameters checked as `addSlot` checks them; nothing sent.
    func slotInBooks(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8?
    /// Refuses beacon `index`'s parameters as `setParameters(onSlotOf:plan:)` would; nothing sent.
    func checkParameters(ofBeacon index: Int, plan: AdvertisingPlan) throws(HostError)
    /// `slot`, a removed beacon's, is left for the restore (or the stop) to remove where it is
    /// still ours; nothing sent.
    func leaveSlot(_ slot: UInt8)
}

/// A slot's advertising data and its scan response (nil: left as it is).
typealias SlotData = (data: [UInt8], scanResponse: [UInt8]?)

extension SlotBackend {
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        try setParameters(onSlotOf: index, plan: plan, with: nil)
    }

    func batched<T>(_ body: () throws(HostError) -> T) throws(HostError) -> T { try body() }
    func releaseIdleSets() {}
}

/// The books only: a change made while the beacons are off the air, or one a disruption cut
/// short (`CutShortChange.keepInBooks`), for the restore to put on the air. What the backend
/// checks is checked and a new beacon's slot numbered as the backend numbers them; nothing is
/// sent.
final class InBooks: SlotBackend {
    private let backend: any SlotBackend

    init(_ backend: any SlotBackend) {
        self.backend = backend
    }

    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) {}
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, from address: BluetoothAddress, onSlotOf index: Int,
                 plan: AdvertisingPlan) {}
    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try backend.slotInBooks(forBeacon: index, plan: plan)
    }
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan, with data: SlotData?) throws(HostError) {
        try backend.checkParameters(ofBeacon: index, plan: plan)
    }
    func removeSlot(_ slot: UInt8) { backend.leaveSlot(slot) }
    /// A frame shown for now is not the restore's to put back.
    var canShowFrames: Bool { false }
    func putAddress(_ address: BluetoothAddress, onSlotOf index: Int, plan: AdvertisingPlan) {}
    func removeLeftovers() {}
    func slotInBooks(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try backend.slotInBooks(forBeacon: index, plan: plan)
    }
    func checkParameters(ofBeacon index: Int, plan: AdvertisingPlan) throws(HostError) {
        try backend.checkParameters(ofBeacon: index, plan: plan)
    }
    func leaveSlot(_ slot: UInt8) { backend.leaveSlot(slot) }
}

/// The advertising policy both ways in share, written once: which beacon is on which slot,
/// the turns beacons take when there are fewer slots than beacons, a change in place (a beacon
/// waiting for its turn changes when the turn comes), adding and removing beacons while on
/// the air, and the books a failed change puts back.
///
/// One rule for more beacons than slots: each beacon has a slot of its own while there are
/// slots; the last slot is shared by the beacons from it on, which take turns on it
/// (`AdvertisingPlan.firstTurn`). A slot that falls free goes to the first beacon in the
/// turns. Legacy advertising has one slot, so all its beacons take turns. What a slot is, and
/// the rules of owning one (the kernel's provable numbers, sets the kernel never uses), are
/// the backend's.
final class BeaconSlots {
    /// The beacons advertised now, in order: each one value with its id, content, own
    /// parameters and made-up address.
    private(set) var entries: [BeaconEntry]
    /// The id the next beacon added gets: ids are given once, in order, and never reused.
    private(set) var nextID: BeaconID
    /// The beacons' content, in order (a view of `entries`).
    var beacons: [Beacon] { entries.map(\.beacon) }
    /// Each beacon's own parameters (`.run`: the run's), in order (a view of `entries`).
    var parameters: [BeaconParameters] { entries.map(\.parameters) }
    /// The beacons' ids, in order (a view of `entries`).
    var ids: [BeaconID] { entries.map(\.id) }
    var plan: AdvertisingPlan?
    /// The beacon on the air on the shared slot while beacons take turns (from `plan.firstTurn` on).
    var rotationIndex = 0
    /// Slots the advertiser created that no beacon uses (a failed add could not remove one, a
    /// reverted change had added one): removed at the next restore or stop.
    var leftovers: Set<UInt8> = []

    /// Whether the advertising goes in extended PDUs (a beacon's data is longer than 31 bytes,
    /// or the run's PHY is Coded); a beacon on the Coded PHY of its own goes in them too
    /// (`usesExtendedPDUs`).
    let extendedPDUs: Bool

    /// Whether beacon `index`'s slot sends extended PDUs (`usesExtendedPDUs(with:)`).
    func usesExtendedPDUs(_ index: Int) -> Bool {
        guard entries.indices.contains(index) else { return extendedPDUs }
        return usesExtendedPDUs(with: entries[index].parameters)
    }

    /// Whether a beacon with parameters `own` sends extended PDUs here
    /// (`BeaconParameters.sendsExtendedPDUs(whereTheRunSends:)`).
    func usesExtendedPDUs(with own: BeaconParameters) -> Bool {
        own.sendsExtendedPDUs(whereTheRunSends: extendedPDUs)
    }

    /// - Parameters:
    ///   - parameters: each beacon's own (none given: the run's for every beacon).
    ///   - extendedPDUs: extended PDUs whatever the data's length (the Coded PHY).
    init(beacons: [Beacon], parameters: [BeaconParameters] = [], extendedPDUs: Bool = false) {
        let own = parameters.count == beacons.count ? parameters : beacons.map { _ in .run }
        entries = zip(beacons, own).enumerated().map { BeaconEntry(id: BeaconID($0.offset + 1), beacon: $0.element.0, parameters: $0.element.1) }
        nextID = BeaconID(beacons.count + 1)
        self.extendedPDUs = extendedPDUs || beacons.contains(where: \.needsExtendedPDU)
    }

    /// Checks what the beacons ask of the advertising before anything is sent: data within what
    /// the PDUs hold, and no scan response with extended PDUs (their scannable form carries no
    /// advertising data).
    func checkBeacons() throws(HostError) {
        if extendedPDUs && hasScanResponse {
            throw .refused(Refusal(.scanResponse, .scanResponseNeedsLegacyPDUs))
        }
        for (index, entry) in entries.enumerated() {
            try checkScanResponse(entry.beacon, parameters: entry.parameters)
            _ = try entry.beacon.pduData(beacon: entry.id, extendedPDUs: usesExtendedPDUs(index))
        }
    }

    /// Refuses a scan response on a beacon whose own PHY is Coded (its extended PDUs are not
    /// scannable with data).
    private func checkScanResponse(_ beacon: Beacon, parameters own: BeaconParameters) throws(HostError) {
        guard own.phy == .coded, beacon.scanResponseData != nil else { return }
        throw .refused(Refusal(.scanResponse, .scanResponseOnCodedPHY))
    }

    /// The random address beacon `index`'s set advertises from where the beacon has one of its
    /// own: given, or made up (once, then kept until its kind changes or it is renewed); nil
    /// for the public address; `runs` (the run's) where it has none.
    func address(ofBeacon index: Int, runs: BluetoothAddress?) -> BluetoothAddress? {
        switch entries[index].parameters.address {
        case nil: return runs
        case .publicAddress?: return nil
        case let kind?:
            if let own = ownAddress(ofBeacon: index) { return own }
            // Only a made-up kind has none yet.
            let address = kind.make()!
            entries[index].madeAddress = (kind, address)
            return address
        }
    }

    /// Makes the addresses of their own the beacons still lack (`static`, `non-resolvable`),
    /// so that each is known, and shown, before it goes on the air: one that takes turns too.
    func makeAddresses() {
        for index in entries.indices where entries[index].parameters.address?.isMadeUp == true {
            _ = address(ofBeacon: index, runs: nil)
        }
    }

    /// The beacons, each one value with the address of its own its slot advertises from now.
    var running: [RunningBeacon] {
        entries.indices.map { index in
            let entry = entries[index]
            return RunningBeacon(id: entry.id, beacon: entry.beacon, parameters: entry.parameters,
                                 ownAddress: ownAddress(ofBeacon: index))
        }
    }

    /// The place in `entries` of the beacon with id `id`.
    /// - Throws: `HostError.refused` when no beacon has that id.
    func index(_ id: BeaconID) throws(HostError) -> Int {
        guard let index = entries.firstIndex(where: { $0.id == id }) else {
            throw .refused(Refusal(nil, .noSuchBeacon("\(id)")))
        }
        return index
    }

    /// The random address of its own beacon `index`'s set advertises from now (given, or made
    /// up and in use); nil where it has none of its own or none was made yet.
    func ownAddress(ofBeacon index: Int) -> BluetoothAddress? {
        switch entries[index].parameters.address {
        case let .random(address)?: address
        case let kind? where kind.isMadeUp: entries[index].madeAddress.flatMap { $0.kind == kind ? $0.address : nil }
        default: nil
        }
    }

    /// Gives beacon `index`, whose address is made up, a new one of the same kind, and with it
    /// new content (`content`; nil: kept) in one step: what identifies the beacon changes
    /// together. New content goes out only from the new address (`SlotBackend.setData(_:from:)`:
    /// the slot disabled around both, so that no PDU pairs the old address with the new content
    /// or the reverse); an address alone goes on in place where the backend can. One taking
    /// turns goes out with both at its next turn.
    /// - Returns: the new address.
    /// - Throws: `HostError` as `update` refuses content, or when the backend refuses (the
    ///   slot then stays off the air rather than carrying half of the change).
    func renewAddress(_ index: Int, with content: Beacon? = nil, on backend: some SlotBackend) throws(HostError) -> BluetoothAddress {
        guard let plan else { throw .refused(Refusal(nil, .notAdvertising)) }
        guard entries.indices.contains(index), let kind = entries[index].parameters.address, kind.isMadeUp else {
            throw .refused(Refusal(nil, beacon: label(index), .noAddressMadeUp))
        }
        var data: [UInt8]?
        if let content {
            data = try content.pduData(extendedPDUs: usesExtendedPDUs(index))
            try checkScanResponse(content, parameters: entries[index].parameters)
            try checkSlotType(of: index, becoming: content)
            entries[index].beacon = content
        }
        let address = kind.make()!
        entries[index].madeAddress = (kind, address)
        guard isOnAir(index) else { return address }
        if let data, hasOwnSlot(index) {
            try backend.setData(data, scanResponse: scanResponse(of: entries[index].beacon, at: index), from: address,
                                onSlotOf: index, plan: plan)
        } else if data != nil {
            try put(index, on: backend, plan: plan, fromItsAddress: true)
        } else {
            try backend.putAddress(address, onSlotOf: index, plan: plan)
        }
        return address
    }

    /// How many slots `beacons` beacons start on, `available` being free (legacy advertising:
    /// 1): one each while there are slots, the beacons beyond sharing the last; none for none.
    static func slotCount(beacons: Int, available: Int) -> Int {
        beacons == 0 ? 0 : min(beacons, max(1, available))
    }

    /// Refuses a beacon with parameters of its own among those that take turns (from `first`
    /// on; nil: none do): a slot that beacons take turns on keeps one set of parameters, apart
    /// from a random address each (`BeaconParameters.firstUnableToTakeTurns`).
    /// - Parameter runAddressIsRandom: whether the run's address is random (nil: the plan's).
    func checkTurns(from first: Int?, runAddressIsRandom: Bool? = nil) throws(HostError) {
        guard let first, first < entries.count else { return }
        let random = runAddressIsRandom ?? (plan?.address != nil)
        guard let offset = BeaconParameters.firstUnableToTakeTurns(entries[first...].map(\.parameters),
                                                                  runAddressIsRandom: random) else { return }
        throw Self.turnsRefusal(label(first + offset), entries[first + offset].parameters)
    }

    /// Whether the beacons taking turns go out from addresses of their own: each put on the
    /// shared slot with its data at its turn.
    private var turnsKeepAddresses: Bool {
        guard let first = plan?.firstTurn, first < entries.count else { return false }
        return entries[first...].contains { $0.parameters.address != nil }
    }

    /// Beacon `index` for messages and steps, by its id: "beacon 3".
    func label(_ index: Int) -> BeaconID {
        entries.indices.contains(index) ? entries[index].id : nextID
    }

    /// Whether beacon `index` has a slot of its own (does not take turns).
    func hasOwnSlot(_ index: Int) -> Bool {
        plan?.firstTurn.map { index < $0 } ?? true
    }

    /// Whether beacon `index` is on the air: on a slot of its own, or on turn.
    private func isOnAir(_ index: Int) -> Bool {
        hasOwnSlot(index) || index == rotationIndex
    }

    private static func turnsRefusal(_ label: BeaconID, _ own: BeaconParameters) -> HostError {
        .refused(own.turnsRefusal(beacon: label))
    }

    /// The beacons on the slot that carries beacon `index`: itself on a slot of its own, or
    /// every beacon that takes turns on the shared one.
    private func beaconsSharingSlot(of index: Int) -> Range<Int> {
        guard let first = plan?.firstTurn, index >= first else { return index..<(index + 1) }
        return first..<entries.count
    }

    /// Whether a beacon has a scan response.
    var hasScanResponse: Bool { entries.contains { $0.beacon.scanResponseData != nil } }

    /// Whether beacon `index`'s slot is scannable advertising: one rule for every way a beacon
    /// comes (given at the start, added, a scenario's): a slot is scannable when a beacon on
    /// it has a scan response, unless it sends extended PDUs of the beacon's own PHY (their
    /// scannable form carries no advertising data). A beacon without one on a scannable slot
    /// (taking turns with one that has) sends an empty scan response.
    func isScannable(_ index: Int) -> Bool {
        isScannable(index, with: nil)
    }

    /// Whether beacon `index`'s slot would be scannable with `replacement` (nil: the beacon as
    /// it is) in the beacon's place.
    private func isScannable(_ index: Int, with replacement: Beacon?) -> Bool {
        guard !usesExtendedPDUs(index) || extendedPDUs else { return false }
        return beaconsSharingSlot(of: index).contains { slotMate in
            guard entries.indices.contains(slotMate) else { return false }
            let beacon = slotMate == index ? replacement ?? entries[slotMate].beacon : entries[slotMate].beacon
            return beacon.scanResponseData != nil
        }
    }

    /// The scan response that goes with `beacon`'s data on beacon `index`'s slot: nil where the
    /// slot is not scannable, empty for a beacon without one on a scannable slot.
    func scanResponse(of beacon: Beacon, at index: Int) -> [UInt8]? {
        isScannable(index) ? beacon.scanResponseData?.bytes ?? [] : nil
    }

    /// Refuses `beacon` in beacon `index`'s place where it would turn the slot from scannable
    /// to not or back: a slot's type is set with its parameters, so a beacon keeps its slot's
    /// type while on the air, and one with a scan response joins beacons taking turns only
    /// where they have one too.
    private func checkSlotType(of index: Int, becoming beacon: Beacon) throws(HostError) {
        let before = isScannable(index)
        guard isScannable(index, with: beacon) != before else { return }
        let shared = !hasOwnSlot(index)
        throw .refused(Refusal(.scanResponse, beacon: shared ? nil : label(index),
                               shared ? .sharedSetOfOtherType(scannable: before) : .scanResponseKeepsItsType))
    }

    /// The books a failed change puts back.
    var liveState: LiveState {
        LiveState(entries: entries, nextID: nextID, plan: plan, rotationIndex: rotationIndex)
    }

    /// Makes `state` the books again; a slot the failed change created stays ours, as a leftover.
    func revert(to state: LiveState) {
        leftovers.formUnion(Set(plan?.handles ?? []).subtracting(state.plan?.handles ?? []))
        entries = state.entries
        nextID = state.nextID
        plan = state.plan
        rotationIndex = state.rotationIndex
    }

    /// Changes beacon `index` in place; a beacon that takes turns changes when its turn comes
    /// (at once if it is on the air). New parameters (`own`; nil: kept) go on its slot first
    /// (a short gap for that beacon), then new data.
    /// - Throws: `HostError` when the backend refuses, for data a legacy PDU cannot hold, or for
    ///   parameters of its own while beacons take turns.
    func update(_ index: Int, to beacon: Beacon, parameters own: BeaconParameters? = nil,
                on backend: some SlotBackend) throws(HostError) {
        guard let plan, entries.indices.contains(index) else { throw .refused(Refusal(nil, .noSuchBeacon("\(index + 1)"))) }
        let data = try beacon.pduData(extendedPDUs: usesExtendedPDUs(with: own ?? entries[index].parameters))
        try checkScanResponse(beacon, parameters: own ?? entries[index].parameters)
        let dataChanged = beacon != entries[index].beacon
        try checkSlotType(of: index, becoming: beacon)
        entries[index].beacon = beacon
        if let own, own != entries[index].parameters {
            entries[index].parameters = own
            try checkTurns(from: plan.firstTurn)
            guard hasOwnSlot(index) else {
                // Taking turns, it can differ only in its address: that goes with its data at its turn.
                if isOnAir(index) { try put(index, on: backend, plan: plan) }
                return
            }
            // New content goes on with them, in their step (a new address never carries the old content).
            try backend.setParameters(onSlotOf: index, plan: plan,
                                      with: dataChanged ? (data, scanResponse(of: beacon, at: index)) : nil)
            return
        }
        guard isOnAir(index) else { return }
        try backend.setData(data, scanResponse: scanResponse(of: beacon, at: index), onSlotOf: index, plan: plan)
    }

    /// Puts another frame on beacon `index`'s slot for now, the beacon unchanged (what a
    /// restore puts back). Not for a beacon that takes turns (the slot is theirs).
    func show(_ index: Int, _ frame: Beacon, on backend: some SlotBackend) throws(HostError) {
        guard let plan, hasOwnSlot(index), backend.canShowFrames, entries.indices.contains(index) else { return }
        try backend.setData(try frame.pduData(extendedPDUs: usesExtendedPDUs(index)), scanResponse: nil, onSlotOf: index, plan: plan)
    }

    /// With more beacons than slots, puts the next beacon in the turns on the shared slot.
    func rotate(on backend: some SlotBackend) throws(HostError) {
        guard let plan, let first = plan.firstTurn, entries.count > first else { return }
        rotationIndex = first + (max(rotationIndex, first) - first + 1) % (entries.count - first)
        try put(rotationIndex, on: backend, plan: plan)
    }

    /// Adds a beacon while advertising: a slot of its own where the backend has one free and
    /// the beacons are not taking turns; otherwise a place in the turns on the last slot (it
    /// goes on the air at its turn).
    /// - Returns: the beacon's index.
    /// - Parameter onOwnSlot: its parameters where it gets a slot of its own, when they differ
    ///   (an Eddystone-EID beacon's address of its own); where it takes turns, `own`.
    func add(_ beacon: Beacon, parameters own: BeaconParameters = .run, onOwnSlot: BeaconParameters? = nil,
             on backend: some SlotBackend) throws(HostError) -> Int {
        guard var plan else { throw .refused(Refusal(nil, .notAdvertising)) }
        guard entries.count < AdvertisingOptions.maximumBeacons else { throw .refused(Refusal(nil, .tooManyBeacons(most: AdvertisingOptions.maximumBeacons))) }
        _ = try beacon.pduData(extendedPDUs: usesExtendedPDUs(with: own))
        try checkScanResponse(beacon, parameters: own)
        // The slot beacons would take turns on, and whether it is scannable now.
        let sharing = plan.handles.indices.last.map { (index: $0, scannable: isScannable($0)) }
        entries.append(BeaconEntry(id: nextID, beacon: beacon, parameters: plan.rotating ? own : onOwnSlot ?? own))
        nextID = nextID.next
        if !plan.rotating, let slot = try backend.addSlot(forBeacon: entries.count - 1, plan: plan) {
            plan.handles.append(slot)
        } else {
            entries[entries.count - 1].parameters = own
            guard let sharing else { throw .refused(Refusal(nil, .noFreeSet(sets: nil))) }
            if beacon.scanResponseData != nil && !sharing.scannable {
                // The shared slot's type (scannable or not) is set with its parameters.
                throw .refused(Refusal(.scanResponse, .sharedSetOfOtherType(scannable: false)))
            }
            let shared = sharing.index
            if !plan.rotating {
                plan.rotating = true
                rotationIndex = shared
            }
            // Joining the turns: refused before anything is sent where a beacon has parameters of its own.
            try checkTurns(from: plan.firstTurn)
            makeAddresses()
        }
        self.plan = plan
        return entries.count - 1
    }

    /// Takes beacon `index` off the air (its slot removed, or out of the turns), the last one
    /// too (what keeps the last beacon on the air is the caller's rule: `LiveBeacons`).
    /// Where beacons take turns, a slot that falls free goes to the first of them.
    func remove(_ index: Int, on backend: some SlotBackend) throws(HostError) {
        guard var plan else { throw .refused(Refusal(nil, .notAdvertising)) }
        guard entries.indices.contains(index) else { throw .refused(Refusal(nil, .noSuchBeacon("\(index + 1)"))) }
        let removed = (parameters: entries[index].parameters, scannable: isScannable(index),
                       address: address(ofBeacon: index, runs: plan.address))
        // Whether the shared slot changes address with each turn: it goes on so for the one left on it.
        let turnsHadAddresses = turnsKeepAddresses
        // Whether the slot beacons take turns on is scannable: it goes with the beacons left on it.
        let sharedWasScannable = plan.firstTurn.map { isScannable($0) }
        entries.remove(at: index)
        if let first = plan.firstTurn, index < first {
            // Its slot falls free: the first beacon in the turns (now at first - 1) moves onto it;
            // where it was on the air, the shared slot goes on with the next.
            plan.handles.insert(plan.handles.remove(at: index), at: first - 1)
            let movedWasOnAir = rotationIndex == first
            rotationIndex = max(first, rotationIndex - 1)
            if entries.count <= plan.handles.count { plan.rotating = false }
            self.plan = plan
            // The slot has the removed beacon's parameters and type: the moved one's where they differ.
            if removed.parameters != entries[first - 1].parameters || removed.scannable != isScannable(first - 1)
                || removed.address != address(ofBeacon: first - 1, runs: plan.address) {
                try backend.setParameters(onSlotOf: first - 1, plan: plan)
            }
            try put(first - 1, on: backend, plan: plan)
            if plan.rotating && isScannable(rotationIndex) != sharedWasScannable {
                try backend.setParameters(onSlotOf: rotationIndex, plan: plan)
            }
            if movedWasOnAir { try put(rotationIndex, on: backend, plan: plan, fromItsAddress: turnsHadAddresses) }
        } else if let first = plan.firstTurn {
            let (turn, wasOnAir) = BeaconRemoval.turn(afterRemoving: index - first, turn: rotationIndex - first,
                                                      remaining: entries.count - first)
            rotationIndex = first + turn
            if entries.count <= plan.handles.count { plan.rotating = false }
            self.plan = plan
            if isScannable(rotationIndex) != sharedWasScannable { try backend.setParameters(onSlotOf: rotationIndex, plan: plan) }
            // (With one beacon left in them, the turns end: it was on the air, or is put on now.)
            if wasOnAir { try put(rotationIndex, on: backend, plan: plan, fromItsAddress: turnsHadAddresses) }
        } else {
            let slot = plan.handles.remove(at: index)
            self.plan = plan
            try backend.removeSlot(slot)
        }
    }

    /// Puts beacon `index`'s data (and scan response) on the slot that carries it; where it
    /// takes turns with beacons of addresses of their own, from its address.
    /// - Parameter fromItsAddress: whether its address goes with the data (nil: where it takes
    ///   turns with beacons of addresses of their own; a removal that ends such turns says so).
    private func put(_ index: Int, on backend: some SlotBackend, plan: AdvertisingPlan,
                     fromItsAddress: Bool? = nil) throws(HostError) {
        let beacon = entries[index].beacon
        let (data, response) = (beacon.advertisingData.bytes, scanResponse(of: beacon, at: index))
        if fromItsAddress ?? (!hasOwnSlot(index) && turnsKeepAddresses), let address = address(ofBeacon: index, runs: plan.address) {
            try backend.setData(data, scanResponse: response, from: address, onSlotOf: index, plan: plan)
        } else {
            try backend.setData(data, scanResponse: response, onSlotOf: index, plan: plan)
        }
    }
}

/// One beacon on the air (or waiting for its turn), as the core keeps it: its id, its content,
/// its own parameters, and the address made up for it.
struct BeaconEntry {
    let id: BeaconID
    var beacon: Beacon
    /// Its own parameters (interval, TX power, address; `.run`: the run's).
    var parameters: BeaconParameters
    /// An address made up for it (`static`, `non-resolvable`): kept through restores and
    /// changes until its kind changes or it is renewed.
    var madeAddress: (kind: AdvertisingOptions.Address, address: BluetoothAddress)?

    init(id: BeaconID, beacon: Beacon, parameters: BeaconParameters) {
        self.id = id
        self.beacon = beacon
        self.parameters = parameters
    }
}

extension Beacon {
    /// Its advertising data, refused (naming `beacon` when given) when it is longer
    /// than the 31 bytes a legacy PDU carries, or with `extendedPDUs` the 251 this host sends
    /// in extended PDUs.
    func pduData(beacon: BeaconID? = nil, extendedPDUs: Bool = false) throws(HostError) -> [UInt8] {
        let data = advertisingData.bytes
        let most = extendedPDUs ? AdvertisingData.extendedPDUMaximumLength : AdvertisingData.legacyMaximumLength
        guard data.count <= most else {
            throw .refused(Refusal(nil, beacon: beacon, .dataTooLong(bytes: data.count, most: most, extendedPDUs: extendedPDUs)))
        }
        return data
    }
}

/// What removing a beacon from a running emitter means for its beacons taking turns, shared
/// by the HCI and the management advertisers.
enum BeaconRemoval {
    /// Refuses to remove the last beacon, `id` (stopping the emitter is how advertising
    /// stops: the rule of `advertise`, the control socket and the library; a scenario's
    /// beacons come and go, the last one too).
    static func check(_ id: BeaconID, of count: Int) throws(HostError) {
        guard count > 1 else { throw .refused(Refusal(nil, beacon: id, .lastBeacon)) }
    }

    /// The beacon on turn once beacon `index` is gone (`remaining` left), and whether the one
    /// removed was on the air (so the set needs the next one's data now).
    static func turn(afterRemoving index: Int, turn: Int, remaining: Int) -> (turn: Int, wasOnAir: Bool) {
        let shifted = index < turn ? turn - 1 : turn
        return (shifted % remaining, index == turn)
    }
}
