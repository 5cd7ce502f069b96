// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// How a run ended.
public struct ScenarioOutcome: Sendable {
    public var results: [ScenarioResult] = []
    /// The error that ended the run early (the beacons were taken off the air).
    public var error: HostError?
    public var interrupted = false
    public var duration: Double = 0
    /// What knocked the beacons off the air and put them back, by step.
    public var disruptions: [StepDisruption] = []
    /// On a timeline (paced waits: a replay's), how late its changes were made (each once its
    /// last command was answered) against when they were due, in seconds: the largest, the sum,
    /// and how many changes; and the most any was made early (an instant's changes start half
    /// their commands' time before it, so that they are made around it).
    public var lateness = Lateness()
    /// What the run did on its clock, for a report (`ScenarioReport`).
    public var timeline = ScenarioTimeline()

    public struct Lateness: Sendable {
        public var largest = 0.0
        public var total = 0.0
        public var largestEarliness = 0.0
        public var steps = 0
        public var mean: Double { steps > 0 ? total / Double(steps) : 0 }

        mutating func note(_ seconds: Double) {
            let late = max(0, seconds)
            largest = max(largest, late)
            largestEarliness = max(largestEarliness, -seconds)
            total += late
            steps += 1
        }
    }

    public var failures: Int { results.filter { !$0.passed }.count }
    public var passed: Bool { error == nil && !interrupted && failures == 0 }
}
