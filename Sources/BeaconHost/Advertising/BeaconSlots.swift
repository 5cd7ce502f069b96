// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What one way in does on the air for the advertising policy (`BeaconSlots`): HCI advertising
/// sets (`Advertiser`) or the kernel's advertising instances (`ManagedAdvertiser`). A slot is
/// a set handle or an instance number.
protocol SlotBackend: AnyObject {
    /// Puts `data` on the slot that carries beacon `index` (the one slot while beacons take
    /// turns), and `scanResponse` as its scan response (nil: left as it is).
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError)
    /// Puts the new last beacon, `index`, on the air on a slot of its own and returns the slot;
    /// nil when it joins the turns instead (legacy advertising has one slot).
    /// - Throws: `HostError` when no slot is free or the controller refuses; what the failed
    ///   add created is the backend's leftover.
    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8?
    /// Gives the slot that carries beacon `index` (one of its own: never while beacons take
    /// turns) the beacon's parameters as the books have them now. HCI: parameters the
    /// controller refuses leave the set enabled with the ones it had.
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError)
    /// Takes `slot`, a removed beacon's (already out of the plan), off the air.
    func removeSlot(_ slot: UInt8) throws(HostError)
    /// Whether another frame may be put on a beacon's slot for now (`show`).
    var canShowFrames: Bool { get }
}

/// The advertising policy both ways in share, written once: which beacon is on which slot,
/// the turns beacons take when there are fewer slots than beacons, a change in place (a beacon
/// waiting for its turn changes when the turn comes), adding and removing beacons while on
/// the air, and the books a failed change puts back. What a slot is, and the rules of owning
/// one (the kernel's provable numbers, sets the kernel never uses), are the backend's.
final class BeaconSlots {
    /// The beacons advertised now.
    var beacons: [Beacon]
    /// Each beacon's own parameters (interval, TX power, address; `.run`: the run's), in the
    /// beacons' order.
    var parameters: [BeaconParameters]
    /// An address made up for a beacon that asked for one (`static`, `non-resolvable`), in the
    /// beacons' order: kept through restores and changes until its kind changes or it is renewed.
    typealias MadeAddress = (kind: AdvertisingOptions.Address, address: BluetoothAddress)
    var madeAddresses: [MadeAddress?]
    var plan: AdvertisingPlan?
    /// The beacon on the air while beacons take turns.
    var rotationIndex = 0
    /// Slots the advertiser created that no beacon uses (a failed add could not remove one, a
    /// reverted change had added one): removed at the next restore or stop.
    var leftovers: Set<UInt8> = []

    /// Whether the advertising is scannable (a beacon came with a scan response): every beacon
    /// then sets its scan response (empty for none) with its data. Where beacons come and go
    /// (`comeAndGo`), each beacon's set is scannable when the beacon has a scan response.
    let scannable: Bool

    /// Beacons come and go one at a time, each on a slot of its own (a scenario's stage): the
    /// slots may start with none and the last may be removed, and each slot is scannable as
    /// its beacon is. Otherwise (`advertise`) the last beacon stays: stopping is how advertising stops.
    let comeAndGo: Bool

    /// Whether the advertising goes in extended PDUs (a beacon's data is longer than 31 bytes).
    let extendedPDUs: Bool

    /// - Parameters:
    ///   - parameters: each beacon's own (none given: the run's for every beacon).
    ///   - extendedPDUs: extended PDUs whatever the data's length (the Coded PHY).
    init(beacons: [Beacon], parameters: [BeaconParameters] = [], extendedPDUs: Bool = false, comeAndGo: Bool = false) {
        self.comeAndGo = comeAndGo
        self.beacons = beacons
        self.parameters = parameters.count == beacons.count ? parameters : beacons.map { _ in .run }
        madeAddresses = beacons.map { _ in nil }
        scannable = beacons.contains { $0.scanResponseData != nil }
        self.extendedPDUs = extendedPDUs || beacons.contains(where: \.needsExtendedPDU)
    }

