// SPDX-License-Identifier: GPL-2.0-or-later


/// What the canary, a scanner on another device listening for the emitter's own beacons,
/// reports besides the `Disruption.notHeard` that has them reprogrammed once.
public enum CanaryEvent: Hashable, Sendable {
    /// Beacon `beacon` (its number, from 1) is still not heard, `for` since it last was: it
    /// was reprogrammed once already, and is reported again every `--canary-after`.
    case stillNotHeard(beacon: Int, for: Duration)
    /// Beacon `beacon` is heard again after `after` unheard.
    case heardAgain(beacon: Int, after: Duration)
    /// How long ago each beacon, in order, was last heard (nil: not yet), every few seconds
    /// (for the service's status).
    case lastHeard([Duration?])
}
