// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Beacons added and removed one at a time, each named by the id the core gave it, changed in
/// place while they advertise and kept on the air through disruptions: what a scenario's stage
/// drives (`SupervisedSets`, the advertising core on the session `BeaconAdvertisement.start`
/// opens). The stage's test seam.
package protocol BeaconSets: AnyObject {
    /// Called with each step, for `--verbose`.
    var log: ((String) -> Void)? { get set }
    /// Puts a beacon on the air with its own parameters (`.run`: the run's); returns its id.
    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> BeaconID
    /// Changes a running beacon's data in place.
    func update(_ id: BeaconID, to beacon: Beacon) throws(HostError)
    /// Changes a running beacon's parameters (interval, TX power): a short gap on the air (HCI:
    /// the set disabled for them; the kernel: the instance added again).
    func setParameters(_ id: BeaconID, to parameters: BeaconParameters) throws(HostError)
    /// Gives a beacon whose address is made up a new one of the same kind, on the running set.
    @discardableResult
    func renewAddress(_ id: BeaconID) throws(HostError) -> BluetoothAddress
    func remove(_ id: BeaconID) throws(HostError)
    /// Removes every set of ours, trying each; the first error is thrown.
    func removeAll() throws(HostError)
    /// Whether another beacon can have a set of its own now (else an added one takes turns).
    var hasFreeSet: Bool { get }
    /// The beacons that take turns on the last set now, in their order; empty where every
    /// beacon has a set of its own.
    var takingTurns: [BeaconID] { get }
    /// The descriptors that have input for `serve()` (the session's sockets), watched by the
    /// caller's loop beside its own.
    var wakeDescriptors: [Int32] { get }
    /// When `serve()` is next due without input (a check of the adapter, a restore, a turn);
    /// nil when nothing is.
    var nextDeadline: ContinuousClock.Instant? { get }
    /// Takes in what the controller sent and does what is due (a disruption, a restore).
    func serve() throws(HostError)
    /// What the supervision reported since the last call (off the air, back on it).
    func takeEvents() -> [EmitterEvent]
}

extension Beacon {
    /// Its advertising data, refused (naming `label`, "beacon 2", when given) when it is longer
    /// than the 31 bytes a legacy PDU carries, or with `extendedPDUs` the 251 this host sends
    /// in extended PDUs.
    func pduData(label: String? = nil, extendedPDUs: Bool = false) throws(HostError) -> [UInt8] {
        let data = advertisingData.bytes
        let most = extendedPDUs ? AdvertisingData.extendedPDUMaximumLength : AdvertisingData.legacyMaximumLength
        guard data.count <= most else {
            throw .refused(Refusal(nil, beacon: label, .dataTooLong(bytes: data.count, most: most, extendedPDUs: extendedPDUs)))
        }
        return data
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

/// What removing a beacon from a running emitter means for its beacons taking turns, shared
/// by the HCI and the management advertisers.
enum BeaconRemoval {
    /// Refuses an index that is not there, and the last beacon (stopping the emitter is how
    /// advertising stops: the rule of `advertise`, the control socket and the library; a
    /// scenario's beacons come and go, the last one too).
    static func check(_ index: Int, of count: Int) throws(HostError) {
        guard (0..<count).contains(index) else { throw .refused(Refusal(nil, .noSuchBeacon("\(index + 1)"))) }
        guard count > 1 else { throw .refused(Refusal(nil, beacon: "beacon \(index + 1)", .lastBeacon)) }
    }

    /// The beacon on turn once beacon `index` is gone (`remaining` left), and whether the one
    /// removed was on the air (so the set needs the next one's data now).
    static func turn(afterRemoving index: Int, turn: Int, remaining: Int) -> (turn: Int, wasOnAir: Bool) {
        let shifted = index < turn ? turn - 1 : turn
        return (shifted % remaining, index == turn)
    }
}

/// A running emitter's beacons changed while it advertises (`advertise --control`): each
/// change is made on the air in place, or not at all (an error, and the beacons as they were).
public protocol LiveAdvertising: AnyObject {
    /// The beacons advertised now, in order.
    var beacons: [Beacon] { get }
    /// Each beacon's id, in the beacons' order: the first ones 1, 2, ... as given, each added
    /// one the next number; a beacon keeps its id while others come and go.
    var ids: [BeaconID] { get }
    /// Each beacon's own parameters (interval, TX power; `.run`: the run's), in the beacons' order.
    var parameters: [BeaconParameters] { get }
    func update(_ index: Int, to beacon: Beacon) throws(HostError)
    /// Changes beacon `index`'s data and its own parameters (nil: kept) together, or neither.
    func update(_ index: Int, to beacon: Beacon, parameters: BeaconParameters?) throws(HostError)
    /// - Returns: the new beacon's index.
    func add(_ beacon: Beacon) throws(HostError) -> Int
    /// Adds a beacon with parameters of its own.
    /// - Returns: the new beacon's index.
    func add(_ beacon: Beacon, parameters: BeaconParameters) throws(HostError) -> Int
    /// Gives beacon `index`, whose address is made up, a new one of the same kind on its set.
    /// - Returns: the new address.
    @discardableResult
    func renewAddress(_ index: Int) throws(HostError) -> BluetoothAddress
    /// The random address of its own each beacon's set advertises from (nil: none of its own),
    /// in the beacons' order.
    var ownAddresses: [BluetoothAddress?] { get }
    func remove(_ index: Int) throws(HostError)
    /// Puts another frame on beacon `index`'s set for now, the beacon unchanged (interleaving).
    func show(_ index: Int, _ frame: Beacon) throws(HostError)
}

extension Advertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { true }
}
extension ManagedAdvertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { false }
}

