// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

@Suite struct HCICommandTests {
    /// Checks the exact bytes, then that parsing them gives the command back.
    func check<C: HCICommand>(_ command: C, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = command.packet.h4Bytes
        #expect(HexText.format(bytes, separator: " ") == HexText.format(hex(expected), separator: " "),
                sourceLocation: sourceLocation)
        let packet = try H4Packet(parsing: bytes[...])
        #expect(packet.type == .command, sourceLocation: sourceLocation)
        let parsed = try C(packet: try #require(try packet.command()))
        #expect(parsed == command, sourceLocation: sourceLocation)
    }

    @Test func controllerCommands() throws {
        try check(Reset(), "01  03 0C  00")
        try check(SetEventMask(mask: 0x2000_0000_0000_0000), "01  01 0C  08  00 00 00 00 00 00 00 20  // bit 61 LE Meta")
        try check(ReadLocalVersionInformation(), "01  01 10  00")
        try check(ReadLocalSupportedCommands(), "01  02 10  00")
        try check(ReadBDAddr(), "01  09 10  00")
        try check(LESetEventMask(mask: 0x1002), "01  01 20  08  02 10 00 00 00 00 00 00  // bits 1 and 12")
        try check(LEReadLocalSupportedFeatures(), "01  03 20  00")
        try check(LESetRandomAddress(address: try BluetoothAddress(parsing: "C0:11:22:33:44:55")),
                  "01  05 20  06  55 44 33 22 11 C0")
        try check(LEReadAdvertisingPhysicalChannelTxPower(), "01  07 20  00")
    }

    @Test func legacyAdvertisingCommands() throws {
        try check(LESetAdvertisingParameters(), """
            01  06 20  0F
            A0 00  A0 00      // interval min, max: 160 x 0.625 ms = 100 ms
            03                // ADV_NONCONN_IND
            00                // own address: public
            00  00 00 00 00 00 00   // peer address type, peer address (unused)
            07                // channels 37, 38, 39
            00                // no filter
            """)
        try check(try LESetAdvertisingData(data: appleExampleAdvertisingData), """
            01  08 20  20
            1E                // 30 significant bytes
            0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5
            00                // zero padding to 31
            """)
        try check(try LESetScanResponseData(data: []), "01 09 20 20 00" + String(repeating: "00", count: 31))
        try check(LESetAdvertisingEnable(enable: true), "01  0A 20  01  01")
        try check(LESetAdvertisingEnable(enable: false), "01  0A 20  01  00")
    }

