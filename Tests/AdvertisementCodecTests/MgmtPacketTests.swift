// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

/// The kernel's management protocol, against the layouts of BlueZ's `doc/mgmt-api.txt`.
@Suite struct MgmtPacketTests {
    /// Checks the exact bytes, then that parsing them gives the command back.
    func check<C: MgmtCommand>(_ command: C, index: UInt16 = 0, _ expected: String,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = command.packet(index: index).bytes
        #expect(HexText.format(bytes, separator: " ") == HexText.format(hex(expected), separator: " "),
                sourceLocation: sourceLocation)
        let parsed = try C(packet: try MgmtPacket(parsing: bytes))
        #expect(parsed == command, sourceLocation: sourceLocation)
    }

    @Test func commandsHaveTheDocumentedLayout() throws {
        try check(ReadControllerIndexList(), index: MgmtPacket.nonController, "03 00  FF FF  00 00  // no controller")
        try check(ReadControllerInformation(), "04 00  00 00  00 00")
        try check(SetPowered(powered: true), index: 1, "05 00  01 00  01 00  01  // hci1, powered")
        try check(SetLowEnergy(enabled: true), "0D 00  00 00  01 00  01  // LE on")
        try check(ReadAdvertisingFeatures(), "3D 00  00 00  00 00")
        try check(RemoveAdvertising(instance: 3), "3F 00  00 00  01 00  03")
        try check(try AddAdvertising(instance: 2, advertisingData: appleExampleAdvertisingData), """
            3E 00  00 00  29 00        // Add Advertising, hci0, 41 bytes
            02                         // instance 2
            00 00 00 00                // flags: none (non-connectable, data as given)
            00 00  00 00               // duration default, no timeout
            1E 00                      // 30 bytes of data, no scan response
            """ + "\n" + HexText.format(appleExampleAdvertisingData))
        try check(AddExtendedAdvertisingParameters(instance: 3, flags: [.intervalParameters, .txPowerParameter],
                                                   minimumInterval: 160, maximumInterval: 160, txPower: -8), """
            54 00  00 00  12 00        // Add Extended Advertising Parameters, hci0, 18 bytes
            03                         // instance 3
            00 C0 00 00                // flags: bit 14 intervals, bit 15 TX power
            00 00  00 00               // duration, timeout (not set)
            A0 00 00 00  A0 00 00 00   // interval 160 x 0.625 ms = 100 ms
            F8                         // -8 dBm
            """)
        try check(try AddExtendedAdvertisingData(instance: 3, advertisingData: [0x02, 0x01, 0x06]),
                  "55 00  00 00  06 00  03  03 00  02 01 06")
    }

    @Test func returnParametersAreRead() throws {
        let features = try ReadAdvertisingFeatures.ReturnParameters(parsing: hex("""
            FF F7 01 00     // supported flags: bits 0-7, 9-10, 12-16
            1F 1F           // 31 bytes of data, 31 of scan response
            03              // 3 instances at most
            02  01 03       // 2 taken: 1 and 3
            """)[...])
        #expect(features.maximumInstances == 3)
        #expect(features.instances == [1, 3])
        #expect(features.lowestFreeInstance == 2)
        #expect(features.acceptsIntervals)
        #expect(features.supportedFlags.contains(.canSetTxPower))

        let info = try ReadControllerInformation.ReturnParameters(parsing: hex("""
            00 00 00 01 AA 00   // address 00:AA:01:00:00:00
            09                  // Bluetooth 5.0
            F1 05               // manufacturer 0x05F1
            FF FF 01 00         // supported settings
            01 02 00 00         // current: powered, LE
            """)[...])
        #expect(info.address.description == "00:AA:01:00:00:00")
        #expect(info.currentSettings == [.powered, .lowEnergy])

        let parameters = try AddExtendedAdvertisingParameters.ReturnParameters(parsing: hex("03 F8 1F 1F")[...])
        #expect(parameters.instance == 3 && parameters.txPower == -8 && parameters.maximumAdvertisingDataLength == 31)
        #expect(try ReadControllerIndexList.ReturnParameters(parsing: hex("02 00  00 00  01 00")[...]).indices == [0, 1])
    }

    @Test func eventsAreTypedAndRoundTrip() throws {
        let cases: [(String, MgmtEvent)] = [
            ("01 00  00 00  04 00  3E 00  00  02", .commandComplete(opcode: .addAdvertising, status: .success,
                                                                    returnParameters: [2])),
            ("02 00  00 00  03 00  3E 00  0B", .commandStatus(opcode: .addAdvertising, status: .rejected)),
            ("03 00  00 00  01 00  2A", .controllerError(code: 0x2A)),
            ("04 00  01 00  00 00", .indexAdded),
            ("05 00  01 00  00 00", .indexRemoved),
            ("06 00  00 00  04 00  00 02 00 00  // LE on, not powered", .newSettings([.lowEnergy])),
            ("23 00  00 00  01 00  01", .advertisingAdded(instance: 1)),
            ("24 00  00 00  01 00  03", .advertisingRemoved(instance: 3)),
            ("07 00  00 00  03 00  00 00 00  // Class Of Device Changed", .other(code: MgmtEventCode(7),
                                                                                 parameters: [0, 0, 0])),
        ]
        for (bytes, expected) in cases {
            let packet = try MgmtPacket(parsing: hex(bytes))
            let event = try MgmtEvent(packet: packet)
            #expect(event == expected)
            #expect(event.packet(index: packet.index) == packet)
        }
    }

    @Test func rejectsALengthThatDisagreesWithTheBytes() {
        let error = codecError { _ = try MgmtPacket(parsing: hex("24 00  00 00  02 00  03")) }
        #expect(error?.description == "management packet: byte 6: truncated: parameters needs 2 bytes, only 1 left")
        let trailing = codecError { _ = try MgmtPacket(parsing: hex("24 00  00 00  01 00  03 04")) }
        #expect(trailing?.reason == .trailingBytes(count: 1))
    }

    @Test func everyTruncationOfAnAdvertisingCommandIsAnError() throws {
        let bytes = try AddAdvertising(instance: 1, advertisingData: appleExampleAdvertisingData).packet(index: 0).bytes
        for end in 0..<bytes.count {
            _ = codecError { _ = try MgmtPacket(parsing: Array(bytes[..<end])) }
        }
        let parameters = Array(bytes.dropFirst(MgmtPacket.headerLength))
        for end in 0..<parameters.count {
            _ = codecError { _ = try AddAdvertising(parameters: parameters[..<end]) }
        }
    }

    @Test func eventsCutShortNameTheField() {
        let error = codecError { _ = try MgmtEvent(packet: MgmtPacket(code: 0x0006, index: 0, parameters: [0x01])) }
        #expect(error?.description == "New Settings: byte 0: truncated: Current_Settings needs 4 bytes, only 1 left")
        let features = codecError { _ = try ReadAdvertisingFeatures.ReturnParameters(parsing: hex("00 00 00 00 1F 1F 03 02 01")[...]) }
        #expect(features?.reason == .truncated(field: "Instance[2]", needed: 2, available: 1))
    }

    @Test func modeCommandsTakeOnlyOffOrOn() {
        let error = codecError { _ = try SetLowEnergy(parameters: [0x02][...]) }
        #expect(error?.description == "Set Low Energy: byte 0: Low_Energy: expected 0x00 or 0x01, found 0x02")
        #expect(codecError { _ = try SetPowered(parameters: [0x01, 0x00][...]) }?.reason == .trailingBytes(count: 1))
    }

    @Test func statusesAndCodesAreOpen() {
        #expect(MgmtStatus(0x0B).description == "Rejected (0x0B)")
        #expect(MgmtStatus(0x7E).description == "status 0x7E")
        #expect(MgmtOpcode(0x0054).description == "Add Extended Advertising Parameters (0x0054)")
        #expect(MgmtOpcode(0x0999).description == "management command 0x0999")
    }

    /// Linux 6.x lists only instances numbered up to the count of instances: whatever is hidden,
    /// the lowest unlisted number is free. Every set of taken instances out of 5 is tried.
    @Test func theLowestUnlistedInstanceIsFreeWhateverTheKernelHides() throws {
        var features = try ReadAdvertisingFeatures.ReturnParameters(parsing: hex("00 00 00 00 1F 1F 05 00")[...])
        for mask in 0..<32 {
            let taken = (1...5).filter { mask & (1 << ($0 - 1)) != 0 }.map(UInt8.init)
            features.instances = taken.filter { Int($0) <= taken.count }  // what the kernel lists
            if let free = features.lowestFreeInstance {
                #expect(!taken.contains(free), "taken \(taken), listed \(features.instances), chose \(free)")
            } else {
                #expect(taken.count == 5, "none free with \(taken)")
            }
            #expect(features.freeInstanceCount >= 5 - taken.count)
        }
        features.maximumInstances = 0
        #expect(features.lowestFreeInstance == nil)
    }
}
