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
    /// next address.
    private var next: [BeaconID: ContinuousClock.Instant] = [:]
    private let report: (String) -> Void

    /// - Parameter report: each new address, and each renewal that failed.
    public init(session: any LiveAdvertising, report: @escaping (String) -> Void) {
        self.session = session
        self.report = report
    }

    /// None: its work is on a schedule (`due`).
    public var descriptors: [Int32] { [] }

    public var due: ContinuousClock.Instant? {
        schedule()
        return next.values.min()
    }

    public func serve() {
        schedule()
        let now = ContinuousClock.now
        let (ids, parameters) = (session.ids, session.parameters)
        for (id, at) in next.sorted(by: { $0.key < $1.key }) where at <= now {
            guard let index = ids.firstIndex(of: id), let period = parameters[index].addressRotation else { continue }
            next[id] = now + Self.duration(period)
            do {
                let address = try session.renewAddress(index)
                report("beacon \(id): new address \(address)")
            } catch {
                report("beacon \(id): no new address: \(error); tried again in \(period) s")
            }
        }
    }

    /// Every beacon with a rotation has a time; one without (or gone) has none.
    private func schedule() {
        let rotating = Dictionary(zip(session.ids, session.parameters).compactMap { id, own in
            own.addressRotation.map { (id, $0) }
        }) { first, _ in first }
        next = next.filter { rotating[$0.key] != nil }
        for (id, period) in rotating where next[id] == nil { next[id] = .now + Self.duration(period) }
    }

    /// A rotation period in seconds, as a duration.
    private static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }
}
