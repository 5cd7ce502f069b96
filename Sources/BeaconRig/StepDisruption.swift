// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// A disruption of the beacons on the air during a step, in words (`ScenarioOutcome.disruptions`).
public struct StepDisruption: Sendable {
    public var number: String
    public var round: String?
    public var at: Double
    public var text: String
}