    @Test func extendedAdvertisingCommands() throws {
        try check(LESetExtendedAdvertisingParameters(handle: 1), """
            01  36 20  19
            01                // handle
            10 00             // event properties: legacy PDU, non-connectable
            A0 00 00  A0 00 00  // primary interval min, max (24-bit)
            07                // channels
            00  00  00 00 00 00 00 00   // own addr type, peer addr type, peer addr
            00                // filter policy
            7F                // TX power: no preference
            01  00  01        // primary PHY 1M, secondary max skip, secondary PHY 1M
            00  00            // SID, scan request notifications off
            """)
        try check(try LESetExtendedAdvertisingData(handle: 1, data: [0x02, 0x01, 0x06]),
                  "01  37 20  07  01  03  01  03  02 01 06   // handle, complete, no fragmenting, length")
        try check(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(handle: 0), .init(handle: 2, duration: 500)]),
                  "01  39 20  0A  01  02  00 00 00 00  02 F4 01 00")
        try check(LESetExtendedAdvertisingEnable(enable: false, sets: []), "01  39 20  02  00 00")
        try check(LESetAdvertisingSetRandomAddress(handle: 3, address: BluetoothAddress(0xC0_00_00_00_00_07)),
                  "01  35 20  07  03  07 00 00 00 00 C0")
        try check(LEReadMaximumAdvertisingDataLength(), "01  3A 20  00")
        try check(LEReadNumberOfSupportedAdvertisingSets(), "01  3B 20  00")
        try check(LERemoveAdvertisingSet(handle: 2), "01  3C 20  01  02")
        try check(LEClearAdvertisingSets(), "01  3D 20  00")
    }

    @Test func scanCommands() throws {
        try check(LESetScanParameters(scanType: .active, interval: 0x0060, window: 0x0030),
                  "01  0B 20  07  01  60 00  30 00  00  00")
        try check(LESetScanEnable(enable: true, filterDuplicates: false), "01  0C 20  02  01 00")
        try check(try LESetExtendedScanParameters(scanningPHYs: 0x05, phys: [.init(), .init(scanType: .active)]),
                  "01  41 20  0D  00  00  05  00 10 00 10 00  01 10 00 10 00")
        try check(LESetExtendedScanEnable(enable: true, filterDuplicates: 1, duration: 100, period: 0),
                  "01  42 20  06  01  01  64 00  00 00")
    }

    @Test func legacyDataLongerThan31IsRefusedBeforeSending() {
        let error = codecError { _ = try LESetAdvertisingData(data: [UInt8](repeating: 0, count: 32)) }
        #expect(error?.reason == .unexpectedValue(field: "data length", expected: "at most 31 bytes", found: "32 bytes"))
        #expect(codecError { _ = try LESetExtendedAdvertisingData(data: [UInt8](repeating: 0, count: 252)) } != nil)
    }

    @Test func extendedDataFragmentsAt251Bytes() {
        let data = (0..<600).map { UInt8(truncatingIfNeeded: $0) }
        let fragments = LESetExtendedAdvertisingData.fragments(handle: 4, data: data)
        #expect(fragments.map(\.operation) == [.firstFragment, .intermediateFragment, .lastFragment])
        #expect(fragments.map(\.data.count) == [251, 251, 98])
        #expect(fragments.flatMap(\.data) == data)
        #expect(LESetExtendedAdvertisingData.fragments(handle: 0, data: [1]).map(\.operation) == [.complete])
    }

    @Test func parsingRejectsWrongLengthsAndValues() {
        // Set Advertising Data must carry 32 parameter bytes, and a length of at most 31.
        #expect(codecError { _ = try LESetAdvertisingData(parameters: hex("03 02 01 06")[...]) }?.reason.isTruncation == true)
        #expect(codecError { _ = try LESetAdvertisingData(parameters: ([0x20] + [UInt8](repeating: 0, count: 31))[...]) }?
            .offset == 0)
        #expect(codecError { _ = try LESetAdvertisingEnable(parameters: hex("02")[...]) }?.reason
            == .unexpectedValue(field: "advertising enable", expected: "0x00 or 0x01", found: "0x02"))
        #expect(codecError { _ = try LESetAdvertisingEnable(parameters: hex("01 00")[...]) }?.reason == .trailingBytes(count: 1))
        #expect(codecError { _ = try Reset(parameters: hex("00")[...]) }?.reason == .trailingBytes(count: 1))
        #expect(codecError { _ = try Reset(packet: HCICommandPacket(opcode: .leSetAdvertisingEnable, parameters: [1])) } != nil)
    }

    @Test func commandPacketLengthMustMatch() {
        #expect(codecError { _ = try HCICommandPacket(parsing: hex("0A 20 02 01")[...]) }?.reason
            == .truncated(field: "parameters", needed: 2, available: 1))
        #expect(codecError { _ = try HCICommandPacket(parsing: hex("0A 20 01 01 00")[...]) }?.reason
            == .trailingBytes(count: 1))
    }

    @Test func opcodesSplitIntoOGFAndOCF() {
        #expect(HCIOpcode(ogf: 0x08, ocf: 0x0006) == .leSetAdvertisingParameters)
        #expect(HCIOpcode.reset.ogf == 0x03)
        #expect(HCIOpcode.reset.ocf == 0x0003)
        #expect(HCIOpcode(0xFC01).description == "opcode 0xFC01")
        #expect(HCIOpcode.leSetAdvertisingEnable.description == "LE Set Advertising Enable (0x200A)")
    }
}

@Suite struct LegacyDataPaddingTests {
    /// Found by the hci-command fuzz target: hosts may leave non-zero bytes after the
    /// significant part; the length byte alone says what the data is.
    @Test func nonZeroPaddingIsNotData() throws {
        let parameters = [0x1E] + appleExampleAdvertisingData + [0x0F]
        let command = try LESetAdvertisingData(parameters: parameters[...])
        #expect(command.data == appleExampleAdvertisingData)
    }
}
