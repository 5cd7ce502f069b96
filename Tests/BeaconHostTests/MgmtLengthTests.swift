// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// The lengths the kernel's management interface accepts, written from BlueZ's
/// `doc/mgmt-api.txt` and the kernel's handler table (`net/bluetooth/mgmt.c`), not from the
/// codec: a fixed-size command must be exactly its size; a variable one at least its fixed part,
/// and Add Advertising and Add Extended Advertising Data exactly their fixed part plus the two
/// lengths they declare (the check Linux 6.12.93 and 6.18.34 made strict, which refused
/// bluetoothd's over-long commands with Invalid Parameters).
enum KernelLengthRule {
    /// Opcode: (fixed size, whether the data lengths declared at `declared` follow).
    static let sizes: [UInt16: (fixed: Int, declared: Int?)] = [
        0x0001: (0, nil),  // Read Management Version Information
        0x0003: (0, nil),  // Read Controller Index List
        0x0004: (0, nil),  // Read Controller Information
        0x0005: (1, nil),  // Set Powered
        0x000D: (1, nil),  // Set Low Energy
        0x0029: (1, nil),  // Set Advertising
        0x003D: (0, nil),  // Read Advertising Features
        0x003E: (11, 9),   // Add Advertising: Adv_Data_Len at 9, Scan_Rsp_Len at 10
        0x003F: (1, nil),  // Remove Advertising
        0x0054: (18, nil), // Add Extended Advertising Parameters (every field, as documented)
        0x0055: (3, 1),    // Add Extended Advertising Data: lengths at 1 and 2
    ]

    /// What the kernel would refuse in the bytes written to its socket, or nil.
    static func fault(_ wire: [UInt8]) -> String? {
        guard wire.count >= 6 else { return "\(wire.count) bytes: shorter than the header" }
        let opcode = UInt16(wire[0]) | UInt16(wire[1]) << 8
        let length = Int(wire[4]) | Int(wire[5]) << 8
        let parameters = Array(wire[6...])
        guard length == parameters.count else {
            return "opcode 0x\(String(opcode, radix: 16)): header says \(length) bytes, \(parameters.count) follow"
        }
        guard let rule = sizes[opcode] else {
            return "opcode 0x\(String(opcode, radix: 16)): not a command this rule knows (add it from mgmt-api.txt)"
        }
        guard let declared = rule.declared else {
            return length == rule.fixed ? nil
                : "opcode 0x\(String(opcode, radix: 16)): \(length) bytes, the kernel wants exactly \(rule.fixed)"
        }
        guard length >= rule.fixed else {
            return "opcode 0x\(String(opcode, radix: 16)): \(length) bytes, under the fixed \(rule.fixed)"
        }
        let wanted = rule.fixed + Int(parameters[declared]) + Int(parameters[declared + 1])
        return length == wanted ? nil
            : "opcode 0x\(String(opcode, radix: 16)): \(length) bytes, but its lengths declare \(wanted)"
    }
}

@Suite struct MgmtLengthTests {
    static let data = Array(referenceData)

    /// Every command type the host sends, at the smallest and largest content it can carry.
    static var commands: [(String, MgmtPacket)] {
        var all: [(String, MgmtPacket)] = [
            ("Read Index List", ReadControllerIndexList().packet(index: MgmtPacket.nonController)),
            ("Read Info", ReadControllerInformation().packet(index: 0)),
            ("Set Powered", SetPowered(powered: true).packet(index: 0)),
            ("Set Low Energy", SetLowEnergy(enabled: true).packet(index: 0)),
            ("Read Advertising Features", ReadAdvertisingFeatures().packet(index: 0)),
            ("Remove Advertising", RemoveAdvertising(instance: 3).packet(index: 0)),
            ("Add Extended Advertising Parameters",
             AddExtendedAdvertisingParameters(instance: 1, flags: [.intervalParameters], minimumInterval: 160,
                                              maximumInterval: 160, txPower: -4).packet(index: 0)),
        ]
        for (data, response) in [([UInt8](), [UInt8]()), (data, []), (data, [6, 9] + Array("Lobby".utf8)),
                                 (Array(repeating: 0xAB, count: 251), Array(repeating: 0xCD, count: 251))] {
            all.append(("Add Advertising \(data.count)+\(response.count)",
                        try! AddAdvertising(instance: 2, advertisingData: data, scanResponse: response).packet(index: 0)))
            all.append(("Add Extended Advertising Data \(data.count)+\(response.count)",
                        try! AddExtendedAdvertisingData(instance: 2, advertisingData: data, scanResponse: response)
                            .packet(index: 0)))
        }
        return all
    }

    @Test func everyCommandCarriesExactlyItsDeclaredLength() {
        for (name, packet) in Self.commands {
            #expect(KernelLengthRule.fault(packet.bytes) == nil, "\(name)")
        }
    }

    /// The rule itself finds the faults it is there for (so the check above can fail).
    @Test func theRuleRefusesWhatTheKernelRefuses() throws {
        let add = try AddExtendedAdvertisingData(instance: 1, advertisingData: Self.data).packet(index: 0)
        var overlong = add
        overlong.parameters += [0, 0, 0]  // bluetoothd's fault: bytes past what the lengths declare
        #expect(KernelLengthRule.fault(overlong.bytes)?.contains("declare 33") == true)
        var header = add.bytes
        header[4] &+= 1  // the header claims one byte more than follows
        #expect(KernelLengthRule.fault(header)?.contains("header says") == true)
        var powered = SetPowered(powered: true).packet(index: 0)
        powered.parameters.append(0)
        #expect(KernelLengthRule.fault(powered.bytes)?.contains("exactly 1") == true)
        #expect(KernelLengthRule.fault(MgmtPacket(code: 0x0099, index: 0).bytes)?.contains("not a command") == true)
    }
}
