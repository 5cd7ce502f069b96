// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

extension Beacon {
    /// The Eddystone-EID frame this host computes and moves (one with an identity), nil for any
    /// other beacon.
    package var rotatingIdentifier: EddystoneEID? {
        if case let .eddystone(.eid(frame)) = self, frame.source != nil { frame } else { nil }
    }
}

/// Eddystone-EID identifiers as the beacon's time counter moves (Google's eid-computation.md):
/// the frame for a later counter, with the temporary key cached per 65,536 s as the
/// specification recommends (one AES block per new identifier, two per new temporary key).
package struct IdentifierClock {
    private let aes = BoringAES()
    private struct KeyPeriod: Hashable {
        var identityKey: [UInt8]
        var period: UInt32
    }
    /// Temporary keys by identity key and the counter's top 16 bits; at most a few entries.
    private var temporaryKeys: [KeyPeriod: [UInt8]] = [:]
    private static let mostKeys = 64

    package init() {}

    /// The frame a beacon with `frame`'s identity sends at `counter`.
    package mutating func frame(_ frame: EddystoneEID, at counter: UInt32) -> EddystoneEID {
        guard let identity = frame.source?.identity else { return frame }
        let period = KeyPeriod(identityKey: identity.identityKey, period: counter >> 16)
        let temporaryKey: [UInt8]
        if let cached = temporaryKeys[period] {
            temporaryKey = cached
        } else {
            temporaryKey = identity.temporaryKey(counter: counter, aes: aes)
            if temporaryKeys.count >= Self.mostKeys { temporaryKeys.removeAll() }
            temporaryKeys[period] = temporaryKey
        }
        return EddystoneEID(txPowerAt0m: frame.txPowerAt0m,
                            source: EddystoneEIDSource(identity: identity, counter: counter),
                            eid: identity.ephemeralIdentifier(counter: counter, temporaryKey: temporaryKey, aes: aes))
    }
}

/// One Eddystone-EID beacon in an `IdentifierSchedule`.
private struct IdentifierEntry {
    /// When, on the caller's clock, the counter read `originCounter`.
    var origin: Double
    var originCounter: UInt32
    /// The frame last given to the caller to put on the air.
    var frame: EddystoneEID
    /// When to try again to put `frame` on the air, after a failure.
    var retry: Double?

    /// When it is next due: its identifier changes, or its failed frame is tried again.
    var due: Double? {
        guard let source = frame.source, let next = source.identity.nextRotation(after: source.counter) else {
            return retry
        }
        let rotation = origin + Double(next - originCounter)
        return retry.map { min($0, rotation) } ?? rotation
    }
}

/// When each Eddystone-EID beacon next gets a new identifier, on the caller's clock (seconds):
/// `BeaconMotions`' schedule. A beacon's counter starts at its frame's (`--clock`) when the
/// schedule first sees it (or sees it changed) and advances with the clock from there.
package struct IdentifierSchedule<Key: Hashable & Comparable> {
    private var entries: [Key: IdentifierEntry] = [:]
    private var clock = IdentifierClock()
    /// How long after a failure the frame is tried again, in seconds.
    package static var retryPeriod: Double { 1 }

    package init() {}

    /// Follows the beacons there are now (`frames`: each EID beacon's frame as it is on the
    /// air): one new, or changed by someone else (an update), starts from its counter at `now`;
    /// one gone is dropped. One whose last frame failed to go on the air is not new.
    package mutating func follow(_ frames: [Key: EddystoneEID], now: Double) {
        entries = entries.filter { frames[$0.key] != nil }
        for (key, frame) in frames {
            if let entry = entries[key], entry.frame == frame || entry.retry != nil { continue }
            entries[key] = IdentifierEntry(origin: now, originCounter: frame.source?.counter ?? 0, frame: frame)
        }
    }

    /// The first time an identifier changes (or one that failed is tried again); nil when none will.
    package var nextDue: Double? { entries.values.compactMap(\.due).min() }

    /// The beacons whose identifier changed by `now` (or whose last one is tried again), each
    /// with its frame for the counter now, taken as on the air (`failed` says otherwise).
    package mutating func takeDue(at now: Double) -> [(key: Key, frame: EddystoneEID)] {
        var due: [(key: Key, frame: EddystoneEID)] = []
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let at = entry.due, now >= at else { continue }
            let elapsed = UInt64(max(0, (now - entry.origin).rounded(.down)))
            let counter = UInt32(min(UInt64(UInt32.max), UInt64(entry.originCounter) + elapsed))
            let frame = clock.frame(entry.frame, at: counter)
            entries[key]?.frame = frame
            entries[key]?.retry = nil
            due.append((key, frame))
        }
        return due
    }

    /// The frame `takeDue` gave for `key` did not go on the air: tried again a moment later.
    package mutating func failed(_ key: Key, now: Double) {
        entries[key]?.retry = now + Self.retryPeriod
    }

    package mutating func remove(_ key: Key) { entries[key] = nil }

    package mutating func removeAll() { entries.removeAll() }
}

extension BeaconParameters {
    /// A beacon's own parameters as it goes on the air: an Eddystone-EID beacon given no address
    /// gets a non-resolvable one of its own, renewed with each identifier, where the backend
    /// makes addresses (HCI advertising sets) and the advertising is not connectable.
    package func forBeacon(_ beacon: Beacon, makesAddresses: Bool, connectable: Bool) -> BeaconParameters {
        guard makesAddresses, address == nil, beacon.rotatingIdentifier != nil, !(self.connectable ?? connectable) else { return self }
        var own = self
        own.address = .generatedNonResolvable
        return own
    }
}

extension AdvertisingOptions {
    /// The options with each Eddystone-EID beacon that gets a set of its own (`sets` of them
    /// there; legacy advertising: one, for a single beacon) given a non-resolvable address of
    /// its own where it names none (`BeaconParameters.forBeacon`): HCI advertising sets.
    package func givingRotatingIdentifiersAddresses(sets: Int) -> AdvertisingOptions {
        guard beacons.contains(where: { $0.rotatingIdentifier != nil }) else { return self }
        var options = self
        var own = beaconParameters.count == beacons.count ? beaconParameters : beacons.map { _ in .run }
        let ownSets = mode == .legacy || sets <= 1 ? (beacons.count == 1 ? 1 : 0) : sets
        for index in own.indices where index < ownSets {
            own[index] = own[index].forBeacon(beacons[index], makesAddresses: true, connectable: connectable)
        }
        options.beaconParameters = own
        return options
    }
}
