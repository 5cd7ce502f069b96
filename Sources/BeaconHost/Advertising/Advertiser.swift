// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Drives a controller through the advertising flow: disable, set parameters, set data,
/// enable; and back off again when stopped.
package final class Advertiser {
    public private(set) var controller: HCIController
    public let options: AdvertisingOptions
    /// The kernel (and whoever uses it) drives the same controller: the advertiser keeps to
    /// set handles the kernel never uses and never touches a set it did not create.
    public let sharedWithKernel: Bool
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?

    /// The beacons, the sets that carry them and the turns they take (the policy both ways in share).
    let slots: BeaconSlots
    public private(set) var plan: AdvertisingPlan? {
        get { slots.plan }
        set { slots.plan = newValue }
    }
    private var rotationIndex: Int {
        get { slots.rotationIndex }
        set { slots.rotationIndex = newValue }
    }
    /// The beacons advertised now, each one value (changed by `add`, `update`, `remove`).
    public var running: [RunningBeacon] { slots.running }
    /// How many sets the controller has (read at start for more than one beacon, else at
    /// the first `add`).
    private var numberOfSets: Int?
    /// The controller refused a set's new random address while the set was enabled (before
    /// Core 5.3 it may): renewals disable the set around it from then on.
    private var addressChangeNeedsDisable = false
    /// Sets this advertiser created that no beacon uses: one a failed `add` could not remove,
    /// one whose removal was refused after it was disabled, one a reverted change had added.
    /// Removed at the next restore or stop.
    private(set) var leftovers: Set<UInt8> {
        get { slots.leftovers }
        set { slots.leftovers = newValue }
    }

    /// Sets of ours, disabled, that no beacon uses now (removed beacons' in a batch of
    /// changes, `batched`), each with when it fell idle: readied again for the next beacon
    /// added that takes the same kind of PDU as the set was last given (`lastSent`: legacy or
    /// extended, scannable or not), rather than removed and created again. Each is a leftover
    /// too, so a restore or a stop removes it, and `releaseIdleSets` removes those idle for
    /// longer than `idleHold`.
    private var idle: [UInt8: ContinuousClock.Instant] = [:]
    /// What each set of ours was last given: its parameters (the command's bytes) and random
    /// address. An idle set readied again is sent only what differs.
    private var lastSent: [UInt8: (parameters: LESetExtendedAdvertisingParameters, address: BluetoothAddress?)] = [:]
    /// While `batched` runs: the sets of removed beacons, disabled together by one command, and
    /// the sets readied for added beacons, enabled together by one at its end.
    private var batch: (off: [UInt8], on: [UInt8])?
    /// How long a set stays idle, ready for a beacon added next, before it is removed.
    static let idleHold: Duration = .seconds(1)

    /// Whether the controller has the LE Coded PHY (read at start): a beacon's own `phy` coded
    /// is refused before anything is sent where it has not.
    private var codedPHY = false

    /// The highest advertising set handle (Core Vol 4 Part E 7.8.53); on a kernel adapter the
    /// advertiser counts down from it, as the kernel counts its instances up from 0.
    public static let highestHandle: UInt8 = 0xEF

    /// With no beacons in `options`, it starts with none (they come later: `add`).
    public init(controller: HCIController, options: AdvertisingOptions, sharedWithKernel: Bool = false) {
        self.controller = controller
        self.options = options
        self.sharedWithKernel = sharedWithKernel
        self.slots = BeaconSlots(beacons: options.beacons, parameters: options.beaconParameters, extendedPDUs: options.phy == .coded)
    }

    /// Whether another beacon can have a set of its own now: a set free, the beacons not taking
    /// turns (legacy advertising has one).
    var hasFreeSet: Bool {
        guard let plan, !plan.rotating else { return false }
        return plan.handles.count < (plan.mode == .extended ? usableSetCount : 1)
    }

    /// How many beacons can have a set of their own at once: the controller's sets (read once,
    /// here where not yet), at most the handles there are; legacy advertising's one.
    func slotCapacity() throws(HostError) -> Int {
        guard let plan, plan.mode == .extended else { return 1 }
        if numberOfSets == nil {
            let commands = try controller.send(ReadLocalSupportedCommands())
            numberOfSets = try AdvertisingCapabilities.readNumberOfSets(from: controller, commands: commands)
        }
        return usableSetCount
    }

    /// How many sets this advertiser may use: the controller's (as read), at most the handles there are.
    private var usableSetCount: Int { min(numberOfSets ?? 1, Int(Self.highestHandle) + 1) }

    /// Chooses legacy or extended advertising and sets everything up, enabling last.
    ///
    /// On failure after the first change, advertising is disabled again before the error
    /// is thrown, so nothing is left half-done.
    /// - Parameters:
    ///   - capabilities: what the controller offers (`AdvertisingCapabilities.read`).
    ///   - controllerWasReset: the host has just reset the controller, so nothing advertises
    ///     and the first disable is left out.
    /// - Returns: the plan; its address is nil for the controller's public address, which the
    ///   flow itself never needs (read it with Read BD_ADDR to show it).
    /// - Throws: `HostError` naming the refused step.
    @discardableResult
    public func start(capabilities: AdvertisingCapabilities, controllerWasReset: Bool = false) throws(HostError)
        -> AdvertisingPlan {
        let extended: Bool
        switch options.mode {
        case .legacy: extended = false
        case .extended:
            guard capabilities.supportsExtendedAdvertising else {
                throw .refused(Refusal(.mode(.extended), .controllerLacksExtended))
            }
            extended = true
        case .automatic: extended = capabilities.supportsExtendedAdvertising
        }
        if options.txPower != nil && !extended {
            throw .refused(Refusal(.txPower, needsExtended))
        }
        if options.phy == .coded {
            guard extended else {
                throw .refused(Refusal(.codedPHY, needsExtended))
            }
            guard capabilities.supportsCodedPHY else {
                throw .refused(Refusal(.codedPHY, .controllerLacksCodedPHY))
            }
        }
        codedPHY = capabilities.supportsCodedPHY
        if !extended {
            try options.checkLegacyInterval()
            for index in slots.entries.indices { try checkLegacy(ownOf: index) }
        }
        for index in slots.entries.indices {
            try checkAddress(ownOf: index)
            try checkCoded(ownOf: index)
        }
        if slots.extendedPDUs && !extended {
            throw .refused(Refusal(.longData, needsExtended))
        }
        try slots.checkBeacons()
        let address: BluetoothAddress?
        switch options.address {
        case .publicAddress: address = nil
        case .generatedStaticRandom: address = Self.makeStaticRandomAddress()
        case .generatedNonResolvable: address = Self.makeNonResolvableAddress()
        case let .random(given): address = given
        }
        numberOfSets = capabilities.numberOfAdvertisingSets
        // A set per beacon while the controller has sets; the beacons beyond share the last one,
        // taking turns (legacy advertising has one).
        let setCount = BeaconSlots.slotCount(beacons: slots.entries.count, available: extended ? usableSetCount : 1)
        let rotating = slots.entries.count > setCount
        let handles = (0..<setCount).map { Self.handle(ofSet: $0, sharedWithKernel: sharedWithKernel) }
        let plan = AdvertisingPlan(mode: extended ? .extended : .legacy, handles: handles,
                                   rotating: rotating, address: address, addressIsRandom: address != nil)
        try slots.checkTurns(from: plan.firstTurn, runAddressIsRandom: address != nil)
        slots.makeAddresses()
        self.plan = plan
        rotationIndex = plan.firstTurn ?? 0
        guard !slots.entries.isEmpty else { return plan }
        do {
            if extended {
                try startExtended(plan, disableFirst: !controllerWasReset)
            } else {
                try startLegacy(plan, disableFirst: !controllerWasReset)
            }
        } catch {
            try? stop()
            throw error
        }
        return plan
    }

    private func startLegacy(_ plan: AdvertisingPlan, disableFirst: Bool) throws(HostError) {
        if disableFirst {
            step("disable advertising (LE Set Advertising Enable 0x00)")
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
        }
        try sendLegacyParameters(plan)
        try setLegacyData(data(0), scanResponse: slots.scanResponse(of: slots.entries[0].beacon, at: 0), label: 0)
        step("enable advertising (LE Set Advertising Enable 0x01)")
        try controller.send(LESetAdvertisingEnable(enable: true))
    }

    /// Legacy advertising's random address where it has one, then its parameters: the
    /// beacon's own interval and address where it has them (legacy advertising carries beacons
    /// of their own parameters one at a time), else the run's.
    private func sendLegacyParameters(_ plan: AdvertisingPlan) throws(HostError) {
        let address = slots.address(ofBeacon: 0, runs: plan.address)
        if let address {
            step("set random address \(address)")
            try controller.send(LESetRandomAddress(address: address), context: "address \(address)")
        }
        let applied = options.applying(slots.entries.first?.parameters ?? .run)
        let interval = applied.intervalUnits
        let description = AdvertisingOptions.intervalDescription(units: interval)
        let parameters = LESetAdvertisingParameters(
            intervalMin: UInt16(interval), intervalMax: UInt16(interval),
            advertisingType: applied.connectable ? .connectableUndirected
                : slots.isScannable(0) ? .scannableUndirected : .nonConnectableUndirected,
            ownAddressType: address != nil ? .randomDevice : .publicDevice)
        let channels = [(37, AdvertisingChannelMap.channel37), (38, .channel38), (39, .channel39)]
            .filter { parameters.channelMap.contains($0.1) }.map { "\($0.0)" }
        step("set parameters: \(parameters.advertisingType), interval \(description), channels \(channels.joined(separator: " "))")
        try controller.send(parameters, context: "interval \(description)")
    }

    /// Why what needs extended advertising cannot have it: legacy commands asked for, or a
    /// controller without them.
    private var needsExtended: Refusal.Reason {
        options.mode == .legacy ? .legacyChosen : .controllerLacksExtended
    }

    /// Refuses beacon `index`'s own address where it cannot be: a non-resolvable one on
    /// connectable advertising (a peer needs an address it can connect to again).
    private func checkAddress(ownOf index: Int) throws(HostError) {
        let own = slots.entries[index].parameters
        guard options.applying(own).connectable, own.address == .generatedNonResolvable else { return }
        throw .refused(Refusal(.nonResolvableAddress, beacon: slots.label(index), .connectable))
    }

    /// Refuses beacon `index`'s own Coded PHY where the controller lacks it.
    private func checkCoded(ownOf index: Int) throws(HostError) {
        guard slots.entries[index].parameters.phy == .coded, !codedPHY else { return }
        throw .refused(Refusal(.codedPHY, beacon: slots.label(index), .controllerLacksCodedPHY))
    }

    /// The beacon settings legacy advertising commands honour, and their values: every other
    /// (a TX power, the Coded PHY, extended PDUs, its channels) needs extended advertising.
    package static let legacySupport = SettingSupport([
        .accepting(.interval), .accepting(.address), .accepting(.rotateAddress), .accepting(.connectable),
        .accepting(.phy) { $0 != .coded }, .accepting(.pdu) { $0 == .legacy },
    ])

    /// Refuses beacon `index`'s own parameters that legacy advertising cannot take
    /// (`legacySupport`), and an interval over 10.24 s.
    private func checkLegacy(ownOf index: Int) throws(HostError) {
        let own = slots.entries[index].parameters
        if let refusal = Self.legacySupport.refusal(own, beacon: slots.label(index), needsExtended) { throw .refused(refusal) }
        if let units = own.intervalUnits, !AdvertisingOptions.intervalRange(legacy: true).contains(units) {
            throw .refused(Refusal(.interval(AdvertisingOptions.intervalDescription(units: units)), beacon: slots.label(index),
                                   options.mode == .legacy ? .legacyIntervalRangeChosen : .legacyIntervalRange))
        }
    }

    private func setLegacyData(_ data: [UInt8], scanResponse: [UInt8]?, label: Int) throws(HostError) {
        step("set data for \(slots.label(label)): \(HexText.format(data))")
        try controller.setLegacyAdvertisingData(data)
        if let scanResponse {
            step("set scan response for \(slots.label(label)): \(HexText.format(scanResponse))")
            try controller.setLegacyScanResponseData(scanResponse)
        }
    }

    /// - Parameter beaconOffset: the beacon the plan's first set carries (the next sets, the next beacons).
    private func startExtended(_ plan: AdvertisingPlan, disableFirst: Bool, beaconOffset: Int = 0) throws(HostError) {
        if disableFirst {
            // Only this program's sets (left on by an earlier --keep, say): never "all", which
            // would take other programs' advertising off the air. A set that does not exist
            // is refused (Unknown Advertising Identifier): nothing to disable.
            step("disable set(s) \(plan.handles.map(String.init).joined(separator: ", ")) if they are on")
            _ = try? controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: plan.handles.map { .init(handle: $0) }))
        }
        for (position, handle) in plan.handles.enumerated() {
            let index = beaconOffset + position
            try sendExtendedParameters(handle: handle, beacon: index, plan: plan)
            try setExtendedData(handle: handle, data(index),
                                scanResponse: slots.scanResponse(of: slots.entries[index].beacon, at: index), label: index)
        }
        step("enable set(s) \(plan.handles.map(String.init).joined(separator: ", "))")
        try controller.send(LESetExtendedAdvertisingEnable(enable: true, sets: plan.handles.map { .init(handle: $0) }))
    }

    /// Set `handle`'s parameters for beacon `index` (its own interval, TX power and address,
    /// else the run's), then the set's random address where it has one.
    /// - Parameter reusing: the set is an idle one of ours (`idle`), as `lastSent` says: only
    ///   what differs is sent.
    private func sendExtendedParameters(handle: UInt8, beacon index: Int, plan: AdvertisingPlan, reusing: Bool = false) throws(HostError) {
        let applied = options.applying(slots.entries[index].parameters)
        let address = slots.address(ofBeacon: index, runs: plan.address)
        let interval = applied.intervalUnits
        let txPower = applied.txPower
        let extendedPDUs = slots.usesExtendedPDUs(index)
        let parameters = LESetExtendedAdvertisingParameters(
            handle: handle, eventProperties: extendedPDUs ? (applied.connectable ? [.connectable] : [])
                : applied.connectable ? .legacyConnectable
                : slots.isScannable(index) ? [.legacyPDU, .scannable] : .legacyNonConnectable,
            primaryIntervalMin: interval, primaryIntervalMax: interval,
            primaryChannelMap: AdvertisingChannelMap(rawValue: slots.entries[index].parameters[.channelMap]?.reduce(0) { $0 | 1 << ($1 - 37) } ?? 7),
            ownAddressType: address != nil ? .randomDevice : .publicDevice,
            txPower: txPower ?? LESetExtendedAdvertisingParameters.noTxPowerPreference,
            primaryPHY: applied.phy.hciValue, secondaryPHY: applied.phy.hciValue,
            sid: Self.sid(ofSet: handle, sharedWithKernel: sharedWithKernel))
        let properties = "0x" + HexText.format([UInt8(parameters.eventProperties.rawValue >> 8),
                                                UInt8(parameters.eventProperties.rawValue & 0xFF)])
        let sent = "interval \(AdvertisingOptions.intervalDescription(units: interval))"
            + (txPower.map { ", TX power \($0) dBm" } ?? "")
        let before = reusing ? lastSent[handle] : nil
        lastSent[handle] = nil
        if let before, before.parameters.parameters == parameters.parameters {
            step("set \(handle): parameters as they were (\(sent))")
        } else {
            step("set \(handle): parameters: properties \(properties) (\(extendedPDUs ? "extended" : "legacy") PDU), "
                 + sent + (applied.phy == .coded ? ", LE Coded PHY" : ""))
            let selected = try controller.send(parameters, context: sent)
            if txPower != nil { step("set \(handle): controller chose TX power \(selected.selectedTxPower) dBm") }
        }
        if let address, address != before?.address {
            step("set \(handle): random address \(address)")
            try controller.send(LESetAdvertisingSetRandomAddress(handle: handle, address: address))
        }
        lastSent[handle] = (parameters, address ?? before?.address)
    }

    /// Puts beacon `index`'s new address on its set (`renewAddress`).
    func putAddress(_ address: BluetoothAddress, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        step("\(slots.label(index)): new address \(address)")
        if plan.mode == .legacy {
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
            try enablingAgain(LESetAdvertisingEnable(enable: true)) { () throws(HostError) in
                try controller.send(LESetRandomAddress(address: address), context: "address \(address)")
            }
            return
        }
        let handle = plan.handle(ofBeacon: index)
        let command = LESetAdvertisingSetRandomAddress(handle: handle, address: address)
        if !addressChangeNeedsDisable {
            do throws(HostError) {
                try controller.send(command, context: "address \(address)")
                return
            } catch let .controllerRefused(_, status, _) where status == .commandDisallowed {
                step("the controller takes a set's address only while the set is disabled: disabling it around each new one")
                addressChangeNeedsDisable = true
            }
        }
        try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
        try enablingAgain(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: handle)])) { () throws(HostError) in
            try controller.send(command, context: "address \(address)")
        }
    }

    /// Gives beacon `index`'s set (legacy advertising: the one) the beacon's parameters now:
    /// disabled for them (a controller takes parameters only then), `new` data with them where
    /// given, enabled again; otherwise its data and address kept. Refused parameters leave it
    /// enabled with the ones it had; refused data after them leaves it disabled (never out with
    /// a new address and the old content).
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan, with new: SlotData?) throws(HostError) {
        try checkParameters(ofBeacon: index, plan: plan)
        if plan.mode == .legacy {
            step("disable advertising for \(slots.label(index))'s new parameters")
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
            try enablingAgain(LESetAdvertisingEnable(enable: true), { () throws(HostError) in try sendLegacyParameters(plan) },
                              then: { () throws(HostError) in
                                  if let new { try setLegacyData(new.data, scanResponse: new.scanResponse, label: index) }
                              }, ofBeacon: index, after: "parameters")
        } else {
            let handle = plan.handle(ofBeacon: index)
            step("set \(handle): disable for \(slots.label(index))'s new parameters")
            try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
            try enablingAgain(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: handle)]), { () throws(HostError) in
                try sendExtendedParameters(handle: handle, beacon: index, plan: plan)
            }, then: { () throws(HostError) in
                if let new { try setExtendedData(handle: handle, new.data, scanResponse: new.scanResponse, label: index) }
            }, ofBeacon: index, after: "parameters")
        }
    }

    func checkParameters(ofBeacon index: Int, plan: AdvertisingPlan) throws(HostError) {
        try checkAddress(ownOf: index)
        try checkCoded(ownOf: index)
        if plan.mode == .legacy { try checkLegacy(ownOf: index) }
    }

    /// Runs `body` on disabled advertising, then `data` (beacon `index`'s new data, after its new
    /// `what`: its address, its parameters; none by default), then sends `enable`. A refused
    /// `body` is undone by enabling again (nothing changed). Refused `data` after it leaves
    /// advertising disabled, off the air rather than out with half of the change, and is
    /// thrown: the next change enables it.
    private func enablingAgain<C: HCICommand>(_ enable: C, _ body: () throws(HostError) -> Void,
                                              then data: () throws(HostError) -> Void = {},
                                              ofBeacon index: Int = 0, after what: String = "") throws(HostError) {
        do {
            try body()
        } catch {
            _ = try? controller.send(enable)
            throw error
        }
        do {
            try data()
        } catch {
            step("\(slots.label(index)) stays off the air until the next try: its new \(what) went in, its data did not")
            throw error
        }
        step("enable again")
        try controller.send(enable)
    }

    private func setExtendedData(handle: UInt8, _ data: [UInt8], scanResponse: [UInt8]?, label: Int) throws(HostError) {
        step("set \(handle): data for \(slots.label(label)): \(HexText.format(data))")
        try controller.setExtendedAdvertisingData(handle: handle, data)
        if let scanResponse {
            step("set \(handle): scan response for \(slots.label(label)): \(HexText.format(scanResponse))")
            try controller.setExtendedScanResponseData(handle: handle, scanResponse)
        }
    }

    /// Beacon `index`'s advertising data.
    private func data(_ index: Int) -> [UInt8] {
        slots.entries[index].beacon.advertisingData.bytes
    }

    /// Sets `data` (beacon `index`'s, or a frame shown in its place) on the set that carries
    /// beacon `index`: its own, or the last when it takes turns.
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        if plan.mode == .legacy {
            try setLegacyData(data, scanResponse: scanResponse, label: index)
        } else {
            try setExtendedData(handle: plan.handle(ofBeacon: index), data, scanResponse: scanResponse, label: index)
        }
    }

    /// Puts `data` on the set that carries beacon `index` from `address`, in one step: a turn's
    /// beacon on the shared set, or a beacon's new identity (an Eddystone-EID's next
    /// identifier) on its own. The set (legacy advertising: the advertising) is disabled, given
    /// the address, then the data, and enabled again, so that no PDU carries the data from
    /// another address or the address with other data. The specification leaves the set's
    /// address, set while it is enabled, to take effect at a moment of the controller's (Core
    /// 5.4, Vol 4, Part E, 7.8.52: "the Controller shall use the new address" for "new
    /// advertising events", with no promise that data given before or after goes with it), so
    /// no order of commands on an enabled set pairs them. A refused address leaves the set as
    /// it was, enabled again (the old address with the old data); a refusal after the address
    /// leaves the set disabled, off the air rather than out under half of its new identity:
    /// the error says so, and the next try enables it again.
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, from address: BluetoothAddress, onSlotOf index: Int,
                 plan: AdvertisingPlan) throws(HostError) {
        if plan.mode == .legacy {
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
            try enablingAgain(LESetAdvertisingEnable(enable: true), { () throws(HostError) in
                step("set random address \(address) for \(slots.label(index))")
                try controller.send(LESetRandomAddress(address: address), context: "address \(address)")
            }, then: { () throws(HostError) in try setLegacyData(data, scanResponse: scanResponse, label: index) },
                              ofBeacon: index, after: "address")
            return
        }
        let handle = plan.handle(ofBeacon: index)
        try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
        try enablingAgain(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: handle)]), { () throws(HostError) in
            step("set \(handle): random address \(address) for \(slots.label(index))")
            try controller.send(LESetAdvertisingSetRandomAddress(handle: handle, address: address), context: "address \(address)")
        }, then: { () throws(HostError) in try setExtendedData(handle: handle, data, scanResponse: scanResponse, label: index) },
                          ofBeacon: index, after: "address")
    }

    /// With more beacons than sets, puts the next beacon on the air.
    /// - Throws: `HostError` if the controller refuses the new data.
    public func rotate() throws(HostError) {
        try slots.rotate(on: self)
    }

    var canShowFrames: Bool { true }

    /// Disables and removes the leftover sets, refusals ignored (one may be gone already).
    func removeLeftovers() {
        guard !leftovers.isEmpty else { return }
        let sets = leftovers.sorted()
        step("remove leftover set(s) \(sets.map(String.init).joined(separator: ", "))")
        _ = try? controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: sets.map { .init(handle: $0) }))
        for handle in sets { _ = try? controller.send(LERemoveAdvertisingSet(handle: handle)) }
        leftovers.removeAll()
    }

    /// A set of its own for the new beacon `index` (nil: none free, or legacy advertising's one
    /// taken, where it joins the turns on the last), its parameters checked; nothing sent but
    /// the question of how many sets there are, where it was not asked yet.
    func slotInBooks(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try checkAddress(ownOf: index)
        try checkCoded(ownOf: index)
        guard plan.mode == .extended else {
            // Legacy advertising's one "set": the beacon's own while no other has it.
            guard plan.handles.isEmpty else { return nil }
            try checkLegacy(ownOf: index)
            return Self.handle(ofSet: 0, sharedWithKernel: sharedWithKernel)
        }
        if numberOfSets == nil {
            let commands = try controller.send(ReadLocalSupportedCommands())
            numberOfSets = try AdvertisingCapabilities.readNumberOfSets(from: controller, commands: commands)
        }
        let used = Set(plan.handles)
        let candidates = (0..<usableSetCount).map { Self.handle(ofSet: $0, sharedWithKernel: sharedWithKernel) }
        // An idle set readied for this kind of PDU first, then one never used, then any free.
        let kind = Self.pduKind(extended: slots.usesExtendedPDUs(index), scannable: slots.isScannable(index))
        let idleHandles = idleSets
        guard let handle = idleHandles.first(where: { !used.contains($0) && Self.pduKind(of: lastSent[$0]?.parameters.eventProperties) == kind })
                ?? candidates.first(where: { !used.contains($0) && !leftovers.contains($0) })
                ?? candidates.first(where: { !used.contains($0) }) else {
            guard plan.handles.isEmpty else { return nil }
            throw .refused(Refusal(nil, .noFreeSet(sets: Int(numberOfSets ?? 1))))
        }
        return handle
    }

    /// A set of its own for the new beacon `index`, on the air (`slotInBooks`'s). In a batch
    /// (`batched`), readied off the air and enabled with the others at the batch's end.
    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        // The sets removed beacons left are disabled before any is chosen to be readied again.
        try disableBatch()
        guard let handle = try slotInBooks(forBeacon: index, plan: plan) else { return nil }
        guard plan.mode == .extended else {
            try startLegacy(AdvertisingPlan(mode: .legacy, handles: [handle], rotating: false, address: plan.address,
                                            addressIsRandom: plan.addressIsRandom), disableFirst: false)
            return handle
        }
        let single = AdvertisingPlan(mode: .extended, handles: [handle], rotating: false, address: plan.address,
                                     addressIsRandom: plan.addressIsRandom)
        let reusing = try prepareForReuse(handle, beacon: index)
        // Ours from its first command: a leftover until it carries the beacon or is removed.
        leftovers.insert(handle)
        do {
            guard batch != nil else {
                try startExtended(single, disableFirst: false, beaconOffset: index)
                leftovers.remove(handle)
                return handle
            }
            try sendExtendedParameters(handle: handle, beacon: index, plan: single, reusing: reusing)
            try setExtendedData(handle: handle, data(index), scanResponse: slots.scanResponse(of: slots.entries[index].beacon, at: index),
                                label: index)
            batch?.on.append(handle)
            return handle
        } catch {
            if (try? controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))) != nil,
               (try? controller.send(LERemoveAdvertisingSet(handle: handle))) != nil {
                leftovers.remove(handle)
            }
            throw error
        }
    }

    /// An idle `handle` is readied as it is for beacon `index` where it was given the same kind
    /// of PDU; else it is removed first (a controller refuses properties that do not fit the
    /// data a set holds).
    /// - Returns: whether the set is readied again as it is (what it was given is known).
    private func prepareForReuse(_ handle: UInt8, beacon index: Int) throws(HostError) -> Bool {
        guard idle.removeValue(forKey: handle) != nil else { return false }
        let kind = Self.pduKind(extended: slots.usesExtendedPDUs(index), scannable: slots.isScannable(index))
        guard Self.pduKind(of: lastSent[handle]?.parameters.eventProperties) != kind else {
            step("set \(handle): readied again (off the air since a beacon left it)")
            return true
        }
        step("remove idle set \(handle) (readied for another kind of PDU)")
        lastSent[handle] = nil
        try controller.send(LERemoveAdvertisingSet(handle: handle))
        leftovers.remove(handle)
        return false
    }

    /// A kind of PDU a set is readied for: legacy or extended, scannable or not.
    private static func pduKind(extended: Bool, scannable: Bool) -> Int { (extended ? 2 : 0) + (scannable ? 1 : 0) }

    private static func pduKind(of properties: AdvertisingEventProperties?) -> Int? {
        properties.map { pduKind(extended: !$0.contains(.legacyPDU), scannable: $0.contains(.scannable)) }
    }

    /// The idle sets still ours (a restore or a stop removes leftovers, idle ones with them).
    private var idleSets: [UInt8] {
        idle = idle.filter { leftovers.contains($0.key) }
        return idle.keys.sorted()
    }

    /// Makes the changes `body` makes as a batch: the sets of the beacons it removes are
    /// disabled by one command and kept a moment (`idle`) for beacons added next, and the sets
    /// of the beacons it adds are readied off the air and enabled by one command at its end,
    /// so a batch of n changes costs about a third of the commands n changes one by one take
    /// (what replaying a crowd needs). Each enable or disable is one command for all, so the
    /// batch is on the air whole or not at all; a batch that fails leaves the sets it readied
    /// as leftovers, off the air. Legacy advertising's one set: the changes one by one.
    func batched<T>(_ body: () throws(HostError) -> T) throws(HostError) -> T {
        guard batch == nil, plan?.mode == .extended else { return try body() }
        batch = ([], [])
        defer { batch = nil }
        do {
            let result = try body()
            try disableBatch()
            try enableBatch()
            return result
        } catch {
            // Disables not sent: those sets still carry the beacons the books get back.
            if let off = batch?.off {
                leftovers.subtract(off)
                for handle in off { idle[handle] = nil }
            }
            throw error
        }
    }

    /// Disables the sets the batch's removed beacons left, by one command; they fall idle.
    private func disableBatch() throws(HostError) {
        guard let off = batch?.off, !off.isEmpty else { return }
        step("disable set(s) \(off.map(String.init).joined(separator: ", "))")
        try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: off.map { .init(handle: $0) }))
        batch?.off = []
        let now = ContinuousClock.now
        for handle in off { idle[handle] = now }
    }

    /// Enables the sets readied for the batch's added beacons, by one command.
    private func enableBatch() throws(HostError) {
        guard let on = batch?.on, !on.isEmpty else { return }
        step("enable set(s) \(on.map(String.init).joined(separator: ", "))")
        try controller.send(LESetExtendedAdvertisingEnable(enable: true, sets: on.map { .init(handle: $0) }))
        batch?.on = []
        leftovers.subtract(on)
    }

    /// Removes the sets idle for longer than `idleHold` (no beacon came for them), refusals
    /// ignored: a set no beacon uses is not held from other programs for long.
    func releaseIdleSets() { releaseIdleSets(now: .now) }

    func releaseIdleSets(now: ContinuousClock.Instant) {
        for handle in idleSets where idle[handle].map({ now - $0 >= Self.idleHold }) ?? false {
            step("remove idle set \(handle)")
            idle[handle] = nil
            if (try? controller.send(LERemoveAdvertisingSet(handle: handle))) != nil { leftovers.remove(handle) }
        }
    }

    /// A removed beacon's set, off the air: removed at the restore (legacy advertising's one:
    /// nothing to remove).
    func leaveSlot(_ handle: UInt8) {
        if plan?.mode != .legacy { leftovers.insert(handle) }
    }

    /// Disables and removes a removed beacon's set; in a batch (`batched`), disabled with the
    /// others and kept idle a moment for a beacon added next.
    func removeSlot(_ handle: UInt8) throws(HostError) {
        guard plan?.mode != .legacy else {
            // The one beacon of legacy advertising (beacons that come and go).
            step("disable advertising (LE Set Advertising Enable 0x00)")
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
            return
        }
        if batch != nil {
            batch?.off.append(handle)
            leftovers.insert(handle)
            return
        }
        step("disable and remove set \(handle)")
        try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
        // Off the air now, as the list says; a set the controller will not remove is tidied later.
        do {
            try controller.send(LERemoveAdvertisingSet(handle: handle))
        } catch .controllerRefused {
            leftovers.insert(handle)
        }
    }

    /// Puts the same beacons back after something knocked them off the air (a controller
    /// reset, another program disabling or removing the sets): whatever is left of them is
    /// disabled and removed, refusals ignored, then the flow runs again.
    /// - Parameters:
    ///   - controller: a new link to the controller, when the old one was lost.
    ///   - controllerWasReset: the host has just reset the controller: nothing is left to
    ///     disable or remove.
    /// - Throws: `HostError` naming the refused step.
    public func restore(on controller: HCIController? = nil, controllerWasReset: Bool = false) throws(HostError) {
        guard let plan else { return }
        if let controller { self.controller = controller }
        rotationIndex = plan.firstTurn ?? 0
        if controllerWasReset { leftovers.removeAll() }
        guard !slots.entries.isEmpty else {
            // Beacons that come and go, none now: only what is left of ours goes.
            if !controllerWasReset { removeLeftovers() }
            return
        }
        if plan.mode == .legacy {
            if !controllerWasReset { _ = try? self.controller.send(LESetAdvertisingEnable(enable: false)) }
            try startLegacy(plan, disableFirst: false)
        } else if controllerWasReset {
            try startExtended(plan, disableFirst: false)
        } else {
            removeLeftovers()
            _ = try? self.controller.send(LESetExtendedAdvertisingEnable(enable: false,
                                                                         sets: plan.handles.map { .init(handle: $0) }))
            for handle in plan.handles { _ = try? self.controller.send(LERemoveAdvertisingSet(handle: handle)) }
            try startExtended(plan, disableFirst: false)
        }
    }

    /// Whether what another program did on the controller takes this advertiser's beacons off
    /// the air: a controller reset, clearing every set, or (by handle) disabling, removing or
    /// reconfiguring one of its sets; with legacy advertising, any change of it.
    public func isDisrupted(by observed: ObservedPacket) -> Disruption? {
        guard let plan, !slots.entries.isEmpty else { return nil }
        return Disruption.of(observed, ours: Set(plan.handles),
                             extended: plan.mode == .extended)
    }

    /// Disables advertising and, with extended advertising, removes the sets.
    /// - Throws: `HostError` if the controller refuses.
    public func stop() throws(HostError) {
        guard let plan else { return }
        guard !slots.entries.isEmpty else {
            removeLeftovers()
            self.plan = nil
            return
        }
        if plan.mode == .legacy {
            step("disable advertising (LE Set Advertising Enable 0x00)")
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
        } else {
            removeLeftovers()
            step("disable set(s) \(plan.handles.map(String.init).joined(separator: ", "))")
            try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: plan.handles.map { .init(handle: $0) }))
            for handle in plan.handles {
                step("remove set \(handle)")
                try controller.send(LERemoveAdvertisingSet(handle: handle))
            }
        }
        self.plan = nil
    }

    private func step(_ text: String) { log?(text) }

    /// The handle of our set number `position` (from 0): counting down from `highestHandle` on
    /// a controller the kernel also drives (it numbers its own up from 0), up from 0 otherwise.
    static func handle(ofSet position: Int, sharedWithKernel: Bool) -> UInt8 {
        sharedWithKernel ? highestHandle - UInt8(position) : UInt8(position)
    }

    /// The advertising SID of our set `handle`: its place in our numbering (`handle(ofSet:)`),
    /// so that each set of ours keeps its own while beacons come and go (at start, the
    /// beacon's place).
    static func sid(ofSet handle: UInt8, sharedWithKernel: Bool) -> UInt8 {
        (sharedWithKernel ? highestHandle &- handle : handle) & 0x0F
    }

    /// A static random address: random, with the two most significant bits set, and the
    /// random part neither all zeros nor all ones (Core Vol 6 Part B 1.3.2.1).
    public static func makeStaticRandomAddress() -> BluetoothAddress {
        BluetoothAddress(0xC000_0000_0000 | randomPart())
    }

    /// A non-resolvable private address: the two most significant bits clear, the random
    /// part neither all zeros nor all ones (Core Vol 6 Part B 1.3.2.2).
    public static func makeNonResolvableAddress() -> BluetoothAddress {
        BluetoothAddress(randomPart())
    }

    /// The 46 random bits of a static or non-resolvable address, neither all zeros nor all ones.
    private static func randomPart() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        while true {
            let random = UInt64.random(in: 0...0x3FFF_FFFF_FFFF, using: &generator)
            if random != 0 && random != 0x3FFF_FFFF_FFFF { return random }
        }
    }
}