    /// Checks what the beacons ask of the advertising before anything is sent: data within what
    /// the PDUs hold, and no scan response with extended PDUs (their scannable form carries no
    /// advertising data).
    func checkBeacons() throws(HostError) {
        if extendedPDUs && scannable {
            throw .unsupported("a scan response goes with legacy PDUs, and this data needs extended ones (over 31 bytes): "
                               + "advertise them apart")
        }
        for (index, beacon) in beacons.enumerated() { _ = try beacon.pduData(label: "beacon \(index + 1)", extendedPDUs: extendedPDUs) }
    }

    /// The random address beacon `index`'s set advertises from where the beacon has one of its
    /// own: given, or made up (once, then kept until its kind changes or it is renewed); nil
    /// for the public address; `runs` (the run's) where it has none.
    func address(ofBeacon index: Int, runs: BluetoothAddress?) -> BluetoothAddress? {
        switch parameters[index].address {
        case nil: return runs
        case .publicAddress?: return nil
        case let kind?:
            if let own = ownAddress(ofBeacon: index) { return own }
            // Only a made-up kind has none yet.
            let address = kind.make()!
            madeAddresses[index] = (kind, address)
            return address
        }
    }

    /// The random address of its own beacon `index`'s set advertises from now (given, or made
    /// up and in use); nil where it has none of its own or none was made yet.
    func ownAddress(ofBeacon index: Int) -> BluetoothAddress? {
        switch parameters[index].address {
        case let .random(address)?: address
        case let kind? where kind.isMadeUp: madeAddresses[index].flatMap { $0.kind == kind ? $0.address : nil }
        default: nil
        }
    }

    /// Gives beacon `index`, whose address is made up, a new one of the same kind (in the books).
    func renewAddress(ofBeacon index: Int) throws(HostError) -> BluetoothAddress {
        guard beacons.indices.contains(index), let kind = parameters[index].address, kind.isMadeUp else {
            throw .unsupported("beacon \(index + 1) has no address of its own made up (address=static or non-resolvable)")
        }
        let address = kind.make()!
        madeAddresses[index] = (kind, address)
        return address
    }

    /// Refuses turns (`rotating`) while a beacon has parameters of its own: a slot that
    /// beacons take turns on keeps one set of parameters.
    func checkTurns(rotating: Bool) throws(HostError) {
        guard rotating, let index = parameters.firstIndex(where: { $0 != .run }) else { return }
        throw Self.turnsRefusal(index, parameters[index])
    }

    private static func turnsRefusal(_ index: Int, _ own: BeaconParameters) -> HostError {
        .unsupported("beacon \(index + 1) has its own \(own.description), and the beacons would take turns on one set "
                     + "(more beacons than the controller has sets, or legacy advertising), which keeps one set of "
                     + "parameters: give every beacon the run's --interval and --tx-power, or advertise fewer beacons")
    }

    /// The scan response that goes with `beacon`'s data: nil where the advertising is not scannable.
    func scanResponse(of beacon: Beacon) -> [UInt8]? {
        comeAndGo ? beacon.scanResponseData?.bytes : scannable ? beacon.scanResponseData?.bytes ?? [] : nil
    }

    /// Whether beacon `index`'s slot is scannable advertising.
    func isScannable(_ index: Int) -> Bool {
        comeAndGo ? beacons.indices.contains(index) && beacons[index].scanResponseData != nil : scannable
    }

    /// Refuses a beacon with a scan response on advertising that is not scannable; where
    /// beacons come and go, a beacon on the air that would gain or lose its scan response (its
    /// slot's type is set with its parameters).
    private func checkScannable(_ beacon: Beacon, replacing index: Int? = nil) throws(HostError) {
        if comeAndGo {
            guard let index, (beacon.scanResponseData == nil) != (beacons[index].scanResponseData == nil) else { return }
            throw .unsupported("a beacon gains or loses its scan response only when it is advertised again (stop, then "
                               + "advertise)")
        }
        guard !scannable, beacon.scanResponseData != nil else { return }
        throw .unsupported("a scan response needs scannable advertising: start with a beacon that has one "
                           + "(--scan-response, or a name that does not fit)")
    }

    /// The books a failed change puts back.
    var liveState: LiveState {
        LiveState(beacons: beacons, parameters: parameters, madeAddresses: madeAddresses, plan: plan, rotationIndex: rotationIndex)
    }

