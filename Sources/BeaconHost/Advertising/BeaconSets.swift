// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A scenario's beacons: the running beacons (`LiveAdvertising`, named by the core's ids,
/// changed in place through the one path every change takes), kept on the air through
/// disruptions by a supervisor of their own; added and removed one at a time, the last one
/// too. What a scenario's stage drives (`SupervisedSets`, on the session
/// `BeaconAdvertisement.start` opens). The stage's test seam.
package protocol BeaconSets: LiveAdvertising {
    /// Called with each step, for `--verbose`.
    var log: ((String) -> Void)? { get set }
    /// Removes every set of ours, trying each; the first error is thrown.
    func removeAll() throws(HostError)
    /// Adds `beacons` as one change, all or none (HCI sets: enabled by one command).
    /// - Returns: their ids, in order.
    func add(_ beacons: [(beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) -> [BeaconID]
    /// Removes `ids` as one change, all or none (HCI sets: disabled by one command).
    func remove(_ ids: [BeaconID]) throws(HostError)
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

extension BeaconSets {
    /// One by one, where the sets cannot change together.
    package func add(_ beacons: [(beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) -> [BeaconID] {
        var ids: [BeaconID] = []
        for (beacon, parameters) in beacons { ids.append(try add(beacon, parameters: parameters)) }
        return ids
    }

    package func remove(_ ids: [BeaconID]) throws(HostError) {
        for id in ids { try remove(id) }
    }
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
    /// Refuses to remove the last beacon, `id` (stopping the emitter is how advertising
    /// stops: the rule of `advertise`, the control socket and the library; a scenario's
    /// beacons come and go, the last one too).
    static func check(_ id: BeaconID, of count: Int) throws(HostError) {
        guard count > 1 else { throw .refused(Refusal(nil, beacon: "beacon \(id)", .lastBeacon)) }
    }

    /// The beacon on turn once beacon `index` is gone (`remaining` left), and whether the one
    /// removed was on the air (so the set needs the next one's data now).
    static func turn(afterRemoving index: Int, turn: Int, remaining: Int) -> (turn: Int, wasOnAir: Bool) {
        let shifted = index < turn ? turn - 1 : turn
        return (shifted % remaining, index == turn)
    }
}

extension Advertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { true }
}
extension ManagedAdvertiser: RevertibleAdvertiser, SlotBackend {
    var makesAddresses: Bool { false }
}

extension LiveAdvertising {
    /// The beacons' content, in order.
    public var beacons: [Beacon] { running.map(\.beacon) }
    /// The beacons' ids, in order.
    public var ids: [BeaconID] { running.map(\.id) }
    /// Each beacon's own parameters (`.run`: the run's), in order.
    public var parameters: [BeaconParameters] { running.map(\.parameters) }

    /// The beacon with id `id`, nil when there is none.
    public func running(_ id: BeaconID) -> RunningBeacon? { running.first { $0.id == id } }

    /// Changes beacon `id`'s own parameters (interval, TX power, address...), its data kept: a
    /// short gap on the air (HCI: the set disabled for them; the kernel: the instance added again).
    public func setParameters(_ id: BeaconID, to parameters: BeaconParameters) throws(HostError) {
        guard let now = running(id) else { throw .refused(Refusal(nil, .noSuchBeacon("\(id)"))) }
        try update(id, to: now.beacon, parameters: parameters)
    }

    /// Changes beacon `id`'s data in place, its parameters kept.
    public func update(_ id: BeaconID, to beacon: Beacon) throws(HostError) {
        try update(id, to: beacon, parameters: nil)
    }

    /// Adds a beacon with the run's parameters.
    /// - Returns: the new beacon's id.
    @discardableResult
    public func add(_ beacon: Beacon) throws(HostError) -> BeaconID {
        try add(beacon, parameters: .run)
    }

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
        let current = running
        for (index, now) in current.prefix(wanted.count).enumerated()
        where now.beacon != wanted[index] || (own.map { $0[index] != now.parameters } ?? false) {
            try update(now.id, to: wanted[index], parameters: own?[index])
            counts.updated += 1
        }
        for (index, beacon) in wanted.enumerated().dropFirst(current.count) {
            _ = try add(beacon, parameters: own?[index] ?? .run)
            counts.added += 1
        }
        for gone in current.dropFirst(wanted.count).reversed() {
            try remove(gone.id)
            counts.removed += 1
        }
        return counts
    }
}
