// SPDX-License-Identifier: GPL-2.0-or-later

/// A request the host cannot meet, as facts a program can switch on: what was asked (a
/// setting of the run's or of one beacon's) and why it cannot be. The description says both in
/// the library's terms; `beacon-emit` adds what to do, naming its options.
public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was asked, by the name the library gives it.
    public enum Setting: Hashable, Sendable {
        /// `AdvertisingOptions.mode` set to legacy or extended commands.
        case mode(AdvertisingOptions.Mode)
        /// A TX power (`AdvertisingOptions.txPower`, `BeaconParameters.txPower`).
        case txPower
        /// An interval, as `AdvertisingOptions.intervalDescription` gives it.
        case interval(String)
        /// A random address the run goes out from (`AdvertisingOptions.address`).
        case randomAddress
        /// A non-resolvable random address (the run's, or a beacon's own).
        case nonResolvableAddress
        /// A beacon's own address (`BeaconParameters.address`).
        case ownAddress
        /// A beacon's own interval or TX power, as `BeaconParameters.description` gives them.
        case ownParameters(String)
        /// Advertising on the LE Coded PHY, or scanning on it.
        case codedPHY
        /// One of a beacon's own settings (`BeaconSetting`) as given: its key (`tx-power`), its
        /// value as written (`-8`), and both in the library's words (`TX power -8 dBm`).
        case beaconSetting(key: String, value: String, described: String)
        /// Advertising data over 31 bytes (extended PDUs).
        case longData
        /// A scan response.
        case scanResponse
        /// Bringing the adapter up (`bringUp`).
        case bringUp
        /// A way into a kernel adapter (`KernelAccess`).
        case kernelAccess(KernelAccess)
        /// A second device on the emitter's radio (the virtual controller's peer, the canary).
        case secondDevice
        /// Ending at the first disruption instead of waiting it out.
        case failFast
    }

    /// Why it cannot be.
    public enum Reason: Hashable, Sendable {
        /// It needs extended advertising, and legacy commands were asked for.
        case legacyChosen
        /// It needs extended advertising (or scanning), which the controller lacks.
        case controllerLacksExtended
        /// The controller lacks the LE Coded PHY.
        case controllerLacksCodedPHY
        /// Legacy advertising, all the controller has, takes no such interval.
        case legacyIntervalRange
        /// Legacy advertising takes no such interval, and legacy commands were asked for.
        case legacyIntervalRangeChosen
        /// A peer cannot connect again to a non-resolvable address.
        case connectable
        /// The beacons take turns on one set (more beacons than sets, or legacy advertising),
        /// which keeps one set of parameters.
        case sharedSet
        /// The beacons taking turns on one set would go out some from addresses of their own,
        /// some from the run's public one: a set's own-address type is one of its parameters.
        case sharedSetMixedAddresses
        /// Through the management API the kernel chooses the address.
        case kernelChoosesAddress
        /// The management API has no way to set a beacon's setting (its channels): the kernel sets it itself.
        case kernelSetsItself
        /// Through the management API the kernel chooses the HCI commands.
        case kernelChoosesCommands
        /// The kernel advertises at its own interval there: every instance on a legacy-only
        /// adapter, or scannable ones.
        case kernelOwnInterval(adapter: String, scannable: Bool)
        /// The kernel offers no Coded PHY advertising on the adapter (`SEC_CODED` absent).
        case kernelLacksCodedPHY(adapter: String)
        /// The kernel cannot set the TX power of the adapter's advertising.
        case kernelCannotSetTxPower(adapter: String)
        /// The kernel offers no extended PDUs on the adapter (`most` nil), or at most `most` bytes.
        case kernelLacksLongData(adapter: String, most: Int?, longest: Int)
        /// The kernel offers no advertising instances on the adapter.
        case kernelHasNoInstances(adapter: String)
        /// All the kernel's instances are other programs'.
        case instancesTaken(adapter: String, index: UInt16, maximum: Int, taken: [UInt8])
        /// The adapter has LE switched off.
        case lowEnergyOff(adapter: String, index: UInt16)
        /// The adapter advertises through Set Advertising, which takes precedence over instances.
        case setAdvertisingOn(adapter: String, index: UInt16)
        /// It needs an adapter named by number (`hciN`).
        case needsAdapterName
        /// The user channel needs the adapter down.
        case needsAdapterDown
        /// It needs the private virtual controller as the emitter's device.
        case needsVirtualDevice
        /// The device is a controller driven with HCI commands, not a kernel adapter.
        case notKernelAdapter(device: String)
        /// The disruption named happened on the device.
        case disrupted(device: String, what: String)
        /// The advertising data is longer than the PDUs hold (`most` bytes: 31 in a legacy PDU,
        /// 251 in the extended PDUs this host sends).
        case dataTooLong(bytes: Int, most: Int, extendedPDUs: Bool)
        /// A scan response goes with legacy PDUs, and the data needs extended ones.
        case scanResponseNeedsLegacyPDUs
        /// A beacon on the LE Coded PHY goes in extended PDUs, which carry no scan response here.
        case scanResponseOnCodedPHY
        /// A beacon on the air keeps its set's type (scannable or not) until advertised again.
        case scanResponseKeepsItsType
        /// The set beacons take turns on would change its type (scannable or not): a beacon with
        /// a scan response joining it when it is not, the last one with a scan response dropping it.
        case sharedSetOfOtherType(scannable: Bool)
        /// No advertising set (or instance) is free: `sets` in use where known.
        case noFreeSet(sets: Int?)
        /// The beacon has no address of its own made up (static or non-resolvable).
        case noAddressMadeUp
        /// This emitter gives its beacons no parameters of their own.
        case noOwnParameters
        /// No beacon has that id or number.
        case noSuchBeacon(String)
        /// The beacon is the last one: removing it would end advertising.
        case lastBeacon
        /// No beacons were given.
        case noBeacons
        /// An emitter carries at most `most` beacons (`AdvertisingOptions.maximumBeacons`).
        case tooManyBeacons(most: Int)
        /// Nothing advertises (not started, or stopped).
        case notAdvertising
        /// The kernel's instance is not ours now (removed, or taken over).
        case instanceNotOurs(UInt8)
        /// The kernel refused to remove the instance as one that does not exist, yet its list
        /// does not show the number free.
        case instanceStillListed(UInt8)
    }

    /// What was asked; nil where the reason says it all.
    public var setting: Setting?
    /// The beacon whose own setting it is, by its id; nil for the run's.
    public var beacon: BeaconID?
    /// What the program calls that beacon (a scenario's name for it), said instead of "beacon N".
    public var beaconName: String?
    public var reason: Reason

    public init(_ setting: Setting?, beacon: BeaconID? = nil, _ reason: Reason) {
        self.setting = setting
        self.beacon = beacon
        self.reason = reason
    }

    public var description: String { statement(naming: \.name) }

    /// The beacon and the setting, each setting named by `naming` (the library's words, or a
    /// program's own: its options), then the fact: "beacon 2's TX power: needs ...".
    public func statement(naming: (Setting) -> String) -> String {
        let who = beaconName.map { "'\($0)'" } ?? beacon.map { "beacon \($0)" }
        let subject = [who, setting.map(naming)].compactMap { $0 }.joined(separator: "'s ")
        return (subject.isEmpty ? "" : subject + ": ") + reason.fact
    }
}

