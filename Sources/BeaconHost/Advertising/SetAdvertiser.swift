// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons put on and taken off the air one by one, each on an advertising set of its own,
/// and changed in place while they advertise: new data is set on the running set (no disable,
/// no enable, no gap on the air); a new TX power needs the set's parameters, which a
/// controller takes only while the set is disabled, so that one is a short gap.
///
/// A controller with legacy advertising only has one "set": one beacon at a time.
package final class SetAdvertiser {
    public private(set) var controller: HCIController
    /// Advertising interval, in 0.625 ms units.
    public let intervalUnits: UInt32
    /// Sets are numbered down from `Advertiser.highestHandle` on a controller the kernel also
    /// drives (it numbers its own up from 0), up from 0 on one of our own.
    public let sharedWithKernel: Bool
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?

    public private(set) var extended = false
    public private(set) var numberOfSets = 1
    /// Our sets: handle to the beacon's data and its own parameters (a `static` address as
    /// the address made up for it).
    public private(set) var sets: [UInt8: (data: [UInt8], parameters: BeaconParameters)] = [:]
    /// The addresses made up for sets whose beacon asked for one (`static`, `non-resolvable`):
    /// kept while the set is ours, through restores and new parameters, until renewed.
    private var madeAddresses: [UInt8: (kind: AdvertisingOptions.Address, address: BluetoothAddress)] = [:]
    /// The controller refused a set's new random address while the set was enabled (before
    /// Core 5.3 it may): renewals disable the set around it from then on.
    private var addressChangeNeedsDisable = false
    /// The scan responses of our scannable sets (their parameters say scannable).
    private var scanResponses: [UInt8: [UInt8]] = [:]
    /// While the beacons are off the air (a reset, a hardware error: `SupervisedSets`), changes
    /// go into the books only, and the restore puts the books on the air.
    var holding = false

    public init(controller: HCIController, intervalUnits: UInt32, sharedWithKernel: Bool) {
        self.controller = controller
        self.intervalUnits = intervalUnits
        self.sharedWithKernel = sharedWithKernel
    }

    /// Resets a controller of our own, then reads whether it has extended advertising and how
    /// many sets.
    public func prepare(resetting: Bool) throws(HostError) {
        if resetting {
            log?("reset the controller (HCI Reset)")
            try controller.send(Reset())
        }
        let commands = try controller.send(ReadLocalSupportedCommands())
        extended = false
        if commands.supportsExtendedAdvertising {
            extended = try controller.send(LEReadLocalSupportedFeatures()).features.contains(.extendedAdvertising)
        }
        numberOfSets = extended ? try AdvertisingCapabilities.readNumberOfSets(from: controller, commands: commands) : 1
        log?(extended ? "extended advertising, \(numberOfSets) sets" : "legacy advertising only: one beacon at a time")
    }

    /// Puts a beacon on the air on a free set.
    /// - Returns: its set's handle.
    /// - Throws: `HostError` when every set is taken or the controller refuses; nothing of
    ///   the new set is left behind.
    @discardableResult
    public func add(_ beacon: Beacon, parameters: BeaconParameters = .run) throws(HostError) -> UInt8 {
        let (data, scanResponse) = try beacon.scenarioSetData()
        guard let handle = freeHandle() else {
            throw .unsupported(extended
                ? "all \(numberOfSets) advertising sets of the controller are on the air: stop a beacon first"
                : "this controller has legacy advertising only, which carries one beacon at a time: stop the other first")
        }
        try check(parameters)
        scanResponses[handle] = scanResponse
        sets[handle] = (data, resolved(parameters, for: handle))
        guard !holding else { return handle }
        do {
            try program(handle)
        } catch {
            try? remove(handle)
            throw error
        }
        return handle
    }

    /// Refuses parameters this controller cannot take: a TX power or an interval over 10.24 s
    /// without extended advertising.
    private func check(_ parameters: BeaconParameters) throws(HostError) {
        if parameters.txPower != nil && !extended {
            throw .unsupported("a TX power needs extended advertising, which this controller lacks")
        }
        let interval = parameters.intervalUnits ?? intervalUnits
        if !extended && !AdvertisingOptions.intervalRange(legacy: true).contains(interval) {
            throw .unsupported("the interval: this controller has legacy advertising only, which takes "
                               + AdvertisingOptions.intervalRangeDescription(legacy: true))
        }
    }

    /// `parameters` with a `static` address as the one made up for set `handle` (made now if
    /// it has none), and `public` as none.
    private func resolved(_ parameters: BeaconParameters, for handle: UInt8) -> BeaconParameters {
        var parameters = parameters
        switch parameters.address {
        case let kind? where kind.isMadeUp:
            let kept = madeAddresses[handle].flatMap { $0.kind == kind ? $0.address : nil }
            let made = kept ?? kind.make()!
            madeAddresses[handle] = (kind, made)
            parameters.address = .random(made)
        case .publicAddress?:
            parameters.address = nil
        default:
            madeAddresses[handle] = nil
        }
        return parameters
    }

    /// The random address a set advertises from; nil for the public address.
    private static func randomAddress(_ parameters: BeaconParameters) -> BluetoothAddress? {
        if case let .random(address)? = parameters.address { return address }
        return nil
    }

    /// Puts set `handle` on the air as the books have it: parameters, data, enable.
    private func program(_ handle: UInt8) throws(HostError) {
        guard let (data, parameters) = sets[handle] else { return }
        let scanResponse = scanResponses[handle]
        if extended {
            try setParameters(handle, parameters)
            try setData(handle, data, scanResponse: scanResponse)
            log?("enable set \(handle)")
            try controller.send(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: handle)]))
        } else {
            try setLegacyParameters(handle, parameters)
            try setData(handle, data, scanResponse: scanResponse)
            log?("enable advertising")
            try controller.send(LESetAdvertisingEnable(enable: true))
        }
    }

    /// Changes a running beacon's data in place: the set stays enabled.
    public func update(_ handle: UInt8, to beacon: Beacon) throws(HostError) {
        guard sets[handle] != nil else { throw .unsupported("set \(handle) is not ours") }
        let (data, scanResponse) = try beacon.scenarioSetData()
        guard (scanResponse == nil) == (scanResponses[handle] == nil) else {
            throw .unsupported("set \(handle): a beacon gains or loses its scan response only when it is advertised again "
                               + "(stop, then advertise)")
        }
        if !holding { try setData(handle, data, scanResponse: scanResponse) }
        sets[handle]?.data = data
        scanResponses[handle] = scanResponse
    }

    /// Changes a running beacon's parameters: disable, parameters, enable (a controller takes
    /// parameters only while the set, or legacy advertising, is disabled), its data kept.
    public func setParameters(_ handle: UInt8, to parameters: BeaconParameters) throws(HostError) {
        guard sets[handle] != nil else { throw .unsupported("set \(handle) is not ours") }
        try check(parameters)
        let parameters = resolved(parameters, for: handle)
        guard !holding else {
            sets[handle]?.parameters = parameters
            return
        }
        log?(extended ? "disable set \(handle) for its new parameters" : "disable advertising for its new parameters")
        try whileDisabled(handle) { () throws(HostError) in
            try extended ? setParameters(handle, parameters) : setLegacyParameters(handle, parameters)
        }
        sets[handle]?.parameters = parameters
    }

    /// Gives set `handle`, whose beacon's address is made up, a new one of the same kind, on the
    /// running set: in place where the controller allows it (Core 5.3 on: non-connectable
    /// advertising keeps going, from the new address at its next event); where it refuses, the
    /// set disabled around it (a gap of a command's round trip), and so from then on.
    /// - Returns: the new address.
    @discardableResult
    public func renewAddress(_ handle: UInt8) throws(HostError) -> BluetoothAddress {
        guard sets[handle] != nil, let made = madeAddresses[handle] else {
            throw .unsupported("set \(handle) has no address of its own made up (address: static or non-resolvable)")
        }
        let address = made.kind.make()!
        madeAddresses[handle] = (made.kind, address)
        sets[handle]?.parameters.address = .random(address)
        guard !holding else { return address }
        log?("set \(handle): new address \(address)")
        guard extended else {
            // Legacy advertising's one random address is taken only while advertising is off.
            try whileDisabled(handle) { () throws(HostError) in
                try controller.send(LESetRandomAddress(address: address), context: "address \(address)")
            }
            return address
        }
        if !addressChangeNeedsDisable {
            do {
                try setAddress(handle, address)
                return address
            } catch let .controllerRefused(_, status, _) where status == .commandDisallowed {
                log?("the controller takes a set's address only while the set is disabled: disabling it around each new one")
                addressChangeNeedsDisable = true
            }
        }
        try whileDisabled(handle) { () throws(HostError) in try setAddress(handle, address) }
        return address
    }

    /// Disables set `handle` (legacy advertising, without extended), does `body`, enables it again.
    private func whileDisabled(_ handle: UInt8, _ body: () throws(HostError) -> Void) throws(HostError) {
        if extended {
            try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
            try body()
            try controller.send(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: handle)]))
        } else {
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
            try body()
            try controller.send(LESetAdvertisingEnable(enable: true))
        }
    }

    /// Set `handle`'s random address (LE Set Advertising Set Random Address).
    private func setAddress(_ handle: UInt8, _ address: BluetoothAddress) throws(HostError) {
        try controller.send(LESetAdvertisingSetRandomAddress(handle: handle, address: address), context: "address \(address)")
    }

    /// Takes a beacon off the air and gives its set back.
    public func remove(_ handle: UInt8) throws(HostError) {
        guard sets[handle] != nil else { return }
        sets[handle] = nil
        scanResponses[handle] = nil
        madeAddresses[handle] = nil
        guard !holding else { return }
        if extended {
            log?("disable and remove set \(handle)")
            try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
            try controller.send(LERemoveAdvertisingSet(handle: handle))
        } else {
            log?("disable advertising")
            try controller.sendDisable(LESetAdvertisingEnable(enable: false))
        }
    }

    /// Takes every beacon off the air, trying each even when one fails; the first error is thrown.
    public func removeAll() throws(HostError) {
        var first: HostError?
        for handle in sets.keys.sorted() {
            do { try remove(handle) } catch { first = first ?? error }
        }
        if let first { throw first }
    }

    /// Puts every set of the books back on the air after something knocked them off: what is
    /// left of them is disabled and removed first (refusals ignored) unless the controller was
    /// just reset, then each is programmed again.
    public func restore(on controller: HCIController? = nil, controllerWasReset: Bool) throws(HostError) {
        if let controller { self.controller = controller }
        let handles = sets.keys.sorted()
        if !controllerWasReset {
            if extended {
                _ = try? self.controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: handles.map { .init(handle: $0) }))
                for handle in handles { _ = try? self.controller.send(LERemoveAdvertisingSet(handle: handle)) }
            } else {
                _ = try? self.controller.send(LESetAdvertisingEnable(enable: false))
            }
        }
        log?("put back set(s) \(handles.map(String.init).joined(separator: ", "))")
        for handle in handles { try program(handle) }
    }

    /// Whether what another program did on the controller takes our sets off the air: a
    /// controller reset, clearing every set, or (by handle) disabling, removing or rewriting one
    /// of ours; with legacy advertising, any change of it.
    public func isDisrupted(by observed: ObservedPacket) -> Disruption? {
        guard !sets.isEmpty else { return nil }
        return Disruption.of(observed, ours: Set(sets.keys), extended: extended)
    }

    private func freeHandle() -> UInt8? {
        let count = extended ? min(numberOfSets, Int(Advertiser.highestHandle) + 1) : 1
        let candidates = (0..<count).map { Advertiser.handle(ofSet: $0, sharedWithKernel: sharedWithKernel && extended) }
        return candidates.first { sets[$0] == nil }
    }

    /// The set's parameters, then its random address where it has one (the parameters say random).
    private func setParameters(_ handle: UInt8, _ parameters: BeaconParameters) throws(HostError) {
        let interval = parameters.intervalUnits ?? intervalUnits
        let address = Self.randomAddress(parameters)
        let command = LESetExtendedAdvertisingParameters(
            handle: handle, eventProperties: scanResponses[handle] == nil ? .legacyNonConnectable : [.legacyPDU, .scannable],
            primaryIntervalMin: interval, primaryIntervalMax: interval,
            ownAddressType: address == nil ? .publicDevice : .randomDevice,
            txPower: parameters.txPower ?? LESetExtendedAdvertisingParameters.noTxPowerPreference, sid: handle & 0x0F)
        let own = parameters.description
        log?("set \(handle): parameters" + (own.isEmpty ? "" : ", \(own)"))
        try controller.send(command, context: own.isEmpty ? nil : own)
        if let address { try setAddress(handle, address) }
    }

    /// Legacy advertising's one random address where the beacon has one, then its parameters.
    private func setLegacyParameters(_ handle: UInt8, _ parameters: BeaconParameters) throws(HostError) {
        let interval = UInt16(parameters.intervalUnits ?? intervalUnits)
        let address = Self.randomAddress(parameters)
        if let address { try controller.send(LESetRandomAddress(address: address), context: "address \(address)") }
        let own = parameters.description
        try controller.send(LESetAdvertisingParameters(
            intervalMin: interval, intervalMax: interval,
            advertisingType: scanResponses[handle] == nil ? .nonConnectableUndirected : .scannableUndirected,
            ownAddressType: address == nil ? .publicDevice : .randomDevice), context: own.isEmpty ? nil : own)
    }

    private func setData(_ handle: UInt8, _ data: [UInt8], scanResponse: [UInt8]?) throws(HostError) {
        log?((extended ? "set \(handle): " : "") + "data \(HexText.format(data))"
             + (scanResponse.map { ", scan response \(HexText.format($0))" } ?? ""))
        if extended {
            try controller.setExtendedAdvertisingData(handle: handle, data)
            if let scanResponse { try controller.setExtendedScanResponseData(handle: handle, scanResponse) }
        } else {
            try controller.setLegacyAdvertisingData(data)
            if let scanResponse { try controller.setLegacyScanResponseData(scanResponse) }
        }
    }
}
