// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What the emitter reports while it runs.
public enum EmitterEvent: Sendable {
    /// One step of the flow, for `--verbose`.
    case step(String)
    /// What the controller offers, when the flow had to ask (not with `--legacy`).
    case capabilities(AdvertisingCapabilities)
    /// Input nobody asked for was passed over (`UnsolicitedInput`): the first of a kind, then
    /// every power of ten of it.
    case ignored(UnsolicitedInputReport)
    /// Advertising is on: the plan (with the address advertised from), time from start to the
    /// enable's completion, the command round trips up to it, and each beacon's address of its
    /// own (nil: the plan's), in order.
    case advertising(AdvertisingPlan, elapsed: Duration, roundTrips: Int, ownAddresses: [BluetoothAddress?])
    /// Stopping (a signal, the duration): sent before the beacons are taken off.
    case stopping(reason: String)
    /// Stopped, and whether advertising was left on (`--keep`).
    case stopped(reason: String, keptOn: Bool)
    /// The beacons are off the air: why. The emitter puts them back once the adapter is usable.
    case offAir(Disruption)
    /// The adapter is not usable (down, powered off, gone): the emitter waits for it.
    case waiting(AdapterAvailability)
    /// Putting the beacons back failed; the emitter tries again after `retryIn`.
    case restoreFailed(HostError, retryIn: Duration)
    /// The beacons are back on the air: what had knocked them off, how long they were off,
    /// and how long it took from the adapter being usable again.
    case restored(Disruption, gap: Duration, afterUsable: Duration)
    /// At exit, the beacons could not be taken off (the adapter is down, the kernel refused):
    /// what went wrong; `beacon-emit stop` can finish the job once the adapter is back.
    case leftBehind(HostError)
    /// Something the user asked for that cannot be honoured as asked, or is not watched.
    case warning(String)
    /// A beacon's new identity (new content with a new address: an Eddystone-EID's next
    /// identifier) did not go on the air (`BeaconMotions`): the beacon is off the air, or still
    /// under its old identity whole, never half of each, until the next try (`detail` says
    /// which beacon, what was refused and when).
    case withheld(String)
    /// What the canary (`advertise --canary`) heard of the beacons, beyond the `not-heard`
    /// disruption that has them reprogrammed.
    case canary(CanaryEvent)
}
