// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

@Suite struct HostErrorTests {
    @Test func noSuchAdapterListsWhatExists() {
        let error = HostError.kernel(call: "hci_open_dev(3)", errno: 19, adapter: "hci3", adapters: ["hci0 (up)"])
        #expect(error.description.contains("no such adapter (adapters: hci0 (up))"))
    }

    @Test func timeoutAndClosedLink() {
        let timeout = HostError.commandTimeout(opcode: .reset, timeout: .seconds(2), ignored: nil)
        #expect(timeout.description.hasPrefix("no answer from the controller to Reset within 2.0 seconds: check"))
        let flooded = HostError.commandTimeout(opcode: .reset, timeout: .seconds(2), ignored: "3 events that do not parse")
        #expect(flooded.description.contains("(meanwhile it sent 3 events that do not parse, all ignored)"))
        // scan and info close links too: the message says nothing about advertising.
        let closed = HostError.transport(.closed(transport: "tcp:x:1"), device: "tcp:x:1")
        #expect(closed.description == "tcp:x:1: the controller connection closed while in use")
    }

    /// The library says what failed, in its own terms: no error names an option of the
    /// command (the command adds its advice: ErrorAdviceTests).
    @Test func factsNameNoOption() {
        let errors: [HostError] = [
            .kernel(call: "hci_open_dev(0)", errno: 97, adapter: "hci0", adapters: []),
            .kernel(call: "hci_get_route", errno: 19, adapter: nil, adapters: ["hci0 (down)"]),
            .transport(.system(call: "write(hci0)", errno: 100), device: "hci0"),
            .transport(.system(call: "write(hci0)", errno: 1), device: "hci0"),
            .userChannel(errno: 16, adapter: "hci0"),
            .controllerRefused(opcode: .leSetAdvertisingParameters, status: .unsupportedFeatureOrParameterValue,
                               context: "interval 10 ms = 16 x 0.625 ms"),
            .managementRefused(opcode: .addAdvertising, status: .noResources, context: nil, adapter: "hci0"),
            .refused(Refusal(.txPower, .legacyChosen)),
            .refused(Refusal(.codedPHY, beacon: 2, .kernelLacksCodedPHY(adapter: "hci0"))),
            .refused(Refusal(nil, .instancesTaken(adapter: "hci0", index: 0, maximum: 2, taken: [1, 2]))),
            .refused(Refusal(.kernelAccess(.userChannel), .needsAdapterName)),
            .refused(Refusal(nil, beacon: 2, .lastBeacon)),
            .refused(Refusal(.scanResponse, .scanResponseOnCodedPHY)),
            .unencodable(CodecError(structure: "LE Set Advertising Data", offset: 0,
                                    reason: .unexpectedValue(field: "data", expected: "at most 31 bytes", found: "40")),
                         command: "LE Set Advertising Data"),
        ]
        for error in errors {
            #expect(error.description.range(of: "--[a-z]", options: .regularExpression) == nil, "\(error)")
        }
        let lowEnergy = HostError.refused(Refusal(nil, .lowEnergyOff(adapter: "hci1", index: 1)))
        #expect(lowEnergy.description == "hci1 has LE switched off")
        let power = HostError.refused(Refusal(.txPower, beacon: 3, .controllerLacksExtended))
        #expect(power.description.hasPrefix("beacon 3's TX power: needs extended advertising"))
        #expect(HostError.kernel(call: "hci_get_route", errno: 19, adapter: nil, adapters: ["hci0 (down)"]).description
                    .hasSuffix("no adapter is up (adapters: hci0 (down))"))
    }
}

@Suite struct DeviceSpecificationTests {
    @Test(arguments: [
        ("hci0", DeviceSpecification.kernel(index: 0)),
        ("1", .kernel(index: 1)),
        ("tcp:127.0.0.1:6402", .tcp(host: "127.0.0.1", port: 6402)),
        ("tcp:[::1]:6402", .tcp(host: "::1", port: 6402)),
        ("serial:/dev/ttyACM0", .serial(path: "/dev/ttyACM0", baud: 115_200)),
        ("serial:/dev/ttyUSB1:1000000", .serial(path: "/dev/ttyUSB1", baud: 1_000_000)),
        ("virtual", .virtual),
        ("00:aa:01:00:00:07", .adapter(address: BluetoothAddress(0x00AA_0100_0007))),
        ("00-AA-01-00-00-07", .adapter(address: BluetoothAddress(0x00AA_0100_0007))),
    ])
    func parses(text: String, expected: DeviceSpecification) throws {
        #expect(try DeviceSpecification(parsing: text) == expected)
    }

