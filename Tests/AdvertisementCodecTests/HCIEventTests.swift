// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

/// An LE Advertising Report event carrying three reports, laid out one after another.
let threeReportEvent: [UInt8] = {
    let reports = hex("""
        03                    // report 1: ADV_NONCONN_IND
        00                    //   public address
        01 17 DE 10 4C DA     //   DA:4C:10:DE:17:01
        1E                    //   30 bytes of advertising data
        0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5
        C4                    //   RSSI -60 dBm
        03                    // report 2: ADV_NONCONN_IND
        01                    //   random address
        02 00 00 00 00 C0     //   C0:00:00:00:00:02
        1F                    //   31 bytes: AltBeacon
        0201061BFF1801BEAC39ED98FF2900441A802F9C398FC199D2000700 08 C5 00
        B0                    //   RSSI -80 dBm
        00                    // report 3: ADV_IND
        00                    //   public
        03 00 00 00 00 00     //   00:00:00:00:00:03
        03                    //   3 bytes: flags only
        02 01 06
        7F                    //   RSSI not available
        """)
    return [0x3E, UInt8(2 + reports.count), 0x02, 0x03] + reports
}()

@Suite struct HCIEventTests {
    @Test func commandCompleteWithStatusOnly() throws {
        let event = try HCIEvent(parsing: hex("0E 04  01  03 0C  00   // 1 credit, Reset, success"))
        guard case let .commandComplete(complete) = event else {
            Issue.record("not Command Complete: \(event)")
            return
        }
        #expect(complete.numHCICommandPackets == 1)
        #expect(complete.opcode == .reset)
        #expect(complete.status == .success)
    }

    @Test func commandCompleteReturnParameters() throws {
        let bytes = hex("""
            0E 0C  01  01 10      // Command Complete, Read Local Version Information
            00                    // success
            0C                    // HCI version 5.3
            00 00                 // HCI subversion
            0C                    // LMP version
            E0 00                 // company 0x00E0 (Google)
            00 00                 // LMP subversion
            """)
        guard case let .commandComplete(complete) = try HCIEvent(parsing: bytes) else {
            Issue.record("not Command Complete")
            return
        }
        let version = try complete.decodeReturnParameters(for: ReadLocalVersionInformation.self)
        #expect(version.hciVersion == 0x0C)
        #expect(version.coreVersion == "5.3")
        #expect(version.companyIdentifier == CompanyIdentifier(0x00E0))
    }

    @Test func commandCompleteReturnParametersTooShort() throws {
        guard case let .commandComplete(complete) = try HCIEvent(parsing: hex("0E 05 01 3A 20 00 FF")) else {
            Issue.record("not Command Complete")
            return
        }
        let error = codecError { _ = try complete.decodeReturnParameters(for: LEReadMaximumAdvertisingDataLength.self) }
        #expect(error?.reason == .truncated(field: "maximum advertising data length", needed: 2, available: 1))
        #expect(error?.offset == 6)
    }

