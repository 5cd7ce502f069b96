// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Gives each beacon that asks for it (`rotate-address=S`) a new made-up address every S
/// seconds, on its running set: a `RunLoopSource` of the emitter's loop with no descriptor,
/// whose `due` is the next renewal. A beacon that gains
/// or loses its rotation through a control `update` is scheduled anew; a renewal the
/// controller refuses, or that finds the beacons off the air, is said and tried again a
/// period later.
package final class AddressRotation: RunLoopSource {
    private let session: any LiveAdvertising
    /// When each rotating beacon (by id: its index shifts when one before it goes) gets its
    /// next address, in seconds from `origin`.
    private var schedule = RenewalSchedule<BeaconID>()
    private let origin = ContinuousClock.now
    private let report: (String) -> Void

    /// - Parameter report: each new address, and each renewal that failed.
    public init(session: any LiveAdvertising, report: @escaping (String) -> Void) {
        self.session = session
        self.report = report
    }

    /// None: its work is on a schedule (`due`).
    public var descriptors: [Int32] { [] }

    public var due: ContinuousClock.Instant? {
        schedule.follow(periods, now: now)
        return schedule.nextDue.map { origin + .seconds($0) }
    }

    public func serve() {
        let periods = periods
        schedule.follow(periods, now: now)
        for id in schedule.takeDue(at: now, periods: periods) {
            guard let index = session.ids.firstIndex(of: id) else { continue }
            do {
                let address = try session.renewAddress(index)
                report("beacon \(id): new address \(address)")
            } catch {
                report("beacon \(id): no new address: \(error); tried again in \(periods[id] ?? 0) s")
            }
        }
    }

    /// Each rotating beacon's period.
    private var periods: [BeaconID: Double] {
        Dictionary(zip(session.ids, session.parameters).compactMap { id, own in own.addressRotation.map { (id, $0) } }) { first, _ in first }
    }

    /// Seconds since `origin`.
    private var now: Double { origin.duration(to: .now).inSeconds }
}

/// When each of some beacons next gets a new address (`rotate-address=S`), in seconds on the
/// caller's clock: one schedule for `advertise` (`AddressRotation`, by id, on the machine's
/// clock) and a scenario's stage (`SetStage`, by name, on the stage's).
package struct RenewalSchedule<Key: Hashable & Comparable> {
    private var next: [Key: Double] = [:]

    package init() {}

    /// The first time one is due; nil when none rotates.
    package var nextDue: Double? { next.values.min() }

    /// Follows `periods` (each rotating beacon's): one new to it is due a period from `now`,
    /// one no longer in it is dropped, the others keep their time.
    package mutating func follow(_ periods: [Key: Double], now: Double) {
        next = next.filter { periods[$0.key] != nil }
        for (key, period) in periods where next[key] == nil { next[key] = now + period }
    }

    /// Starts `key` anew: due a period from `now` (nil period: it no longer rotates).
    package mutating func start(_ key: Key, period: Double?, now: Double) {
        next[key] = period.map { now + $0 }
    }

    /// Keeps `key`'s time where it has one, else starts it (nil period: dropped).
    package mutating func keep(_ key: Key, period: Double?, now: Double) {
        next[key] = period.map { next[key] ?? now + $0 }
    }

    package mutating func remove(_ key: Key) { next[key] = nil }

    package mutating func removeAll() { next.removeAll() }

    /// The ones due at `now`, in order; each next due a period after it was (or at `now`,
    /// when far behind). One without a period in `periods` is dropped, not due.
    package mutating func takeDue(at now: Double, periods: [Key: Double]) -> [Key] {
        var due: [Key] = []
        for (key, at) in next.sorted(by: { $0.key < $1.key }) where now >= at {
            guard let period = periods[key] else {
                next[key] = nil
                continue
            }
            next[key] = max(at + period, now)
            due.append(key)
        }
        return due
    }
}
