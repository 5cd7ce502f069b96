// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// One expectation's verdict.
public struct ScenarioResult: Sendable {
    public var number: String
    public var round: String?
    public var place: Scenario.Place
    public var text: String
    public var passed: Bool
    /// When the step began and when its verdict was reached.
    public var started: Double
    public var ended: Double
    /// What met the expectation, or what was seen instead.
    public var detail: String
}
