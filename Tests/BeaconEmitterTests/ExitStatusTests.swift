// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconEmitter
import BeaconHost
import Foundation
import Testing

/// The exit status each host error means for `beacon-emit`: the README's table (64 usage, 69
/// no usable controller, 74 the link failed, 75 no answer, 76 refused, 77 permission).
@Suite struct ExitStatusTests {
    @Test func eachHostErrorExitsWithTheREADMEsStatus() {
        let cases: [(HostError, Int32)] = [
            (.invalidDevice("hci", reason: "expected hciN"), 64),
            (.kernel(call: "hci_open_dev(0)", errno: 97, adapter: "hci0", adapters: []), 69),
            (.kernel(call: "hci_open_dev(3)", errno: 19, adapter: "hci3", adapters: ["hci0 (up)"]), 69),
            (.kernel(call: "socket", errno: 1, adapter: nil, adapters: []), 77),
            (.transport(.system(call: "write(hci0)", errno: 100), device: "hci0"), 69),
            (.transport(.system(call: "write(hci0)", errno: 1), device: "hci0"), 77),
            (.transport(.system(call: "write(hci0)", errno: 13), device: "hci0"), 77),
            (.transport(.system(call: "connect", errno: 111), device: "tcp:x:1"), 69),
            (.transport(.system(call: "open", errno: 2), device: "/dev/ttyUSB0"), 69),
            (.transport(.closed(transport: "tcp:x:1"), device: "tcp:x:1"), 74),
            (.userChannel(errno: 16, adapter: "hci0"), 69),
            (.controllerRefused(opcode: .leSetAdvertisingEnable, status: .commandDisallowed, context: nil), 76),
            (.hardwareError(code: 1), 76),
            (.malformedEvent(CodecError(structure: "HCI event", offset: 0, reason: .unexpectedValue(field: "code", expected: "an event code", found: "0x00"))), 76),
            (.commandTimeout(opcode: .reset, timeout: .seconds(2), ignored: nil), 75),
            (.managementTimeout(opcode: .addAdvertising, timeout: .seconds(2)), 75),
            (.unsupported("all 2 advertising instances of hci0 are taken"), 69),
            (.refused(Refusal(nil, .instancesTaken(adapter: "hci0", index: 0, maximum: 2, taken: [1, 2]))), 69),
            (.refused(Refusal(.txPower, .legacyChosen)), 69),
            (.unencodable(CodecError(structure: "Add Advertising", offset: 0, reason: .trailingBytes(count: 1)),
                          command: "Add Advertising"), 69),
            (.virtualController("cannot start"), 69),
            (.interrupted(by: .controllerReset, .commandTimeout(opcode: .reset, timeout: .seconds(1), ignored: nil)), 75),
        ]
        for (error, status) in cases {
            #expect(error.exitStatus == status, "\(error)")
        }
    }

    @Test func theKernelsRefusalsExitByWhatTheyMean() {
        let cases: [(MgmtStatus, Int32)] = [
            (.busy, 76), (.rejected, 76), (.invalidParameters, 76), (.noResources, 76),
            (.notSupported, 69), (.notPowered, 69), (.invalidIndex, 69), (.unknownCommand, 69), (.rfKilled, 69),
            (.permissionDenied, 77),
        ]
        for (status, exitStatus) in cases {
            let error = HostError.managementRefused(opcode: .addAdvertising, status: status, context: nil, adapter: "hci0")
            #expect(error.exitStatus == exitStatus, "\(status)")
        }
    }
}
