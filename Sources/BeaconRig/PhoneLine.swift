// SPDX-License-Identifier: GPL-2.0-or-later

/// A line of a phone's log: its text, when it was received (the run's clock), and what it
/// says where one of the phone's patterns matched it: a transition or state, and of which
/// region (nil: the line names none, so it counts for every region).
public struct PhoneLine: Sendable, Equatable {
    public var phone: String
    public var text: String
    public var at: Double
    public var region: String?
    public var transition: Scenario.PhoneExpectation?

    public init(phone: String, text: String, at: Double, region: String? = nil, transition: Scenario.PhoneExpectation? = nil) {
        self.phone = phone
        self.text = text
        self.at = at
        self.region = region
        self.transition = transition
    }

    /// Whether it is a transition or state of `region`.
    public func concerns(_ region: String) -> Bool {
        transition != nil && (self.region == nil || self.region == region)
    }
}
