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
    /// A phone's expectation: the phone, the region, its app's line and the latency.
    public var phone: PhoneVerdict?

    public init(number: String, round: String?, place: Scenario.Place, text: String, passed: Bool, started: Double,
                ended: Double, detail: String) {
        self.number = number
        self.round = round
        self.place = place
        self.text = text
        self.passed = passed
        self.started = started
        self.ended = ended
        self.detail = detail
    }
}