    /// Makes `state` the books again; a slot the failed change created stays ours, as a leftover.
    func revert(to state: LiveState) {
        leftovers.formUnion(Set(plan?.handles ?? []).subtracting(state.plan?.handles ?? []))
        beacons = state.beacons
        parameters = state.parameters
        madeAddresses = state.madeAddresses
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
        guard let plan, beacons.indices.contains(index) else { throw .unsupported("no beacon \(index + 1)") }
        let data = try beacon.pduData(extendedPDUs: extendedPDUs)
        try checkScannable(beacon, replacing: index)
        let dataChanged = beacon != beacons[index]
        beacons[index] = beacon
        if let own, own != parameters[index] {
            parameters[index] = own
            try checkTurns(rotating: plan.rotating)
            try backend.setParameters(onSlotOf: index, plan: plan)
            guard dataChanged else { return }
        }
        guard !plan.rotating || index == rotationIndex else { return }
        try backend.setData(data, scanResponse: scanResponse(of: beacon), onSlotOf: index, plan: plan)
    }

    /// Puts another frame on beacon `index`'s slot for now, the beacon unchanged (what a
    /// restore puts back). Not while beacons take turns (the slot is theirs).
    func show(_ index: Int, _ frame: Beacon, on backend: some SlotBackend) throws(HostError) {
        guard let plan, !plan.rotating, backend.canShowFrames, beacons.indices.contains(index) else { return }
        try backend.setData(try frame.pduData(extendedPDUs: extendedPDUs), scanResponse: nil, onSlotOf: index, plan: plan)
    }

    /// With more beacons than slots, puts the next beacon on the air.
    func rotate(on backend: some SlotBackend) throws(HostError) {
        guard let plan, plan.rotating else { return }
        rotationIndex = (rotationIndex + 1) % beacons.count
        let beacon = beacons[rotationIndex]
        try backend.setData(beacon.advertisingData.bytes, scanResponse: scanResponse(of: beacon), onSlotOf: rotationIndex,
                            plan: plan)
    }

    /// Adds a beacon while advertising: a slot of its own where the backend has one and the
    /// beacons are not taking turns; otherwise a place in the turns.
    /// - Returns: the beacon's index.
    func add(_ beacon: Beacon, parameters own: BeaconParameters = .run, on backend: some SlotBackend) throws(HostError) -> Int {
        guard var plan else { throw .unsupported("not advertising") }
        _ = try beacon.pduData(extendedPDUs: extendedPDUs)
        try checkScannable(beacon)
        beacons.append(beacon)
        parameters.append(own)
        madeAddresses.append(nil)
        if !plan.rotating, let slot = try backend.addSlot(forBeacon: beacons.count - 1, plan: plan) {
            plan.handles.append(slot)
        } else {
            guard !comeAndGo else {
                throw .unsupported("this controller has legacy advertising only, which carries one beacon at a time: "
                                   + "stop the other first")
            }
            // Joining the turns: refused before anything is sent where a beacon has parameters of its own.
            try checkTurns(rotating: true)
            plan.rotating = true
        }
        self.plan = plan
        return beacons.count - 1
    }

    /// Takes beacon `index` off the air (its slot removed, or out of the turns); the last
    /// beacon stays (stopping the emitter is how advertising stops) unless beacons come and go.
    func remove(_ index: Int, on backend: some SlotBackend) throws(HostError) {
        guard var plan else { throw .unsupported("not advertising") }
        try BeaconRemoval.check(index, of: beacons.count, keepingOne: !comeAndGo)
        beacons.remove(at: index)
        parameters.remove(at: index)
        madeAddresses.remove(at: index)
        if plan.rotating {
            let wasOnAir: Bool
            (rotationIndex, wasOnAir) = BeaconRemoval.turn(afterRemoving: index, turn: rotationIndex, remaining: beacons.count)
            if beacons.count <= plan.handles.count { plan.rotating = false }
            self.plan = plan
            if wasOnAir || !plan.rotating {
                let beacon = beacons[rotationIndex]
                try backend.setData(beacon.advertisingData.bytes, scanResponse: scanResponse(of: beacon),
                                    onSlotOf: rotationIndex, plan: plan)
            }
        } else {
            let slot = plan.handles.remove(at: index)
            self.plan = plan
            try backend.removeSlot(slot)
        }
    }
}
