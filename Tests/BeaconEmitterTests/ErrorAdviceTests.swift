// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconEmitter
@testable import BeaconHost
import Foundation
import Testing

/// What the command adds to the library's facts: advice naming its options.
@Suite struct ErrorAdviceTests {
    @Test func kernelWithoutBluetooth() {
        let saved = HostError.kernelHasBluetooth
        defer { HostError.kernelHasBluetooth = saved }
        HostError.kernelHasBluetooth = { false }
        let error = HostError.kernel(call: "hci_open_dev(0)", errno: 97, adapter: "hci0", adapters: [])
        #expect(error.message.hasPrefix("hci_open_dev(0): Address family not supported by protocol (errno 97): "
                                            + "this kernel has no Bluetooth support"))
        // The same errno from a kernel with Bluetooth: a network namespace of its own (a container).
        HostError.kernelHasBluetooth = { true }
        #expect(error.message.hasSuffix("where the kernel refuses Bluetooth sockets: run it in the host's network "
                                            + "namespace (podman or docker run --net=host)"))
    }

    @Test func noAdapterUpByDefaultSaysSo() {
        let error = HostError.kernel(call: "hci_get_route", errno: 19, adapter: nil, adapters: ["hci0 (down)"])
        #expect(error.message.contains("no adapter is up (adapters: hci0 (down)): bring one up with --device hci0 --up"))
    }

    @Test func adapterDownOffersUp() {
        let error = HostError.transport(.system(call: "write(hci0)", errno: 100), device: "hci0")
        #expect(error.message.contains("hci0 is down: add --up"))
    }

    @Test func missingCapabilityPrintsTheSetcapLine() {
        for code: Int32 in [1, 13] {
            let error = HostError.transport(.system(call: "write(hci0)", errno: code), device: "hci0")
            #expect(error.message.contains("sudo setcap cap_net_raw,cap_net_admin+eip /"))
        }
    }

    @Test func commandDisallowedNamesTheLikelyCauses() {
        let error = HostError.controllerRefused(opcode: .leSetAdvertisingEnable, status: .commandDisallowed, context: nil)
        #expect(error.message.hasPrefix("controller refused LE Set Advertising Enable: Command Disallowed (0x0C); "))
        #expect(error.message.contains("other advertising mode"))
        #expect(error.message.contains("bluetoothd"))
        let parameters = HostError.controllerRefused(opcode: .leSetAdvertisingParameters, status: .commandDisallowed,
                                                     context: nil)
        #expect(parameters.message.contains("advertising is already active"))
    }

    @Test func parameterRefusalsSayWhichParameter() {
        let interval = HostError.controllerRefused(opcode: .leSetAdvertisingParameters,
                                                   status: .unsupportedFeatureOrParameterValue,
                                                   context: "interval 10 ms = 16 x 0.625 ms")
        #expect(interval.message.contains("(interval 10 ms = 16 x 0.625 ms)"))
        #expect(interval.message.contains("the standard allows 20 to 10240 ms (legacy advertising)"))
        let extended = HostError.controllerRefused(opcode: .leSetExtendedAdvertisingParameters,
                                                   status: .unsupportedFeatureOrParameterValue, context: nil)
        #expect(extended.message.contains("the standard allows 20 to 10485759 ms (extended advertising)"))
        let invalid = HostError.controllerRefused(opcode: .leSetExtendedAdvertisingParameters,
                                                  status: .invalidCommandParameters, context: nil)
        #expect(invalid.message.contains("interval minimum above maximum"))
    }

    /// Command Disallowed means something different for each kind of command: only the
    /// advertising commands get the hint about legacy versus extended advertising.
    @Test func commandDisallowedHintFitsTheCommand() {
        func hint(_ opcode: HCIOpcode) -> String {
            HostError.controllerRefused(opcode: opcode, status: .commandDisallowed, context: nil).message
        }
        for opcode in [HCIOpcode.reset, .readBDAddr, .readLocalVersionInformation] {
            #expect(!hint(opcode).contains("advertising"), "\(opcode)")
            #expect(hint(opcode).contains("does not allow this command in its present state"))
        }
        for opcode in [HCIOpcode.leSetScanEnable, .leSetExtendedScanParameters] {
            #expect(!hint(opcode).contains("advertising mode"), "\(opcode)")
            #expect(hint(opcode).contains("scanning"))
        }
        #expect(hint(.leSetAdvertisingData).contains("other advertising mode (legacy vs extended)"))
        #expect(hint(.leSetExtendedAdvertisingParameters).contains("advertising is already active"))
    }

    /// A refusal in the command's words: the option (the run's) or the beacon's field, the
    /// library's fact, and what to do.
    @Test func refusalsNameTheOptionsThatHelp() {
        #expect(Refusal(.txPower, .legacyChosen).message
                    == "--tx-power: needs extended advertising, which legacy commands (asked for) do not have: "
                    + "drop --tx-power, or drop --legacy")
        #expect(Refusal(.codedPHY, beacon: 2, .kernelLacksCodedPHY(adapter: "hci0")).message
                    .hasPrefix("beacon 2's phy=coded: the kernel offers no Coded PHY advertising on hci0"))
        #expect(Refusal(.codedPHY, beacon: 2, .kernelLacksCodedPHY(adapter: "hci0")).message
                    .hasSuffix(": drop its phy=coded, or use --access raw"))
        // A beacon a scenario names is said by its name, found by its id.
        var named = Refusal(.codedPHY, beacon: 2, .kernelLacksCodedPHY(adapter: "hci0"))
        named.beaconName = "door"
        #expect(named.message.hasPrefix("'door''s phy=coded: the kernel offers no Coded PHY advertising on hci0"), "\(named.message)")
        #expect(Refusal(.mode(.extended), .controllerLacksExtended).message
                    .hasSuffix(": drop --extended to use legacy advertising"))
        #expect(HostError.refused(Refusal(nil, .instancesTaken(adapter: "hci1", index: 1, maximum: 2, taken: [1, 2])))
                    .message.contains("(instances 1, 2: bluetoothd's, or `btmgmt add-adv`'s): remove one "
                                      + "(`btmgmt --index 1 rm-adv N`)"))
        #expect(HostError.refused(Refusal(.bringUp, .needsAdapterName)).message
                    == "--up: it needs a kernel adapter named by number (hci0): name the adapter: --device hci0")
        #expect(AdvertisingOptionError(Refusal(.randomAddress, .kernelChoosesAddress)).message.hasSuffix(": use --access raw"))
        #expect(HostError.refused(Refusal(nil, beacon: 1, .lastBeacon)).message
                    == "beacon 1: it is the last one: removing it would end the advertising: stop beacon-emit to stop "
                    + "advertising")
    }

    @Test func mgmtStatusesSayWhatToDo() {
        let cases: [(MgmtStatus, String)] = [
            (.busy, "try again in a moment"),
            (.rejected, "btmgmt --index 0 advertising off"),
            (.notSupported, "use --access raw"),
            (.invalidParameters, "the interval (20 to 10240 ms)"),
            (.notPowered, "add --up"),
            (.permissionDenied, "setcap cap_net_raw,cap_net_admin+eip"),
            (.noResources, "advertise fewer beacons"),
        ]
        // Their exit statuses: ExitStatusTests.
        for (status, advice) in cases {
            let error = HostError.managementRefused(opcode: .addAdvertising, status: status, context: nil, adapter: "hci0")
            #expect(error.message.hasPrefix(error.description + "; "), "\(status): \(error.message)")
            #expect(error.message.contains(advice), "\(status): \(error.message)")
        }
    }
}