    @Test(arguments: ["hciX", "tcp:host", "tcp::6402", "tcp:h:70000", "serial:ttyS0", "serial:/dev/ttyS0:1234", "usb",
                      "00:AA:01:00:00", "00:AA:01:00:00:0G"])
    func rejects(text: String) {
        #expect(throws: HostError.self) { try DeviceSpecification(parsing: text) }
    }

    @Test func onlyKernelAdaptersAreShared() {
        #expect(!DeviceSpecification.kernel(index: 0).ownsController)
        #expect(!DeviceSpecification.adapter(address: BluetoothAddress(1)).ownsController)
        #expect(DeviceSpecification.tcp(host: "h", port: 1).ownsController)
        #expect(DeviceSpecification.virtual.ownsController)
    }

    /// An address no adapter has (these machines have none) is the missing-adapter error,
    /// naming the address; other devices resolve to themselves.
    @Test func anAddressNoAdapterHasIsNoSuchAdapter() throws {
        let missing = DeviceSpecification.adapter(address: try BluetoothAddress(parsing: "00:AA:01:00:00:07"))
        #expect(missing.description == "the adapter 00:AA:01:00:00:07")
        #expect(missing.adapterAddress == BluetoothAddress(0x00AA_0100_0007))
        do {
            _ = try missing.resolved()
            Issue.record("resolved an address no adapter has")
        } catch {
            #expect({ if case .kernel(_, ENODEV, _, _) = error { true } else { false } }(), "\(error)")
            #expect(error.description.contains("find the adapter with address 00:AA:01:00:00:07"), "\(error)")
        }
        #expect(try DeviceSpecification.kernel(index: 3).resolved() == .kernel(index: 3))
        #expect(try DeviceSpecification.virtual.resolved() == .virtual)
    }
}

@Suite struct EmitterTests {
    @Test func signalDisablesAdvertisingBeforeReturning() throws {
        let transport = ScriptedTransport(extendedSteps + extendedStop)
        let controller = HCIController(transport: transport)
        var events: [String] = []
        let emitter = Emitter(controller: controller, ownsController: false) { event in
            if case let .stopped(reason, keptOn) = event { events.append("\(reason) \(keptOn)") }
        }
        let advertiser = Advertiser(controller: controller, options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start(capabilities: capabilities(extended: true))
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        try emitter.run(advertiser, duration: .seconds(5), keep: false, interrupt: fds[0])
        #expect(transport.remainingSteps == 0, "disable and remove were sent")
        #expect(events.count == 1)
        close(fds[0])
        close(fds[1])
    }

    @Test func keepLeavesAdvertisingOn() throws {
        let transport = ScriptedTransport(extendedSteps)
        let controller = HCIController(transport: transport)
        let emitter = Emitter(controller: controller, ownsController: false) { _ in }
        let advertiser = Advertiser(controller: controller, options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start(capabilities: capabilities(extended: true))
        try emitter.run(advertiser, duration: .milliseconds(20), keep: true, interrupt: nil)
        #expect(transport.sent.count == extendedSteps.count, "nothing sent after enabling")
    }

    @Test func linkClosingMidRunIsAnErrorAfterTryingToDisable() throws {
        let transport = ScriptedTransport(extendedSteps)
        transport.closeWhenDone = true
        let controller = HCIController(transport: transport)
        let emitter = Emitter(controller: controller, ownsController: false) { _ in }
        let advertiser = Advertiser(controller: controller, options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start(capabilities: capabilities(extended: true))
        #expect(throws: HostError.self) { try emitter.run(advertiser, duration: .seconds(5), keep: false, interrupt: nil) }
    }
}
