// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// Read Advertising Features answering `maximum` instances with `taken` in use, intervals accepted.
func featuresStep(maximum: UInt8 = 3, taken: [UInt8] = [], intervals: Bool = true) -> ScriptedKernel.Step {
    let flags: UInt32 = intervals ? 0x0001_F4FF : 0x0000_00FF  // bits 0-7, and 10, 12-16 with intervals
    var parameters: [UInt8] = []
    parameters.appendLE(flags)
    parameters += [31, 31, maximum, UInt8(taken.count)] + taken
    return completes(ReadAdvertisingFeatures(), returning: parameters)
}

/// Add Extended Advertising Parameters then Data for the reference beacon on `instance`.
func addSteps(instance: UInt8, data: [UInt8] = referenceData) -> [ScriptedKernel.Step] {
    [
        completes(AddExtendedAdvertisingParameters(instance: instance, flags: [.intervalParameters],
                                                   minimumInterval: 160, maximumInterval: 160),
                  returning: [instance, 0x00, 31, 31]),
        completes(try! AddExtendedAdvertisingData(instance: instance, advertisingData: data), returning: [instance]),
    ]
}

@Suite struct ManagedAdvertiserTests {
    func advertiser(_ kernel: ScriptedKernel, options: AdvertisingOptions = AdvertisingOptions(beacons: [referenceBeacon]))
        -> ManagedAdvertiser {
        ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0), options: options)
    }

    @Test func takesTheHighestNumberTheListProvesFreeAndRemovesOnlyItAtStop() throws {
        // Instance 3 is another program's (btmgmt add-adv ... 3): of 1 and 2, which the list proves
        // free, beacon-emit takes 2 (bluetoothd, counting from 1, reaches it later); 4 is not
        // proven free (Linux 6.x hides numbers above its count), so never taken. 3 is left alone.
        let kernel = ScriptedKernel([featuresStep(maximum: 4, taken: [3])] + addSteps(instance: 2)
                                    + [completes(RemoveAdvertising(instance: 2), returning: [2])])
        let advertiser = advertiser(kernel)
        let plan = try advertiser.start()
        #expect(plan.mode == .managed)
        #expect(plan.handles == [2])
        try advertiser.stop()
        #expect(kernel.remainingSteps == 0)
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 3).packet(index: 0)))
    }

    @Test func severalBeaconsReadTheListAgainBeforeEachInstance() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 4, taken: [1])] + addSteps(instance: 2)
                                    + [featuresStep(maximum: 4, taken: [1, 2])] + addSteps(instance: 3))
        let plan = try advertiser(kernel, options: AdvertisingOptions(beacons: [referenceBeacon, referenceBeacon])).start()
        #expect(plan.handles == [2, 3])
        #expect(!plan.rotating)
    }

    @Test func onlyNumbersTheListProvesFreeAreTaken() {
        func features(_ maximum: UInt8, _ taken: [UInt8]) -> ReadAdvertisingFeatures.ReturnParameters {
            .init(supportedFlags: [], maximumAdvertisingDataLength: 31, maximumScanResponseLength: 31,
                  maximumInstances: maximum, instances: taken)
        }
        #expect(features(5, []).provablyFreeInstances == [1], "an instance numbered 2 to 5 may be hidden")
        #expect(features(5, [1]).provablyFreeInstances == [2])
        #expect(features(5, [4]).provablyFreeInstances == [1, 2])
        #expect(features(5, [4]).highestFreeInstance() == 2)
        #expect(features(5, [4]).highestFreeInstance(excluding: [2]) == 1)
        #expect(features(2, [1, 2]).highestFreeInstance() == nil)
        #expect(features(0, []).highestFreeInstance() == nil)
    }

    @Test func allInstancesTakenIsAClearErrorBeforeAnythingIsAdded() {
        let kernel = ScriptedKernel([featuresStep(maximum: 2, taken: [1, 2])])
        do {
            try advertiser(kernel).start()
            Issue.record("no error")
        } catch {
            #expect(error.description.contains("all 2 advertising instances of hci0 are taken by other programs (instances 1, 2"))
            guard case let .refused(refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal == Refusal(nil, .instancesTaken(adapter: "hci0", index: 0, maximum: 2, taken: [1, 2])))
        }
        #expect(kernel.sent.count == 1, "only the features were read")
    }

    @Test func aRefusalHalfwayRemovesWhatWasAdded() {
        let beacons = [referenceBeacon, referenceBeacon]
        let kernel = ScriptedKernel([featuresStep(maximum: 2)] + addSteps(instance: 1) + [featuresStep(maximum: 2, taken: [1]),
            completes(AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters],
                                                       minimumInterval: 160, maximumInterval: 160), status: .busy),
            completes(RemoveAdvertising(instance: 1), returning: [1]),
            // Instance 2 was never ours (its parameters were refused): not touched.
        ])
        do {
            try advertiser(kernel, options: AdvertisingOptions(beacons: beacons)).start()
            Issue.record("no error")
        } catch {
            #expect(error.description.hasPrefix("the kernel refused Add Extended Advertising Parameters on hci0"))
            #expect(error.description.contains("Busy (0x0A)"))
            #expect({ if case .managementRefused(.addExtendedAdvertisingParameters, .busy, _, "hci0") = error { true } else { false } }(),
                    "\(error)")
        }
        #expect(kernel.remainingSteps == 0)
    }

    @Test func anOlderKernelGetsAddAdvertisingAtItsOwnInterval() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 1, intervals: false),
                                     completes(try AddAdvertising(instance: 1, advertisingData: referenceData), returning: [1])])
        var steps: [String] = []
        let advertiser = advertiser(kernel)
        advertiser.log = { steps.append($0) }
        #expect(try advertiser.start().handles == [1])
        #expect(steps.contains { $0.contains("the kernel's default applies, not the interval asked") })
    }

    @Test func optionsOnlyHCICanHonourAreRefused() {
        for options in [AdvertisingOptions(beacons: [referenceBeacon], address: .generatedStaticRandom),
                        AdvertisingOptions(beacons: [referenceBeacon], mode: .legacy)] {
            let kernel = ScriptedKernel([])
            #expect(throws: HostError.self) { try advertiser(kernel, options: options).start() }
            #expect(kernel.sent.isEmpty)
        }
    }

    @Test func restoreUpdatesTheInstanceOrAddsItAfresh() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 1)] + addSteps(instance: 1) + [
            // After a reset under the kernel the update fails (the kernel removes the instance) ...
            completes(AddExtendedAdvertisingParameters(instance: 1, flags: [.intervalParameters],
                                                       minimumInterval: 160, maximumInterval: 160), status: .failed),
            completes(RemoveAdvertising(instance: 1), status: .invalidParameters),
            featuresStep(maximum: 1),  // the list proves it gone
        ] + addSteps(instance: 1))  // ... and the instance is added afresh.
        let advertiser = advertiser(kernel)
        try advertiser.start()
        try advertiser.restore()
        #expect(kernel.remainingSteps == 0)
    }

    @Test func aStuckInstanceIsDroppedThroughAFailedUpdate() throws {
        // Linux after hciconfig down/up: the removal fails, an update fails, and the kernel drops it.
        let kernel = ScriptedKernel([featuresStep(maximum: 1)] + addSteps(instance: 1) + [
            completes(RemoveAdvertising(instance: 1), status: .failed),
            completes(AddExtendedAdvertisingParameters(instance: 1, flags: [.intervalParameters],
                                                       minimumInterval: 0x0800, maximumInterval: 0x0800), status: .failed),
            completes(RemoveAdvertising(instance: 1), status: .invalidParameters),
            featuresStep(maximum: 1),
        ])
        let advertiser = advertiser(kernel)
        try advertiser.start()
        try advertiser.stop()
        #expect(advertiser.plan == nil)
        #expect(kernel.remainingSteps == 0)
    }

    /// Linux 6.1, the adapter going down under a run that ends then (`--fail-fast`): Remove
    /// Advertising answers Invalid Parameters (no such instance), yet the kernel lists the
    /// instance, and puts it back on the air when the adapter comes up. It stays ours, in the
    /// record, for `beacon-emit stop`; only where the list proves it free is it gone.
    @Test func noSuchInstanceIsBelievedOnlyWhereTheListProvesIt() throws {
        for listed in [true, false] {
            let kernel = ScriptedKernel([featuresStep(maximum: 3)] + addSteps(instance: 1) + [
                completes(RemoveAdvertising(instance: 1), status: .invalidParameters),
                featuresStep(maximum: 3, taken: listed ? [1] : []),
            ])
            let advertiser = advertiser(kernel)
            var recorded: [[UInt8]] = []
            advertiser.instancesChanged = { recorded.append($0) }
            try advertiser.start()
            if listed {
                #expect { try advertiser.stop() } throws: { "\($0)".contains("instance 1 does not exist, yet its list does not show it free") }
                #expect(advertiser.ours == [1] && recorded.last == [1], "kept as ours: \(recorded)")
            } else {
                try advertiser.stop()
                #expect(advertiser.ours.isEmpty && recorded.last == [], "\(recorded)")
            }
            #expect(kernel.remainingSteps == 0)
        }
    }

    /// The kernel lists an instance free that the controller has no set for (No Resources: the
    /// kernel's own set 0, made when LE is switched on while powered, is not an instance): the
    /// beacons from there on take turns on the instance already ours, said in a warning, not the
    /// end of the run; the refused number is never touched again.
    @Test func noRoomOnTheControllerForAListedInstanceMakesTheRestTakeTurns() throws {
        let beacons = [referenceBeacon, LiveChangeTests.minor3, referenceBeacon]
        let kernel = ScriptedKernel([featuresStep(maximum: 3, taken: [1])] + addSteps(instance: 2)
            + [featuresStep(maximum: 3, taken: [1, 2]),
               completes(AddExtendedAdvertisingParameters(instance: 3, flags: [.intervalParameters],
                                                          minimumInterval: 160, maximumInterval: 160), status: .noResources),
               // The first turn: beacon 2's data on instance 2.
               completes(try AddExtendedAdvertisingData(instance: 2, advertisingData: LiveChangeTests.minor3Data), returning: [2]),
               completes(RemoveAdvertising(instance: 2), returning: [2])])
        let advertiser = advertiser(kernel, options: AdvertisingOptions(beacons: beacons))
        var warnings: [String] = []
        advertiser.warn = { warnings.append($0) }
        let plan = try advertiser.start()
        #expect(plan.handles == [2])
        #expect(plan.rotating && plan.firstTurn == 0)
        #expect(warnings.contains { $0.contains("hci0 has no room for instance 3 though the kernel lists it free")
                                    && $0.contains("3 beacons take turns on instance 2") }, "\(warnings)")
        try advertiser.rotate()
        try advertiser.stop()
        #expect(kernel.remainingSteps == 0, "\(kernel.sent)")
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 3).packet(index: 0)))
    }

    /// The first instance refused for want of room is the end of the start (nothing to share).
    @Test func noRoomForTheFirstInstanceIsAnError() {
        let kernel = ScriptedKernel([featuresStep(maximum: 3),
            completes(AddExtendedAdvertisingParameters(instance: 1, flags: [.intervalParameters],
                                                       minimumInterval: 160, maximumInterval: 160), status: .noResources)])
        #expect { try advertiser(kernel).start() } throws: { "\($0)".contains("No Resources (0x07)") }
    }

    /// A beacon added while running, refused room the same way, takes turns on the last instance.
    @Test func anAddedBeaconWithNoRoomTakesTurns() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 3)] + addSteps(instance: 1)
            + [featuresStep(maximum: 3, taken: [1]),
               completes(AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters],
                                                          minimumInterval: 160, maximumInterval: 160), status: .noResources)])
        let advertiser = advertiser(kernel)
        var warnings: [String] = []
        advertiser.warn = { warnings.append($0) }
        try advertiser.start()
        #expect(try advertiser.live.add(LiveChangeTests.minor3) == 2)
        #expect(advertiser.plan?.handles == [1] && advertiser.plan?.rotating == true)
        #expect(warnings.contains { $0.contains("2 beacons take turns on instance 1") }, "\(warnings)")
        #expect(kernel.remainingSteps == 0)
    }

    @Test func anInstanceTheKernelWillNotRemoveStaysInThePlan() throws {
        let kernel = ScriptedKernel([featuresStep(maximum: 1)] + addSteps(instance: 1)
                                    + [completes(RemoveAdvertising(instance: 1), status: .busy)])
        let advertiser = advertiser(kernel)
        try advertiser.start()
        #expect(throws: HostError.self) { try advertiser.stop() }
        #expect(advertiser.plan?.handles == [1], "kept for beacon-emit stop to finish")
    }

}
