// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// What happens during a run, as it happens. Times are seconds since the run began.
public enum ScenarioEvent: Sendable {
    /// A step begins. `number` is its position ("3", or "4.2" inside a repeat), `round` its
    /// round of a repeat (1 of 3), `text` what it does.
    case step(number: String, round: String?, place: Scenario.Place, text: String, at: Double)
    /// An expectation's verdict.
    case expectation(ScenarioResult)
    /// The observer received a beacon's new data after an update; `gap`: from the last report
    /// of its old data to the first of the new (nil if the old data was never received): the
    /// time the beacon was not heard across the change.
    case updateArrived(beacon: String, at: Double, afterUpdate: Double, gap: Double?)
    /// A region's state changed (Core Location's timing).
    case region(String, RegionMonitor.Event)
    /// The boxes a step changed answered: each box's delay from the step's first request to
    /// its reply, in seconds.
    case applied(number: String, round: String?, hosts: [(host: String, seconds: Double)], at: Double)
    /// Something knocked this machine's beacons off the air, or they are back (`advertise`'s
    /// supervisor's report), during step `number`.
    case supervision(EmitterEvent, number: String, round: String?, at: Double)
    /// A line of a phone's log, as received.
    case phone(PhoneLine)
}