    @Test func commandStatusAndHardwareError() throws {
        #expect(try HCIEvent(parsing: hex("0F 04  0C  01  0A 20   // Command Disallowed, 1 credit, LE Set Adv Enable")) ==
            .commandStatus(CommandStatus(status: .commandDisallowed, numHCICommandPackets: 1, opcode: .leSetAdvertisingEnable)))
        #expect(try HCIEvent(parsing: hex("10 01 2A")) == .hardwareError(hardwareCode: 0x2A))
    }

    @Test func unknownEventsStatusesAndSubeventsStayRepresentable() throws {
        let unknown = try HCIEvent(parsing: hex("FF 03 01 02 03"))
        #expect(unknown == .other(code: HCIEventCode(0xFF), parameters: hex("01 02 03")[...]))
        #expect(unknown.bytes == hex("FF 03 01 02 03"))
        let subevent = try HCIEvent(parsing: hex("3E 03 14 AA BB"))
        #expect(subevent == .leMeta(.other(subeventCode: 0x14, parameters: hex("AA BB")[...])))
        #expect(HCIStatus(0x99).description == "status 0x99")
        #expect(HCIStatus.commandDisallowed.description == "Command Disallowed (0x0C)")
    }

    @Test func advertisingReportWithThreeReports() throws {
        guard case let .leMeta(.advertisingReport(reports)) = try HCIEvent(parsing: threeReportEvent) else {
            Issue.record("not an advertising report")
            return
        }
        #expect(reports.count == 3)
        #expect(reports.map(\.address.description) == ["DA:4C:10:DE:17:01", "C0:00:00:00:00:02", "00:00:00:00:00:03"])
        #expect(reports.map(\.addressType) == [.publicDevice, .randomDevice, .publicDevice])
        #expect(reports.map(\.eventType) == [.advNonconnInd, .advNonconnInd, .advInd])
        #expect(reports.map(\.rssi) == [-60, -80, 127])
        #expect(Array(reports[0].data) == appleExampleAdvertisingData)
        #expect(reports.map(\.data.count) == [30, 31, 3])
    }

    @Test func advertisingReportRoundTrips() throws {
        let event = try HCIEvent(parsing: threeReportEvent)
        #expect(event.bytes == threeReportEvent)
        #expect(try HCIEvent(parsing: event.bytes) == event)
    }

    @Test func everyTruncationOfAnAdvertisingReportIsRejected() {
        for length in 0..<threeReportEvent.count {
            var cut = Array(threeReportEvent.prefix(length))
            // Keep the length byte consistent so the cut lands inside the reports themselves.
            if length >= 2 { cut[1] = UInt8(length - 2) }
            let error = codecError { _ = try HCIEvent(parsing: cut) }
            #expect(error?.reason.isTruncation == true, "length \(length): \(String(describing: error))")
        }
    }

    @Test func lengthByteMustMatch() {
        #expect(codecError { _ = try HCIEvent(parsing: hex("0E 05 01 03 0C 00")) }?.reason
            == .truncated(field: "Command Complete parameters", needed: 5, available: 4))
        #expect(codecError { _ = try HCIEvent(parsing: hex("0E 03 01 03 0C 00")) }?.reason == .trailingBytes(count: 1))
    }

    @Test func reportCountLargerThanTheReportsIsRejected() {
        var bytes = threeReportEvent
        bytes[3] = 4
        #expect(codecError { _ = try HCIEvent(parsing: bytes) }?.reason.isTruncation == true)
        bytes[3] = 2
        #expect(codecError { _ = try HCIEvent(parsing: bytes) }?.reason == .trailingBytes(count: 13))
    }

    @Test func extendedAdvertisingReport() throws {
        let bytes = hex("""
            3E 29  0D  01         // LE Meta (41 bytes), Extended Advertising Report, 1 report
            10 00                 // event type: legacy PDU, non-connectable
            00                    // public
            01 17 DE 10 4C DA     // DA:4C:10:DE:17:01
            01 00                 // primary PHY 1M, no secondary
            FF                    // no SID
            7F                    // TX power not available
            D3                    // RSSI -45
            00 00                 // no periodic advertising
            00 00 00 00 00 00 00  // direct address type and address
            0F                    // 15 bytes of data
            02 01 06  0B 09 62 65 61 63 6F 6E 2D 65 6D 69
            """)
        guard case let .leMeta(.extendedAdvertisingReport(reports)) = try HCIEvent(parsing: bytes) else {
            Issue.record("not an extended report")
            return
        }
        #expect(reports.count == 1)
        #expect(reports[0].isLegacy)
        #expect(reports[0].dataStatus == 0)
        #expect(reports[0].rssi == -45)
        #expect(try AdvertisingData(parsing: reports[0].data).localName == "beacon-emi")
        #expect(try HCIEvent(parsing: bytes).bytes == bytes)
    }

    @Test func advertisingSetTerminated() throws {
        let event = try HCIEvent(parsing: hex("3E 06  12  00  02  FF 0F  05   // success, handle 2, no connection, 5 events"))
        #expect(event == .leMeta(.advertisingSetTerminated(LEAdvertisingSetTerminated(
            status: .success, handle: 2, connectionHandle: 0x0FFF, numCompletedExtendedAdvertisingEvents: 5))))
        #expect(codecError { _ = try HCIEvent(parsing: hex("3E 05 12 00 02 FF 0F")) }?.reason.isTruncation == true)
    }
}

@Suite struct SupportedCommandsTests {
    /// Octet and bit positions from the Core specification's Supported_Commands table.
    @Test func extendedAdvertisingAndScanningBits() throws {
        var bitmap = [UInt8](repeating: 0, count: 64)
        bitmap[36] = 0b0000_0100 // bit 2: LE Set Extended Advertising Parameters
        bitmap[37] = 0b0110_0000 // bits 5, 6: LE Set Extended Scan Parameters, Enable
        let commands = try ReadLocalSupportedCommands.ReturnParameters(parsing: bitmap[...])
        #expect(commands.supportsExtendedAdvertising)
        #expect(commands.supportsExtendedScanning)
        #expect(!commands.supportsReadMaximumAdvertisingDataLength)
        #expect(!commands.supportsReadNumberOfSupportedAdvertisingSets)
        bitmap[36] = 0b1100_0000 // bit 6: Read Maximum Advertising Data Length; bit 7: Number of Sets
        let reads = try ReadLocalSupportedCommands.ReturnParameters(parsing: bitmap[...])
        #expect(!reads.supportsExtendedAdvertising)
        #expect(reads.supportsReadMaximumAdvertisingDataLength && reads.supportsReadNumberOfSupportedAdvertisingSets)
    }
}
