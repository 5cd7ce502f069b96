// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons as advertising instances of the kernel's management interface, added and removed
/// one at a time, beside everyone else's, and changed in place: new data goes to the running
/// instance (Add Extended Advertising Data), which the kernel sets on the controller without
/// taking the instance off the air.
///
/// Kept on the air by `ManagedSession` as `advertise`'s instances are: an instance the kernel
/// removed or another program took is no longer ours, and the restore puts its beacon back, on
/// the same number while the kernel's list proves it free, else on the highest it proves free.
/// A beacon's handle (what `add` returns) stays its name when its instance moves.
package final class ManagedSetAdvertiser: BeaconSets, ManagedAdvertising {
    public let client: MgmtClient
    /// Advertising interval, in 0.625 ms units (on kernels that take one with an instance).
    public let intervalUnits: UInt32
    public var log: ((String) -> Void)?
    /// Called with our instances whenever they change (to record them for `beacon-emit stop`).
    public var instancesChanged: (([UInt8]) -> Void)?

    public private(set) var features: ReadAdvertisingFeatures.ReturnParameters?

    /// A beacon's instance (0 while it has none) and what goes on it.
    private struct Slot {
        var instance: UInt8
        var data: [UInt8]
        var scanResponse: [UInt8]
        var parameters: BeaconParameters
    }

    /// The beacons by handle.
    private var slots: [UInt8: Slot] = [:]
    /// The instances the kernel holds for us: added and not seen removed nor taken over since.
    public private(set) var ours: Set<UInt8> = []
    /// Numbers another program wrote and has not removed since: never ours again meanwhile.
    private var foreign: Set<UInt8> = []
    /// Instances of ours no beacon uses (a beacon removed while off the air, or one whose
    /// Remove failed): removed at the next restore or stop.
    private var leftovers: Set<UInt8> = []
    /// While the beacons are off the air (`SupervisedSets`): changes go into the books only,
    /// and the restore puts them on the air.
    var holding = false

    public init(client: MgmtClient, intervalUnits: UInt32) {
        self.client = client
        self.intervalUnits = intervalUnits
    }

    public var plan: AdvertisingPlan? { nil }
    public var rotationPeriod: Duration { .seconds(1) }
    public func rotate() throws(HostError) {}

    /// What each of our beacons' instances carries (for the record).
    public var instanceData: [UInt8: [UInt8]] {
        Dictionary(slots.values.filter { ours.contains($0.instance) }.map { ($0.instance, $0.data) }) { first, _ in first }
    }

    public var claimed: Set<UInt8> { ours.union(slots.values.map(\.instance)) }

    public func carriesBeacon(_ instance: UInt8) -> Bool { slots.values.contains { $0.instance == instance } }

    /// As the kernel's features said at the last add (other programs may take instances).
    public var hasFreeSet: Bool { (features?.freeInstanceCount ?? 1) > 0 }

    /// Reads what the kernel offers.
    /// - Throws: `HostError` when it offers no instances.
    public func prepare() throws(HostError) {
        log?("read the kernel's advertising features (Read Advertising Features)")
        let features = try client.send(ReadAdvertisingFeatures())
        self.features = features
        guard features.maximumInstances > 0 else {
            throw .unsupported("\(client.adapter) offers no advertising instances through the management API: use --access raw")
        }
        if !features.acceptsIntervals {
            log?("this kernel takes no interval with an instance: the kernel's default applies")
        }
    }

    @discardableResult
    public func add(_ beacon: Beacon, parameters: BeaconParameters = .run) throws(HostError) -> UInt8 {
        let (data, scanResponse) = try beacon.scenarioSetData()
        try check(parameters)
        var slot = Slot(instance: 0, data: data, scanResponse: scanResponse ?? [], parameters: parameters)
        if holding {
            // Off the air: the restore finds it an instance.
            let handle = freeHandle(preferring: 1)
            slots[handle] = slot
            return handle
        }
        let features = try client.send(ReadAdvertisingFeatures())
        self.features = features
        guard let instance = features.highestFreeInstance(excluding: claimed.union(leftovers).union(foreign)) else {
            throw .unsupported("all \(features.maximumInstances) advertising instances of \(client.adapter) are taken "
                               + "(ours: \(ours.sorted().map(String.init).joined(separator: ", ")); others: bluetoothd's "
                               + "or another program's): stop a beacon first")
        }
        slot.instance = instance
        do {
            try put(slot, parameters: true)
        } catch {
            // Once the kernel took the instance (its parameters), it is ours until removed.
            if ours.contains(instance) {
                if (try? client.removeInstance(instance)) != nil { ours.remove(instance) } else { leftovers.insert(instance) }
            }
            changed()
            throw error
        }
        let handle = freeHandle(preferring: instance)
        slots[handle] = slot
        changed()
        return handle
    }

    public func update(_ handle: UInt8, to beacon: Beacon) throws(HostError) {
        guard let before = slots[handle] else { throw .unsupported("instance \(handle) is not ours") }
        let (data, scanResponse) = try beacon.scenarioSetData()
        var slot = before
        slot.data = data
        slot.scanResponse = scanResponse ?? []
        if !holding && ours.contains(slot.instance) {
            // A scan response that comes or goes changes the instance's type: added whole again.
            try put(slot, parameters: slot.scanResponse.isEmpty != before.scanResponse.isEmpty)
        }
        // Not ours now (removed, or taken over): the restore puts the new fields on the air.
        slots[handle] = slot
        changed()
    }

    /// New parameters for a running instance: the kernel takes parameters only when an
    /// instance is added, so it is added again, its data with it (a short gap on the air).
    public func setParameters(_ handle: UInt8, to parameters: BeaconParameters) throws(HostError) {
        guard var slot = slots[handle] else { throw .unsupported("instance \(handle) is not ours") }
        try check(parameters)
        slot.parameters = parameters
        if !holding && ours.contains(slot.instance) { try put(slot, parameters: true) }
        slots[handle] = slot
    }

    /// Refuses parameters the kernel does not take with an instance (as its features say).
    private func check(_ parameters: BeaconParameters) throws(HostError) {
        if let address = parameters.address, address != .publicAddress {
            throw .unsupported("address \(address.text): through the management API the kernel picks the address beacons go "
                               + "out from (a new non-resolvable random one for each instance): a beacon's own address "
                               + "needs --access raw")
        }
        if parameters.txPower != nil, features?.supportedFlags.contains(.canSetTxPower) == false {
            throw .unsupported("the kernel cannot set the TX power of \(client.adapter)'s advertising: use --access raw")
        }
        if parameters.intervalUnits != nil, features?.acceptsIntervals == false {
            throw .unsupported("this kernel takes no interval with an advertising instance (Add Extended Advertising "
                               + "Parameters): a beacon's own interval needs --access raw")
        }
    }

    /// The kernel picks an instance's address: never ours to renew.
    public func renewAddress(_ handle: UInt8) throws(HostError) -> BluetoothAddress {
        throw .unsupported("through the management API the kernel picks the address beacons go out from: "
                           + "a beacon's own address needs --access raw")
    }

    public func remove(_ handle: UInt8) throws(HostError) {
        guard let slot = slots.removeValue(forKey: handle) else { return }
        guard ours.contains(slot.instance) else { return changed() }
        if holding {
            leftovers.insert(slot.instance)
            return
        }
        log?("remove instance \(slot.instance) (Remove Advertising)")
        do {
            _ = try client.removeInstance(slot.instance)
        } catch {
            leftovers.insert(slot.instance)
            throw error
        }
        ours.remove(slot.instance)
        changed()
    }

    public func removeAll() throws(HostError) {
        var first: HostError?
        for handle in slots.keys.sorted() {
            do { try remove(handle) } catch { first = first ?? error }
        }
        if !holding { removeLeftovers() }
        if let first { throw first }
    }

    public func stop() throws(HostError) { try removeAll() }

    public func removedByKernel(_ instance: UInt8) {
        ours.remove(instance)
        foreign.remove(instance)
        leftovers.remove(instance)
        changed()
    }

    public func adapterGone() {
        ours = []
        foreign = []
        leftovers = []
    }

    public func takenOver(_ instance: UInt8) {
        ours.remove(instance)
        foreign.insert(instance)
        leftovers.remove(instance)
        changed()
    }

    /// Puts the beacons back as the books have them: an instance the kernel still holds for us
    /// is set again in place (removed and added afresh if the kernel refuses); a beacon whose
    /// instance the kernel removed goes back on the same number while the list proves it free,
    /// else on the highest number it proves free (never one another program wrote).
    /// - Throws: `HostError` when the kernel refuses, or no instance is free.
    public func restore() throws(HostError) {
        removeLeftovers()
        var features: ReadAdvertisingFeatures.ReturnParameters?
        for handle in slots.keys.sorted() {
            guard var slot = slots[handle] else { continue }
            if !ours.contains(slot.instance) {
                var current: ReadAdvertisingFeatures.ReturnParameters
                if let features { current = features } else { current = try client.send(ReadAdvertisingFeatures()) }
                self.features = current
                if foreign.contains(slot.instance) || !current.provablyFreeInstances.contains(slot.instance) {
                    let others = Set(slots.filter { $0.key != handle }.map(\.value.instance))
                    guard let free = current.highestFreeInstance(excluding: others.union(foreign)) else {
                        throw .unsupported("no advertising instance of \(client.adapter) is free for the beacon of "
                                           + "instance \(slot.instance): other programs took them")
                    }
                    log?(slot.instance == 0 ? "a beacon added while off the air goes on instance \(free)"
                         : "instance \(slot.instance) is not ours to take back: its beacon moves to instance \(free)")
                    slot.instance = free
                    slots[handle] = slot
                }
                current.instances.append(slot.instance)
                features = current
            }
            do {
                try put(slot, parameters: true)
            } catch .managementRefused where ours.contains(slot.instance) {
                _ = try? client.removeInstance(slot.instance)
                ours.remove(slot.instance)
                try put(slot, parameters: true)
            }
        }
        changed()
    }

    /// Removes the leftover instances that are still ours; one that cannot be removed stays.
    private func removeLeftovers() {
        for instance in leftovers.sorted() {
            if ours.contains(instance) {
                log?("remove leftover instance \(instance) (Remove Advertising)")
                guard (try? client.removeInstance(instance)) != nil else { continue }
                ours.remove(instance)
            }
            leftovers.remove(instance)
        }
    }

    /// `preferred` when no beacon has that handle, else the lowest free one.
    private func freeHandle(preferring preferred: UInt8) -> UInt8 {
        if slots[preferred] == nil { return preferred }
        return (1...UInt8.max).first { slots[$0] == nil } ?? preferred
    }

    private func changed() {
        instancesChanged?(ours.sorted())
    }

    /// Adds (or updates) an instance: parameters then data on kernels that take an interval,
    /// else the whole instance with Add Advertising. Once the kernel took it, it is ours.
    private func put(_ slot: Slot, parameters: Bool) throws(HostError) {
        do {
            try client.putInstance(slot.instance, data: slot.data, scanResponse: slot.scanResponse,
                                   label: "instance \(slot.instance)",
                                   options: AdvertisingOptions(beacons: [],
                                                               intervalUnits: slot.parameters.intervalUnits ?? intervalUnits,
                                                               txPower: slot.parameters.txPower),
                                   separately: features?.acceptsIntervals == true, parameters: parameters, log: log)
        } catch {
            if parameters && !ManagedAdvertiser.refusedCreating(error) { ours.insert(slot.instance) }
            throw error
        }
        ours.insert(slot.instance)
    }
}