extension HCIController {
    /// LE Set Advertising Data with `data` (at most 31 bytes).
    func setLegacyAdvertisingData(_ data: [UInt8]) throws(HostError) {
        try send { () throws(CodecError) in try LESetAdvertisingData(data: data) }
    }

    /// Sends the command `build` makes; one it refuses to make (more data than it holds) is
    /// `.unencodable` with the codec's reason.
    private func send<C: HCICommand>(_ build: () throws(CodecError) -> C) throws(HostError) {
        try send(try HostError.encoding("\(C.self)", build))
    }

    /// LE Set Extended Advertising Data with `data` for set `handle`, in as many fragments as it takes.
    func setExtendedAdvertisingData(handle: UInt8, _ data: [UInt8]) throws(HostError) {
        for fragment in LESetExtendedAdvertisingData.fragments(handle: handle, data: data) { try send(fragment) }
    }

    /// LE Set Scan Response Data with `data` (at most 31 bytes).
    func setLegacyScanResponseData(_ data: [UInt8]) throws(HostError) {
        try send { () throws(CodecError) in try LESetScanResponseData(data: data) }
    }

    /// LE Set Extended Scan Response Data with `data` for set `handle`.
    func setExtendedScanResponseData(handle: UInt8, _ data: [UInt8]) throws(HostError) {
        for fragment in LESetExtendedScanResponseData.fragments(handle: handle, data: data) { try send(fragment) }
    }
}

extension Advertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { true }
}
