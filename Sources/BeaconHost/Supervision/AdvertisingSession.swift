// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One way of keeping beacons on the air that `Emitter.run` supervises: raw HCI (kernel
/// socket, user channel, H4 link) or the kernel's management interface.
package protocol AdvertisingSession: AnyObject {
    /// How the beacons are on the air (nil once stopped).
    var plan: AdvertisingPlan? { get }
    /// How many disruptions the session has seen so far, counting those not yet handed to the
    /// run loop, and the last of them: a change that fails while the count grows was
    /// interrupted by one (`LiveBeacons`).
    var disruptionsSeen: (count: Int, last: Disruption?) { get }
    /// After a command of a change or rotation failed: takes in what has arrived without
    /// waiting, and what the failure itself says (a set the controller no longer knows), so
    /// that `disruptionsSeen` is current.
    func catchUp(after failure: HostError)
    /// Takes in what has arrived on the session's sockets, without waiting: the next thing the
    /// supervisor acts on, or `.quiet` once there is nothing more. The caller's loop waits on
    /// `pollDescriptors` (with everything else it owns) and calls this after each wait.
    /// - Throws: `HostError` for failures it cannot turn into a disruption.
    func takeIn() throws(HostError) -> SessionSignal
    /// The sockets whose input `takeIn` reads, as they are now (none while a link is lost;
    /// new ones after a restore).
    var pollDescriptors: [Int32] { get }
    /// Whether the adapter can take advertising now.
    func availability() -> AdapterAvailability
    /// How long each beacon stays on the air when they take turns.
    var rotationPeriod: Duration { get }
    /// Puts the same beacons back.
    /// - Throws: `HostError` when the controller or kernel refuses.
    func restore() throws(HostError)
    /// With more beacons than sets, puts the next one on the air.
    func rotate() throws(HostError)
    /// Takes the beacons off the air and releases what the session added.
    func stop() throws(HostError)
    /// Has the session's commands wait for their answers in `loop` (nil: on their link alone),
    /// on the link it has now and on those it opens later.
    func waitForAnswers(in loop: (any CommandWaitLoop)?)
    /// What changes its beacons as transactions (`beacons(onStage:)`, `live`).
    var changer: BeaconChanger { get }
    /// Closes what the session opened itself (a link it opened again after the first closed,
    /// the kernel's reset and takeover watchers); the beacons stay as they are.
    func closeOwn()
}

extension AdvertisingSession {
    public func waitForAnswers(in loop: (any CommandWaitLoop)?) {}
}
