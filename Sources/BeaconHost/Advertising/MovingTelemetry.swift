// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Eddystone-TLM counters that move while a beacon advertises, as the TLM frame defines them:
/// ADV_CNT counts the advertising PDUs sent since power-up, SEC_CNT the time since power-up in
/// 0.1 s. Both start from the values given and wrap at 2^32 as the 32-bit fields do.
package struct MovingTelemetry: Sendable {
    /// Advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32
    /// PDUs per advertising event: one on each of the three primary channels (37, 38, 39).
    public static let pdusPerEvent: UInt64 = 3

    public init(intervalUnits: UInt32) {
        self.intervalUnits = intervalUnits
    }

    /// `frame` with `seconds` more of uptime and the PDUs sent in them.
    public func advance(_ frame: EddystoneTLM, by seconds: Double) -> EddystoneTLM {
        var moved = frame
        let tenths = UInt64(max(0, (seconds * 10).rounded()))
        let events = UInt64(max(0, (seconds / (Double(max(1, intervalUnits)) * 0.000625)).rounded()))
        moved.uptimeDeciseconds = UInt32(truncatingIfNeeded: UInt64(frame.uptimeDeciseconds) &+ tenths)
        moved.advertisingPDUCount = UInt32(truncatingIfNeeded: UInt64(frame.advertisingPDUCount) &+ events &* Self.pdusPerEvent)
        return moved
    }

    /// `beacon` with `seconds` more on its counters where it is an Eddystone-TLM beacon; nil
    /// for any other (its content does not move).
    /// Whether `beacon`'s counters move (an Eddystone-TLM beacon).
    package static func moves(_ beacon: Beacon) -> Bool {
        if case .eddystone(.tlm) = beacon { true } else { false }
    }

    public func moved(_ beacon: Beacon, by seconds: Double) -> Beacon? {
        guard case let .eddystone(.tlm(frame)) = beacon else { return nil }
        return .eddystone(.tlm(advance(frame, by: seconds)))
    }
}

/// The whole periods that end on a clock (seconds, or a timer's ticks), counted once each: when
/// TLM counters move (`BeaconMotions`).
package struct PeriodCount: Sendable {
    package let period: Double
    /// When the next period ends.
    package private(set) var next: Double

    package init(period: Double, from start: Double = 0) {
        self.period = period
        next = start + period
    }

    /// How many periods ended by `now` since the last call (several when far behind).
    package mutating func passed(at now: Double) -> Int {
        var count = 0
        while now >= next {
            count += 1
            next += period
        }
        return count
    }
}

/// Interleaves telemetry on a running emitter (`--interleave-tlm`, a `RunLoopSource` on its
/// run loop): each Eddystone-UID or -URL beacon's set carries a TLM frame (the emitter's own
/// counters, moving from the start of the run) for one advertising interval in every ten, as a
/// beacon that sends both interleaves them. (TLM beacons' own counters move with the other
/// motions: `BeaconMotions`.)
package final class TelemetrySource: RunLoopSource {
    private let session: any LiveAdvertising
    private let telemetry: MovingTelemetry
    private let timer: PeriodicTimer
    /// The timer's period (the advertising interval), in seconds.
    private let tick: Double
    private var ticks: UInt64 = 0
    /// The interleaved frame's counters, from the start of the run.
    private var emitterFrame: EddystoneTLM
    private let log: (String) -> Void

    public var descriptor: Int32 { timer.descriptor }

    public var descriptors: [Int32] { [descriptor] }

    /// - Parameters:
    ///   - interleaving: the TLM frame to interleave (its counters are where they start).
    ///   - log: what went wrong (a refused frame), for the user; the next tick tries again.
    public init(session: any LiveAdvertising, intervalUnits: UInt32, interleaving: EddystoneTLM,
                log: @escaping (String) -> Void) throws(HostError) {
        self.session = session
        telemetry = MovingTelemetry(intervalUnits: intervalUnits)
        emitterFrame = interleaving
        let period = Duration.microseconds(Int64(intervalUnits) * 625)
        tick = period.inSeconds
        do {
            timer = try PeriodicTimer(period: period)
        } catch {
            throw .kernel(call: error.call, errno: error.errno, adapter: nil, adapters: [])
        }
        self.log = log
    }

    public func serve() {
        let passed = timer.expirations()
        guard passed > 0 else { return }
        ticks += passed
        emitterFrame = telemetry.advance(emitterFrame, by: Double(passed) * tick)
        do {
            // One interval in ten carries the TLM frame; the next puts the beacon back.
            let slot = ticks % 10
            for beacon in session.running where Self.interleaves(beacon.beacon) {
                if slot == 0 {
                    try session.show(beacon.id, .eddystone(.tlm(emitterFrame)))
                } else if slot == 1 || passed > 1 {
                    try session.show(beacon.id, beacon.beacon)
                }
            }
        } catch {
            log("telemetry: \(error)")
        }
    }

    static func interleaves(_ beacon: Beacon) -> Bool {
        switch beacon {
        case .eddystone(.uid), .eddystone(.url): true
        default: false
        }
    }
}