extension LiveAdvertising {
    /// The index (place in `beacons`) of the beacon with id `id`, nil when there is none.
    public func index(of id: BeaconID) -> Int? { ids.firstIndex(of: id) }

    /// Every beacon with the run's parameters: an emitter that gives none of its own.
    public var parameters: [BeaconParameters] { beacons.map { _ in .run } }

    /// Changes the data only, where the emitter gives no parameters of its own.
    public func update(_ index: Int, to beacon: Beacon, parameters own: BeaconParameters?) throws(HostError) {
        guard own == nil || own == .run else { throw Self.noOwnParameters }
        try update(index, to: beacon)
    }

    /// Adds a beacon with the run's parameters, where the emitter gives none of its own.
    public func add(_ beacon: Beacon, parameters own: BeaconParameters) throws(HostError) -> Int {
        guard own == .run else { throw Self.noOwnParameters }
        return try add(beacon)
    }

    /// No beacon has an address of its own here.
    public var ownAddresses: [BluetoothAddress?] { beacons.map { _ in nil } }

    /// No beacon has an address of its own here.
    @discardableResult
    public func renewAddress(_ index: Int) throws(HostError) -> BluetoothAddress {
        throw .refused(Refusal(nil, beacon: "beacon \(index + 1)", .noAddressMadeUp))
    }

    private static var noOwnParameters: HostError { .refused(Refusal(nil, .noOwnParameters)) }

    /// Changes the beacons to `wanted` in place, position by position: a changed beacon gets
    /// new data on its set (and new parameters, where `parameters` gives each wanted beacon
    /// its own), more beacons are added, fewer are removed from the end.
    /// - Returns: how many were updated, added and removed.
    /// - Throws: `HostError` at the first refusal (the changes before it stay).
    @discardableResult
    public func apply(_ wanted: [Beacon], parameters wantedParameters: [BeaconParameters]? = nil) throws(HostError)
        -> (updated: Int, added: Int, removed: Int) {
        guard !wanted.isEmpty else { throw .refused(Refusal(nil, .noBeacons)) }
        let own = wantedParameters?.count == wanted.count ? wantedParameters : nil
        var counts = (updated: 0, added: 0, removed: 0)
        let current = parameters
        for index in 0..<min(beacons.count, wanted.count)
        where beacons[index] != wanted[index] || (own.map { $0[index] != current[index] } ?? false) {
            try update(index, to: wanted[index], parameters: own?[index])
            counts.updated += 1
        }
        for (index, beacon) in wanted.enumerated().dropFirst(beacons.count) {
            _ = try add(beacon, parameters: own?[index] ?? .run)
            counts.added += 1
        }
        while beacons.count > wanted.count {
            try remove(beacons.count - 1)
            counts.removed += 1
        }
        return counts
    }
}