extension Refusal.Setting {
    /// The setting in the library's words.
    public var name: String {
        switch self {
        case let .mode(mode): "\(mode.rawValue) advertising commands"
        case .txPower: "TX power"
        case let .interval(text): "interval \(text)"
        case .randomAddress: "random address"
        case .nonResolvableAddress: "non-resolvable address"
        case .ownAddress: "own address"
        case let .ownParameters(text): "own \(text)"
        case .codedPHY: "LE Coded PHY"
        case .longData: "data over 31 bytes"
        case let .beaconSetting(_, _, described): described
        case .scanResponse: "scan response"
        case .bringUp: "bringing the adapter up"
        case let .kernelAccess(access): "access \(access.rawValue)"
        case .secondDevice: "a second device"
        case .failFast: "ending at a disruption"
        }
    }
}

extension Refusal.Reason {
    /// What stands in the way, as a fact (no advice).
    public var fact: String {
        switch self {
        case .legacyChosen:
            return "needs extended advertising, which legacy commands (asked for) do not have"
        case .controllerLacksExtended:
            return "needs extended advertising commands (the LE feature and its commands), which this controller lacks"
        case .controllerLacksCodedPHY:
            return "this controller does not have the LE Coded PHY (long range) among its LE features"
        case .legacyIntervalRange:
            return "this controller has legacy advertising only, which takes "
                + AdvertisingOptions.intervalRangeDescription(legacy: true)
        case .legacyIntervalRangeChosen:
            return "legacy advertising (asked for) takes " + AdvertisingOptions.intervalRangeDescription(legacy: true)
        case .connectable:
            return "a non-resolvable address is for non-connectable advertising: a connectable one needs an address "
                + "a peer can connect to again (static)"
        case .sharedSet:
            return "the beacons would take turns on one set (more beacons than the controller has sets, or legacy "
                + "advertising), which keeps one set of parameters (a random address each only where every one of them has one)"
        case .sharedSetMixedAddresses:
            return "the beacons would take turns on one set, some with an address of their own and some from the "
                + "public address, and a set goes out from one kind of address"
        case .kernelChoosesAddress:
            return "through the management API the kernel chooses the address beacons go out from (a new "
                + "non-resolvable random one for each non-connectable instance)"
        case .kernelSetsItself:
            return "through the management API the kernel sets it itself; only raw HCI commands set it"
        case .kernelChoosesCommands:
            return "through the management API the kernel chooses the HCI commands"
        case let .kernelOwnInterval(adapter, scannable):
            return "the kernel advertises " + (scannable ? "scannable instances" : "every instance on \(adapter)")
                + " at its own interval through the management API"
        case let .kernelLacksCodedPHY(adapter):
            return "the kernel offers no Coded PHY advertising on \(adapter) (its controller lacks the LE Coded PHY, "
                + "or the kernel extended advertising)"
        case let .kernelCannotSetTxPower(adapter):
            return "the kernel cannot set the TX power of \(adapter)'s advertising"
        case let .kernelLacksLongData(adapter, most, longest):
            return "it goes in extended advertising PDUs, and the kernel offers "
                + (most.map { "at most \($0) bytes, not \(longest)" } ?? "none on \(adapter)")
        case let .kernelHasNoInstances(adapter):
            return "\(adapter) offers no advertising instances through the management API"
        case let .instancesTaken(adapter, _, maximum, taken):
            let listed = taken.isEmpty ? "not listed" : taken.map(String.init).joined(separator: ", ")
            return "all \(maximum) advertising instances of \(adapter) are taken by other programs (instances "
                + "\(listed): bluetoothd's, or `btmgmt add-adv`'s)"
        case let .lowEnergyOff(adapter, _):
            return "\(adapter) has LE switched off"
        case let .setAdvertisingOn(adapter, _):
            return "\(adapter) advertises through Set Advertising (bluetoothd's or `btmgmt advertising on`), which "
                + "takes precedence over every advertising instance"
        case .needsAdapterName:
            return "it needs a kernel adapter named by number (hci0)"
        case .needsAdapterDown:
            return "the user channel needs the adapter down"
        case .needsVirtualDevice:
            return "it exists only beside the private virtual controller (a second device on its virtual radio)"
        case let .notKernelAdapter(device):
            return "it is for kernel adapters; \(device) is driven with HCI commands"
        case let .disrupted(device, what):
            return "\(device): \(what)"
        case let .dataTooLong(bytes, most, extendedPDUs):
            return "\(bytes) bytes of advertising data exceed the \(most) "
                + (extendedPDUs ? "sent in extended PDUs" : "a legacy PDU holds (advertising that started with legacy PDUs "
                   + "keeps them)")
        case .scanResponseNeedsLegacyPDUs:
            return "a scan response goes with legacy PDUs, and this data needs extended ones (over 31 bytes): advertise "
                + "them apart"
        case .scanResponseOnCodedPHY:
            return "a beacon on the LE Coded PHY goes in extended PDUs, which carry no scan response here: advertise its "
                + "scan response on another beacon"
        case .scanResponseKeepsItsType:
            return "a beacon keeps its set's type (scannable or not) while on the air: it gains or loses its scan response "
                + "only when it is advertised again"
        case let .sharedSetOfOtherType(scannable):
            return scannable
                ? "the set beacons take turns on is scannable for this beacon's scan response, the only one there"
                : "no advertising set is free, and the set beacons would take turns on is not scannable and this beacon "
                    + "has a scan response: stop a beacon first"
        case let .noFreeSet(sets):
            return sets.map { "all \($0) advertising sets are in use: remove one first" } ?? "no advertising set is free"
        case .noAddressMadeUp:
            return "it has no address of its own made up (static or non-resolvable)"
        case .noOwnParameters:
            return "this emitter gives its beacons no parameters of their own"
        case let .noSuchBeacon(which):
            return "no beacon \(which)"
        case .lastBeacon:
            return "it is the last one: removing it would end the advertising"
        case .noBeacons:
            return "no beacons: keep at least one"
        case let .tooManyBeacons(most):
            return "an emitter carries at most \(most) beacons: remove one first, or run another emitter on another adapter"
        case .notAdvertising:
            return "not advertising"
        case let .instanceNotOurs(instance):
            return "instance \(instance) is not ours now (removed, or taken over): the beacon goes back at the restore"
        case let .instanceStillListed(instance):
            return "the kernel says advertising instance \(instance) does not exist, yet its list does not show it free "
                + "(Linux keeps such an instance while an adapter goes down): it stays recorded as beacon-emit's"
        }
    }
}
