// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A scenario's beacons as the kernel's instances (`run --access mgmt`), kept on the air as
/// `advertise`'s are: the same session (`ManagedSession`) and the same supervisor.
@Suite struct SupervisedInstancesTests {
    /// The advertising core with no beacons yet, its beacons coming and going.
    static func core(_ client: MgmtClient) -> ManagedAdvertiser {
        ManagedAdvertiser(client: client, options: AdvertisingOptions(beacons: [], intervalUnits: 160))
    }

    /// hci0 with instances 1 to 3, 1 another program's; our first beacon is on 2, and the
    /// takeover watch knows our socket.
    func sets(_ extra: [ScriptedKernel.Step]) throws -> (EmitterRun, BeaconID, ScriptedKernel, ScriptedMonitor) {
        let kernel = ScriptedKernel([featuresStep(taken: [1]), featuresStep(taken: [1])] + addSteps(instance: 2) + extra)
        let client = MgmtClient(transport: kernel, index: 0)
        let monitor = ScriptedMonitor()
        let watch = TakeoverWatch(transport: monitor, index: 0, process: "beacon-emit")
        client.sent = { watch.sent($0) }
        let advertiser = Self.core(client)
        try advertiser.start()
        let session = ManagedSession(advertiser: advertiser, watch: watch, openMonitor: { _ in nil })
        let run = EmitterRun(stage: session, device: "hci0")
        let handle = try run.live.add(referenceBeacon, parameters: .run)
        monitor.opened(TakeoverWatchTests.ours, "beacon-emit")
        for packet in kernel.sent { monitor.command(TakeoverWatchTests.ours, packet) }
        return (run, handle, kernel, monitor)
    }

    /// A beacon's own address is the kernel's to pick through the management API: refused
    /// before anything is sent, saying what to use.
    @Test func aBeaconsOwnAddressIsRefusedThroughTheKernel() throws {
        let kernel = ScriptedKernel([featuresStep(taken: [])])
        let advertiser = Self.core(MgmtClient(transport: kernel, index: 0))
        try advertiser.start()
        let sent = kernel.sent.count
        #expect {
            try advertiser.live.add(referenceBeacon, parameters: BeaconParameters(address: .generatedStaticRandom))
        } throws: { "\($0)".contains("beacon 1's address static: through the management API the kernel chooses the address") }
        #expect(kernel.sent.count == sent)
    }

    /// The supervisor's restore, once `Emitter.settleTime` has passed.
    func serveAfterSettling(_ run: EmitterRun) throws {
        Thread.sleep(forTimeInterval: 0.15)
        try run.turn()
    }

    /// bluetoothd writes our instance: noticed, off the air; a change meanwhile goes into the
    /// books only; the restore puts the changed beacon on the highest number proven free (never
    /// on bluetoothd's 2); the beacon keeps its handle, and later changes and the stop go to its
    /// new instance only.
    @Test func aTakenInstanceMovesWithItsChangesAndKeepsItsHandle() throws {
        let (run, handle, kernel, monitor) = try sets(
            [featuresStep(taken: [1, 2])] + addSteps(instance: 3, data: ComeAndGoTests.minor3Data)
            + [completes(try AddExtendedAdvertisingData(instance: 3, advertisingData: referenceData), returning: [3]),
               completes(RemoveAdvertising(instance: 3), returning: [3])])
        #expect(handle == 1)
        try run.turn()
        #expect(!run.isOffAir, "our own commands are not a takeover")
        monitor.foreignAdd(TakeoverWatchTests.bluetoothd, "bluetoothd", instance: 2)
        try run.turn()
        #expect(run.isOffAir)
        let sent = kernel.sent.count
        try run.live.update(handle, to: ComeAndGoTests.minor3)
        #expect(kernel.sent.count == sent, "a change off the air goes into the books only")
        try serveAfterSettling(run)
        #expect(!run.isOffAir)
        let events = run.takeEvents()
        guard events.count == 2, case let .offAir(cause) = events[0], case .restored = events[1] else {
            Issue.record("events \(events)")
            return
        }
        #expect(cause == .instanceTakenOver(2, by: "bluetoothd"))
        try run.live.update(handle, to: referenceBeacon)
        try run.live.removeAll()
        #expect(kernel.remainingSteps == 0)
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 2).packet(index: 0)), "instance 2 is bluetoothd's now")
    }

    /// Powered off (the kernel removes our instance) and on again: waited for, then the beacon
    /// goes back on its own number, which the list proves free; a beacon removed while off the
    /// air sends nothing.
    @Test func aPowerCycleCostsOneGapAndTheBeaconGoesBackOnItsNumber() throws {
        let (run, handle, kernel, _) = try sets(
            [featuresStep(taken: [1, 2])] + addSteps(instance: 3, data: ComeAndGoTests.minor3Data)
            + [featuresStep(taken: [1])] + addSteps(instance: 2)
            + [completes(RemoveAdvertising(instance: 2), returning: [2])])
        let second = try run.live.add(ComeAndGoTests.minor3, parameters: .run)
        #expect(second == 2, "its id; the kernel script checks it went on instance 3")
        kernel.deliver([.newSettings([.lowEnergy]), .advertisingRemoved(instance: 2), .advertisingRemoved(instance: 3)])
        try run.turn()
        #expect(run.isOffAir)
        let sent = kernel.sent.count
        try run.live.remove(second)
        #expect(kernel.sent.count == sent, "removed in the books: the kernel removed it already")
        try serveAfterSettling(run)
        #expect(run.isOffAir, "not before the adapter is powered again")
        kernel.deliver([.newSettings([.lowEnergy, .powered])])
        try run.turn()
        try serveAfterSettling(run)
        #expect(!run.isOffAir)
        let events = run.takeEvents()
        #expect(events.count == 3, "off the air, waiting, restored: \(events)")
        if case let .offAir(cause) = events.first { #expect(cause == .poweredOff) } else { Issue.record("events \(events)") }
        if case .restored = events.last {} else { Issue.record("events \(events)") }
        try run.live.removeAll()
        #expect(kernel.remainingSteps == 0)
        #expect(handle == 1)
    }

    /// A beacon added while the beacons are off the air (powered off) sends nothing; at the
    /// restore the first goes back on its number and the new one on the highest number the
    /// kernel's list proves free; changes and the stop then go to each one's instance.
    @Test func aBeaconAddedWhileOffTheAirGetsAnInstanceAtTheRestore() throws {
        let (run, handle, kernel, _) = try sets(
            [featuresStep(taken: [1])] + addSteps(instance: 2) + addSteps(instance: 3, data: ComeAndGoTests.minor3Data)
            + [completes(try AddExtendedAdvertisingData(instance: 3, advertisingData: referenceData), returning: [3]),
               completes(RemoveAdvertising(instance: 3), returning: [3]),
               completes(RemoveAdvertising(instance: 2), returning: [2])])
        kernel.deliver([.newSettings([.lowEnergy]), .advertisingRemoved(instance: 2)])
        try run.turn()
        #expect(run.isOffAir)
        let sent = kernel.sent.count
        let added = try run.live.add(ComeAndGoTests.minor3, parameters: .run)
        #expect(kernel.sent.count == sent, "added in the books only")
        #expect(added != handle)
        kernel.deliver([.newSettings([.lowEnergy, .powered])])
        try run.turn()
        try serveAfterSettling(run)
        #expect(!run.isOffAir)
        try run.live.update(added, to: referenceBeacon)
        try run.live.removeAll()
        #expect(kernel.remainingSteps == 0, "\(kernel.remainingSteps) steps left")
    }
}
