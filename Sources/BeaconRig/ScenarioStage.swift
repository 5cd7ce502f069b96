// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// What advertises a scenario's beacons, by name.
public protocol ScenarioStage: AnyObject {
    /// Puts a beacon on the air with its own parameters (`.run`: the run's).
    func advertise(_ name: String, _ beacon: Beacon, parameters: BeaconParameters) throws(HostError)
    /// Changes a beacon on the air in place (its data only).
    func update(_ name: String, to beacon: Beacon) throws(HostError)
    /// Changes a beacon's own parameters (interval, TX power): on the air, a short gap; off
    /// it, when it next goes on.
    func setParameters(_ name: String, _ parameters: BeaconParameters) throws(HostError)
    func stop(_ name: String) throws(HostError)
    /// Puts several beacons on the air at once, as one change where the stage can (a replay's
    /// beacons coming at one instant).
    func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError)
    /// Takes several beacons off the air at once, as one change where the stage can.
    func stop(_ names: [String]) throws(HostError)
    /// Takes every beacon off the air; at the end of a run, and after an error.
    func stopAll() throws(HostError)
    /// When the stage next has something to do by itself (beacons taking turns), in the
    /// runner's seconds; nil for never.
    var nextDeadline: Double? { get }
    /// Time passed (the runner's seconds): does what is due.
    func tick(now: Double) throws(HostError)
    /// Waits for what the step asked of other machines (`HostedStage`), in the observer's wait
    /// (`ScenarioObserver.wait(beside:while:)`: its scan goes on meanwhile), and says how it went.
    func finishStep(waitingIn observer: ScenarioObserver) -> StepSettlement
    /// Readable when the stage has input to take in (its controller's link, the kernel's
    /// watchers; they change after a restore): the observer's waits end then, and the runner
    /// ticks the stage.
    var wakeDescriptors: [Int32] { get }
    /// What happened to the beacons on the air since the last call: knocked off, waiting for
    /// the adapter, put back (the supervisor's reports, as `advertise` has them).
    func takeSupervisionEvents() -> [EmitterEvent]
}

extension ScenarioStage {
    /// One by one.
    public func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) {
        for each in beacons { try advertise(each.name, each.beacon, parameters: each.parameters) }
    }

    /// One by one.
    public func stop(_ names: [String]) throws(HostError) {
        for name in names { try stop(name) }
    }

    public var nextDeadline: Double? { nil }
    public func tick(now: Double) throws(HostError) {}
    public func finishStep(waitingIn observer: ScenarioObserver) -> StepSettlement { StepSettlement() }
    public var wakeDescriptors: [Int32] { [] }
    public func takeSupervisionEvents() -> [EmitterEvent] { [] }
}
