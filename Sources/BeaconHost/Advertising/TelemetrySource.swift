// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Interleaves telemetry on a running emitter (`--interleave-tlm`, a `RunLoopSource` on its
/// run loop): each Eddystone-UID or -URL beacon's set carries a TLM frame (the emitter's own
/// counters, moving from the start of the run) for one advertising interval in every ten, as a
/// beacon that sends both interleaves them. (TLM beacons' own counters move with the other
/// motions: `BeaconMotions`.)
package final class TelemetrySource: RunLoopSource {
    private let session: any LiveAdvertising
    private let context: MotionContext
    private let timer: PeriodicTimer
    /// The timer's period (the advertising interval), in seconds.
    private let tick: Double
    private var ticks: UInt64 = 0
    /// The interleaved frame as the run started with it, and as its counters are now.
    private let startFrame: Beacon
    private var emitterFrame: Beacon
    private let log: (String) -> Void

    public var descriptor: Int32 { timer.descriptor }

    public var descriptors: [Int32] { [descriptor] }

    /// - Parameters:
    ///   - interleaving: the TLM frame to interleave (its counters are where they start, and
    ///     move as its format's motion moves them).
    ///   - log: what went wrong (a refused frame), for the user; the next tick tries again.
    public init(session: any LiveAdvertising, intervalUnits: UInt32, interleaving: Beacon,
                log: @escaping (String) -> Void) throws(HostError) {
        self.session = session
        context = MotionContext(intervalUnits: intervalUnits, aes: BoringAES())
        startFrame = interleaving
        emitterFrame = startFrame
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
        emitterFrame = startFrame.motion?.advanced(by: Double(ticks) * tick, context) ?? startFrame
        do {
            // One interval in ten carries the TLM frame; the next puts the beacon back.
            let slot = ticks % 10
            for beacon in session.running where EddystoneTLM.accompanies(beacon.beacon) {
                if slot == 0 {
                    try session.show(beacon.id, emitterFrame)
                } else if slot == 1 || passed > 1 {
                    try session.show(beacon.id, beacon.beacon)
                }
            }
        } catch {
            log("telemetry: \(error)")
        }
    }
}
