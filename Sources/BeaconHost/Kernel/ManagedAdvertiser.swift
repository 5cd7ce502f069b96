// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import Foundation

/// Puts beacons on the air as advertising instances of the kernel's management interface,
/// beside everyone else's (bluetoothd's, `btmgmt add-adv`'s): the kernel arbitrates the
/// controller, so nothing another program added is touched.
package final class ManagedAdvertiser {
    public let client: MgmtClient
    public let options: AdvertisingOptions
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?

    /// The beacons, the instances that carry them and the turns they take (the policy both ways in share).
    let slots: BeaconSlots
    public private(set) var plan: AdvertisingPlan? {
        get { slots.plan }
        set { slots.plan = newValue }
    }
    /// What Read Advertising Features said at start.
    public private(set) var features: ReadAdvertisingFeatures.ReturnParameters?
    private var rotationIndex: Int {
        get { slots.rotationIndex }
        set { slots.rotationIndex = newValue }
    }
    /// The beacons advertised now, each one value (changed by `add`, `update`, `remove`).
    public var running: [RunningBeacon] { slots.running }
    /// Called with the instances whenever `add` or `remove` changes them (to record them):
    /// the beacons' and the leftovers.
    public var instancesChanged: (([UInt8]) -> Void)?
    /// Instances this advertiser added that no beacon uses: one whose data a failed `add` could
    /// not set nor remove again, one a reverted change had added. Removed at the next restore
    /// or stop.
    private(set) var leftovers: Set<UInt8> {
        get { slots.leftovers }
        set { slots.leftovers = newValue }
    }
    /// The instances the kernel holds for us: added (their parameters accepted) and not seen
    /// removed nor taken over since. Only these are ever removed or updated in place.
    public private(set) var held: Set<UInt8> = []
    /// Numbers another program wrote (`takenOver`) and has not removed since: never ours again
    /// while the kernel may hide them from its list.
    public private(set) var foreign: Set<UInt8> = []
    /// Called with each warning (an interval or rotation the kernel does not honour as asked).
    public var warn: ((String) -> Void)?

    /// The number a beacon added while off the air has until the restore finds it one (the
    /// kernel numbers instances from 1).
    static let noInstanceYet: UInt8 = 0

    /// With no beacons in `options`, it starts with none (they come later: `add`).
    public init(client: MgmtClient, options: AdvertisingOptions) {
        self.client = client
        self.options = options
        self.slots = BeaconSlots(beacons: options.beacons, parameters: options.beaconParameters, extendedPDUs: options.phy == .coded)
    }

    /// Whether another beacon can have an instance of its own now, as the kernel's features
    /// said at the last read (other programs may take instances since).
    var hasFreeSet: Bool {
        guard let plan, !plan.rotating else { return false }
        return (features?.freeInstanceCount ?? 1) > 0
    }

    /// Whether the kernel takes an interval with the instance (Add Extended Advertising
    /// Parameters); older kernels advertise every instance at their default (1.28 s).
    public var setsInterval: Bool { features?.acceptsIntervals ?? false }

    /// Reads the advertising features and adds one instance per beacon, each at the highest
    /// number the kernel's list proves free (`highestFreeInstance`, read again after each add:
    /// bluetoothd counts up from 1); with fewer free than beacons, the beacons beyond take turns
    /// on the last.
    /// - Throws: `HostError` saying what to do when the request cannot be met; every instance
    ///   added before a failure is removed again.
    @discardableResult
    public func start() throws(HostError) -> AdvertisingPlan {
        if options.address != .publicAddress {
            throw .refused(Refusal(.randomAddress, .kernelChoosesAddress))
        }
        if options.mode == .legacy || options.mode == .extended {
            throw .refused(Refusal(.mode(options.mode), .kernelChoosesCommands))
        }
        try slots.checkBeacons()
        step("read the kernel's advertising features (Read Advertising Features)")
        var features = try client.send(ReadAdvertisingFeatures())
        self.features = features
        if slots.entries.isEmpty && features.maximumInstances == 0 { throw allTaken(features) }
        let extended = slots.entries.indices.filter(slots.usesExtendedPDUs)
        if !extended.isEmpty {
            let longest = extended.map { slots.entries[$0].beacon.advertisingData.bytes.count }.max() ?? 0
            guard !features.legacyAdvertisingOnly, features.acceptsIntervals,
                  longest <= Int(features.maximumAdvertisingDataLength) else {
                let none = features.legacyAdvertisingOnly || !features.acceptsIntervals
                throw .refused(Refusal(.longData, .kernelLacksLongData(
                    adapter: client.adapter, most: none ? nil : Int(features.maximumAdvertisingDataLength), longest: longest)))
            }
        }
        if options.phy == .coded && !features.supportedFlags.contains(.secondaryCoded) {
            throw .refused(Refusal(.codedPHY, .kernelLacksCodedPHY(adapter: client.adapter)))
        }
        if options.txPower != nil && !features.supportedFlags.contains(.canSetTxPower) {
            throw .refused(Refusal(.txPower, .kernelCannotSetTxPower(adapter: client.adapter)))
        }
        if !features.acceptsIntervals {
            step("this kernel takes no interval with an instance: the kernel's default applies, not the interval asked")
        } else if slots.hasScanResponse {
            warn?("scannable advertising (a scan response) through the management API goes at the kernel's default "
                  + "interval (1.28 s), not the interval asked: the kernel fixes a set's type when its interval is given, "
                  + "before the scan response; raw HCI access honours both")
        }
        // An instance per beacon while the kernel has them free; the beacons beyond share the
        // last one, taking turns.
        let count = BeaconSlots.slotCount(beacons: slots.entries.count, available: features.freeInstanceCount)
        if count < slots.entries.count { try slots.checkTurns(from: count - 1) }
        for index in slots.entries.indices { try checkOwn(ofBeacon: index) }
        var plan = AdvertisingPlan(mode: .managed, handles: [], rotating: count < slots.entries.count,
                                   address: nil, addressIsRandom: !options.connectable)
        rotationIndex = max(0, count - 1)
        if features.legacyAdvertisingOnly { plan.kernelInterval = legacyOnlyInterval(count: count) }
        self.plan = plan
        do throws(HostError) {
            for beacon in 0..<count {
                if beacon > 0 { features = try client.send(ReadAdvertisingFeatures()) }
                guard let instance = features.highestFreeInstance(excluding: Set(plan.handles).union(foreign)) else {
                    throw allTaken(features)
                }
                plan.handles.append(instance)
                self.plan = plan
                do {
                    try add(instance: instance, beacon: beacon)
                } catch {
                    if held.contains(instance) { instancesChanged?(plan.handles) }
                    guard beacon > 0, Self.controllerFull(error) else { throw error }
                    // The kernel listed the instance free but the controller has no set left for
                    // it (the kernel's own set 0, or another program's set the kernel does not
                    // list): the beacons from here on take turns on our last instance.
                    plan.handles.removeLast()
                    plan.rotating = true
                    self.plan = plan
                    rotationIndex = beacon - 1
                    try slots.checkTurns(from: beacon - 1)
                    warn?(Self.controllerFullWarning(instance: instance, adapter: client.adapter, shared: plan.handles[beacon - 1],
                                                     beacons: slots.entries.count - beacon + 1))
                    break
                }
                instancesChanged?(plan.handles)
            }
        } catch {
            try? stop()
            throw error
        }
        return plan
    }

    /// On a controller with legacy advertising only, the kernel sends a non-connectable
    /// instance every 100 to 150 ms whatever interval it asks for, and takes turns between
    /// instances (ours and other programs') for each instance's duration: warns where that is
    /// not what was asked, and returns the range on the air (nil for connectable advertising,
    /// which keeps the interval asked for).
    private func legacyOnlyInterval(count: Int) -> ClosedRange<Double>? {
        if count > 1 || slots.entries.count > 1 {
            let seconds = turnSeconds
            if Duration.seconds(Int64(seconds)) != options.rotationPeriod {
                warn?("\(client.adapter) has legacy advertising only: the kernel takes turns between advertising instances "
                      + "in whole seconds, so each beacon's turn is \(seconds) s, not the \(options.rotationPeriod) asked")
            }
        }
        guard !options.connectable else { return nil }
        let range = Self.legacyOnlyUnits
        if !range.contains(options.intervalUnits) {
            let asked = String(options.intervalDescription.prefix { $0 != "=" }).trimmingCharacters(in: .whitespaces)
            warn?("the interval \(asked) cannot be honoured through the management API on \(client.adapter), which has "
                  + "legacy advertising only: the kernel advertises non-connectable instances every 100-150 ms; "
                  + "raw HCI access advertises every \(asked)")
        }
        return Double(range.lowerBound) * 0.625...Double(range.upperBound) * 0.625
    }

    /// The kernel's interval for non-connectable instances on legacy-only controllers, in 0.625 ms units.
    static let legacyOnlyUnits: ClosedRange<UInt32> = 0x00A0...0x00F0

    /// `--rotation` in whole seconds (at least 1): each instance's duration where the kernel
    /// takes turns between instances.
    private var turnSeconds: UInt16 {
        UInt16(clamping: max(1, Int(options.rotationPeriod.inSeconds.rounded())))
    }

    /// The duration passed with each instance: only where the kernel takes turns in software
    /// (legacy-only controllers); elsewhere a duration would end the controller's set.
    private var instanceDuration: UInt16? {
        features?.legacyAdvertisingOnly == true ? turnSeconds : nil
    }

    private func allTaken(_ features: ReadAdvertisingFeatures.ReturnParameters) -> HostError {
        .refused(Refusal(nil, features.maximumInstances == 0
            ? .kernelHasNoInstances(adapter: client.adapter)
            : .instancesTaken(adapter: client.adapter, index: client.index, maximum: Int(features.maximumInstances),
                              taken: features.instances)))
    }

    /// Adds (or, for an instance of ours that exists, updates) `instance` with beacon `beacon`'s
    /// data. Once the kernel accepted its parameters, the instance is ours (held).
    private func add(instance: UInt8, beacon: Int) throws(HostError) {
        do {
            try client.putInstance(instance, data: slots.entries[beacon].beacon.advertisingData.bytes,
                                   scanResponse: slots.scanResponse(of: slots.entries[beacon].beacon, at: beacon) ?? [],
                                   extendedPDU: slots.usesExtendedPDUs(beacon),
                                   label: "beacon \(slots.label(beacon))",
                                   options: options.applying(slots.entries[beacon].parameters), separately: setsInterval,
                                   duration: instanceDuration, log: log)
        } catch {
            if !Self.refusedCreating(error) { held.insert(instance) }
            throw error
        }
        held.insert(instance)
    }

    /// How many beacons can have an instance of their own at once: the kernel's maximum less
    /// the instances others hold (its list read again, now).
    func slotCapacity() throws(HostError) -> Int {
        let features = try client.send(ReadAdvertisingFeatures())
        let others = Set(features.instances).subtracting(claimed)
        return max(0, Int(features.maximumInstances) - others.count)
    }

    /// The beacon settings the management API honours (where the adapter's features allow, as
    /// `checkOwn` finds): the kernel chooses the address, and sets what else it is not given.
    package static let settingSupport = SettingSupport([
        .accepting(.interval), .accepting(.txPower), .accepting(.phy), .accepting(.connectable), .accepting(.pdu),
        .refusing(.address, because: .kernelChoosesAddress), .refusing(.rotateAddress, because: .kernelChoosesAddress),
    ])

    /// Refuses beacon `index`'s own parameters where the kernel would not honour them: no
    /// interval taken with an instance, a scannable instance (the kernel's interval), a TX
    /// power the kernel cannot set.
    private func checkOwn(ofBeacon index: Int) throws(HostError) {
        let own = slots.entries[index].parameters
        if let refusal = Self.settingSupport.refusal(own, beacon: slots.label(index), .kernelSetsItself) { throw .refused(refusal) }
        guard own != .run, let features else { return }
        if own.phy == .coded && !features.supportedFlags.contains(.secondaryCoded) {
            throw .refused(Refusal(.codedPHY, beacon: slots.label(index), .kernelLacksCodedPHY(adapter: client.adapter)))
        }
        guard own.intervalUnits != nil || own.txPower != nil else { return }
        if !features.acceptsIntervals || features.legacyAdvertisingOnly || slots.isScannable(index) {
            throw .refused(Refusal(.ownParameters(own.description), beacon: slots.label(index),
                                   .kernelOwnInterval(adapter: client.adapter, scannable: slots.isScannable(index))))
        }
        if own.txPower != nil && !features.supportedFlags.contains(.canSetTxPower) {
            throw .refused(Refusal(.txPower, beacon: slots.label(index), .kernelCannotSetTxPower(adapter: client.adapter)))
        }
    }

    /// Gives beacon `index`'s instance the beacon's parameters now: its parameters and data
    /// given again, in one step (`data`, new content given with them, is the books' already).
    func setParameters(onSlotOf index: Int, plan: AdvertisingPlan, with data: SlotData?) throws(HostError) {
        try checkOwn(ofBeacon: index)
        let instance = plan.handle(ofBeacon: index)
        step("instance \(instance): new parameters for \(slots.label(index))")
        try add(instance: instance, beacon: index)
    }

    var canShowFrames: Bool { setsInterval }

    /// Refuses beacon `index`'s own parameters as the kernel's features said last.
    func checkParameters(ofBeacon index: Int, plan: AdvertisingPlan) throws(HostError) {
        try checkOwn(ofBeacon: index)
    }

    /// Off the air, the new beacon `index` gets no instance yet: the restore finds it one. Its
    /// parameters are checked as the kernel's features said last.
    func slotInBooks(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        try checkOwn(ofBeacon: index)
        return Self.noInstanceYet
    }

    /// An instance of its own for the new beacon `index`.
    func addSlot(forBeacon index: Int, plan: AdvertisingPlan) throws(HostError) -> UInt8? {
        // Refused before anything is sent, as the kernel's features said last.
        try checkOwn(ofBeacon: index)
        let features = try client.send(ReadAdvertisingFeatures())
        self.features = features
        try checkOwn(ofBeacon: index)
        guard let instance = features.highestFreeInstance(excluding: Set(plan.handles).union(leftovers).union(foreign)) else {
            // None free: it takes turns on our last, where there is one.
            guard plan.handles.isEmpty else { return nil }
            throw allTaken(features)
        }
        do {
            try add(instance: instance, beacon: index)
        } catch {
            // No room on the controller for a set the kernel lists free: it takes turns on our
            // last, where there is one, as when none is free.
            if Self.controllerFull(error), let shared = plan.handles.last {
                warn?(Self.controllerFullWarning(instance: instance, adapter: client.adapter, shared: shared,
                                                 beacons: slots.entries.count - plan.handles.count + 1))
                return nil
            }
            // Once the kernel took the instance (its parameters), it is ours until removed.
            if !Self.refusedCreating(error) {
                leftovers.insert(instance)
                instancesChanged?(plan.handles + leftovers.sorted())
                if (try? client.removeInstance(instance)) != nil {
                    leftovers.remove(instance)
                    held.remove(instance)
                    instancesChanged?(plan.handles + leftovers.sorted())
                }
            }
            throw error
        }
        instancesChanged?(plan.handles + [instance] + leftovers.sorted())
        return instance
    }

    /// Whether the kernel refused a new instance for want of room on the controller (No
    /// Resources): the kernel counts instances, not the controller's sets, and a set it keeps for
    /// itself (set 0, its default advertising data, made when LE is switched on while powered)
    /// or one another program holds beside the management API is not among them.
    static func controllerFull(_ error: HostError) -> Bool {
        guard refusedCreating(error), case let .managementRefused(_, status, _, _) = error else { return false }
        return status == .noResources
    }

    static func controllerFullWarning(instance: UInt8, adapter: String, shared: UInt8, beacons: Int) -> String {
        "\(adapter) has no room for instance \(instance) though the kernel lists it free (No Resources: the controller's "
            + "advertising sets are taken, some by the kernel or another program): \(beacons) beacons take turns on "
            + "instance \(shared)"
    }

    /// Whether the kernel refused the command that creates an instance: nothing was added.
    static func refusedCreating(_ error: HostError) -> Bool {
        guard case let .managementRefused(opcode, _, _, _) = error else { return false }
        return opcode == .addExtendedAdvertisingParameters || opcode == .addAdvertising
    }

    /// Removes a removed beacon's instance, while it is ours.
    func removeSlot(_ instance: UInt8) throws(HostError) {
        if held.contains(instance) {
            step("remove instance \(instance) (Remove Advertising)")
            _ = try client.removeInstance(instance)
            held.remove(instance)
        }
        instancesChanged?((plan?.handles ?? []) + leftovers.sorted())
    }

    /// A removed beacon's instance, off the air: what is still ours goes at the restore.
    func leaveSlot(_ instance: UInt8) {
        if held.contains(instance) { leftovers.insert(instance) }
    }

    /// A kernel's instance takes no address of ours (`checkOwn` refuses one): nothing to renew.
    func putAddress(_ address: BluetoothAddress, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        throw .refused(Refusal(.ownAddress, beacon: slots.label(index), .kernelChoosesAddress))
    }

    /// A kernel's instance takes no address of ours (`checkOwn` refuses one before any turn).
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, from address: BluetoothAddress, onSlotOf index: Int,
                 plan: AdvertisingPlan) throws(HostError) {
        throw .refused(Refusal(.ownAddress, beacon: slots.label(index), .kernelChoosesAddress))
    }

    /// Removes the leftover instances that are still ours; one that cannot be removed stays a leftover.
    func removeLeftovers() {
        for instance in leftovers.sorted() {
            guard held.contains(instance) else {
                leftovers.remove(instance)
                continue
            }
            step("remove leftover instance \(instance) (Remove Advertising)")
            if (try? client.removeInstance(instance)) != nil {
                leftovers.remove(instance)
                held.remove(instance)
            }
        }
    }

    /// Every instance that is ours now: the beacons' and the leftovers, while the kernel holds them.
    public var ours: Set<UInt8> { held }

    /// The numbers whose writes by others matter: ours, and the beacons' numbers while they are
    /// off the air (a program that takes one meanwhile makes the restore move the beacon).
    public var claimed: Set<UInt8> { held.union(plan?.handles ?? []).subtracting([Self.noInstanceYet]) }

    /// What each beacon's own instance carries (for the record; not the one beacons take turns on).
    public var instanceData: [UInt8: [UInt8]] {
        guard let plan else { return [:] }
        var data: [UInt8: [UInt8]] = [:]
        for (position, instance) in plan.handles.enumerated()
        where slots.entries.indices.contains(position) && slots.hasOwnSlot(position) && instance != Self.noInstanceYet {
            data[instance] = slots.entries[position].beacon.advertisingData.bytes
        }
        return data
    }

    /// The kernel removed `instance` (Advertising Removed: another program's Remove, a power
    /// off, a timeout): it is no longer ours to remove or update; a restore adds it again.
    public func removedByKernel(_ instance: UInt8) {
        held.remove(instance)
        foreign.remove(instance)
        if leftovers.remove(instance) != nil { instancesChanged?((plan?.handles ?? []) + leftovers.sorted()) }
    }

    /// The adapter went away: every instance went with it.
    public func adapterGone() {
        held = []
        foreign = []
        leftovers = []
    }

    /// Another program wrote `instance` (`TakeoverWatch`): it is theirs now. It is forgotten,
    /// never removed; the restore puts its beacon on another free instance.
    public func takenOver(_ instance: UInt8) {
        held.remove(instance)
        foreign.insert(instance)
        leftovers.remove(instance)
        instancesChanged?((plan?.handles.filter { $0 != instance } ?? []) + leftovers.sorted())
    }

    /// New data (beacon `index`'s, or a frame shown in its place) for the running instance that
    /// carries beacon `index` (the one instance when the beacons take turns): Add Extended
    /// Advertising Data where the kernel takes parameters apart, else the whole instance again.
    func setData(_ data: [UInt8], scanResponse: [UInt8]?, onSlotOf index: Int, plan: AdvertisingPlan) throws(HostError) {
        let instance = plan.handle(ofBeacon: index)
        // Not ours now (taken over, or removed by the kernel): the restore puts the beacon back.
        guard held.contains(instance) else {
            throw .refused(Refusal(nil, .instanceNotOurs(instance)))
        }
        try client.putInstance(instance, data: data, scanResponse: scanResponse ?? [], extendedPDU: slots.usesExtendedPDUs(index),
                               label: "beacon \(slots.label(index))", options: options.applying(slots.entries[index].parameters),
                               separately: setsInterval, parameters: false, log: log)
    }

    /// Puts the beacons back: an instance the kernel still holds for us (the controller reset
    /// under the kernel, which still counts it as on the air) is updated in place, and one of
    /// ours that cannot be updated is removed and added afresh. A beacon whose instance the
    /// kernel removed goes back on the same number only while the list proves it free; one
    /// whose number another program wrote (taken over, or added there since), or that the list
    /// cannot prove free, moves to the highest number it proves free.
    /// - Throws: `HostError` when the kernel refuses, or no instance is free.
    public func restore() throws(HostError) {
        guard var plan else { return }
        removeLeftovers()
        rotationIndex = plan.firstTurn ?? 0
        var features: ReadAdvertisingFeatures.ReturnParameters? = nil
        var moved = false
        for position in plan.handles.indices {
            var instance = plan.handles[position]
            if !held.contains(instance) {
                var current: ReadAdvertisingFeatures.ReturnParameters
                if let features { current = features } else { current = try client.send(ReadAdvertisingFeatures()) }
                if foreign.contains(instance) || !current.provablyFreeInstances.contains(instance) {
                    let others = Set(plan.handles.enumerated().filter { $0.offset != position }.map(\.element))
                    guard let free = current.highestFreeInstance(excluding: others.union(foreign)) else {
                        throw allTaken(current)
                    }
                    step(instance == Self.noInstanceYet ? "beacon \(position + 1), added while off the air, goes on instance \(free)"
                         : "instance \(instance) is not ours to take back (another program's, or not proven free): "
                           + "beacon \(position + 1) moves to instance \(free)")
                    instance = free
                    plan.handles[position] = free
                    self.plan = plan
                    moved = true
                }
                current.instances.append(instance)
                features = current
            }
            do {
                try add(instance: instance, beacon: position)
            } catch .managementRefused where held.contains(instance) {
                _ = try? client.removeInstance(instance)
                held.remove(instance)
                try add(instance: instance, beacon: position)
            }
        }
        if moved { instancesChanged?(plan.handles + leftovers.sorted()) }
    }

    /// With more beacons than free instances, puts the next beacon's data on the one instance.
    public func rotate() throws(HostError) {
        try slots.rotate(on: self)
    }

    /// Removes this advertiser's instances, and no other. One already gone (removed by the
    /// kernel at power off) is success.
    /// - Throws: `HostError` for any other refusal, after trying every instance; the plan
    ///   keeps the instances that are left.
    public func stop() throws(HostError) {
        guard var plan else { return }
        removeLeftovers()
        var failure: HostError? = nil
        for instance in plan.handles {
            guard held.contains(instance) else {
                // Removed by the kernel, or another program's now: not ours to remove.
                plan.handles.removeAll { $0 == instance }
                continue
            }
            step("remove instance \(instance) (Remove Advertising)")
            do {
                try client.removeInstance(instance)
            } catch {
                failure = error
                continue
            }
            plan.handles.removeAll { $0 == instance }
            held.remove(instance)
        }
        self.plan = failure == nil ? nil : plan
        instancesChanged?(plan.handles.filter { held.contains($0) } + leftovers.sorted())
        if let failure { throw failure }
    }

    private func step(_ text: String) { log?(text) }
}

extension ManagedAdvertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { false }
}
