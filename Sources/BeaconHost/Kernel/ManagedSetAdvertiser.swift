// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons as advertising instances of the kernel's management interface, added and removed
/// one at a time, beside everyone else's, and changed in place: new data goes to the running
/// instance (Add Extended Advertising Data), which the kernel sets on the controller without
/// taking the instance off the air.
public final class ManagedSetAdvertiser: BeaconSets {
    public let client: MgmtClient
    /// Advertising interval, in 0.625 ms units (on kernels that take one with an instance).
    public let intervalUnits: UInt32
    public var log: ((String) -> Void)?
    /// Called with our instances whenever they change (to record them for `beacon-emit stop`).
    public var instancesChanged: (([UInt8]) -> Void)?

    public private(set) var features: ReadAdvertisingFeatures.ReturnParameters?
    public private(set) var instances: [UInt8: [UInt8]] = [:]
    /// What each of our instances carries (for the record).
    public var instanceData: [UInt8: [UInt8]] { instances }

    public init(client: MgmtClient, intervalUnits: UInt32) {
        self.client = client
        self.intervalUnits = intervalUnits
    }

    /// The scan responses of our instances that have one (an instance is added whole then).
    private var scanResponses: [UInt8: [UInt8]] = [:]

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
    public func add(_ beacon: Beacon, txPower: Int8? = nil) throws(HostError) -> UInt8 {
        let (data, scanResponse) = try beacon.scenarioSetData()
        let features = try client.send(ReadAdvertisingFeatures())
        self.features = features
        guard let instance = features.highestFreeInstance(excluding: Set(instances.keys)) else {
            throw .unsupported("all \(features.maximumInstances) advertising instances of \(client.adapter) are taken "
                               + "(ours: \(instances.keys.sorted().map(String.init).joined(separator: ", ")); others: bluetoothd's "
                               + "or another program's): stop a beacon first")
        }
        if txPower != nil && !features.supportedFlags.contains(.canSetTxPower) {
            throw .unsupported("the kernel cannot set the TX power of \(client.adapter)'s advertising: use --access raw")
        }
        instances[instance] = data
        scanResponses[instance] = scanResponse
        do {
            try put(instance, data: data, txPower: txPower, parameters: true)
        } catch {
            _ = try? remove(instance)
            throw error
        }
        instancesChanged?(instances.keys.sorted())
        return instance
    }

    public func update(_ handle: UInt8, to beacon: Beacon) throws(HostError) {
        guard instances[handle] != nil else { throw .unsupported("instance \(handle) is not ours") }
        let (data, scanResponse) = try beacon.scenarioSetData()
        let before = scanResponses[handle]
        scanResponses[handle] = scanResponse
        do {
            try put(handle, data: data, txPower: nil, parameters: false)
        } catch {
            scanResponses[handle] = before
            throw error
        }
        instances[handle] = data
    }

    /// New parameters for a running instance: the kernel replaces the instance, so its data is
    /// given again (a short gap on the air).
    public func setTxPower(_ handle: UInt8, to dBm: Int8) throws(HostError) {
        guard let data = instances[handle] else { throw .unsupported("instance \(handle) is not ours") }
        guard features?.supportedFlags.contains(.canSetTxPower) == true else {
            throw .unsupported("the kernel cannot set the TX power of \(client.adapter)'s advertising: use --access raw")
        }
        try put(handle, data: data, txPower: dBm, parameters: true)
    }

    public func remove(_ handle: UInt8) throws(HostError) {
        guard instances.removeValue(forKey: handle) != nil else { return }
        scanResponses[handle] = nil
        log?("remove instance \(handle) (Remove Advertising)")
        _ = try client.removeInstance(handle)
        instancesChanged?(instances.keys.sorted())
    }

    public func removeAll() throws(HostError) {
        var first: HostError?
        for handle in instances.keys.sorted() {
            do { try remove(handle) } catch { first = first ?? error }
        }
        if let first { throw first }
    }

    /// Adds (or updates) an instance: parameters then data on kernels that take an interval,
    /// else the whole instance with Add Advertising.
    private func put(_ instance: UInt8, data: [UInt8], txPower: Int8?, parameters: Bool) throws(HostError) {
        try client.putInstance(instance, data: data, scanResponse: scanResponses[instance] ?? [], label: "instance \(instance)",
                               options: AdvertisingOptions(beacons: [], intervalUnits: intervalUnits, txPower: txPower),
                               separately: features?.acceptsIntervals == true, parameters: parameters, log: log)
    }
}
