// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

/// Reading the reports of an event straight from its bytes (what a replay does) must answer
/// what parsing the whole event does: the same reports, or the same error. Events with one
/// legacy report are read at fixed places, so their lengths are bent in every way here.
@Suite struct AdvertisingReportFieldsTests {
    /// The extended report's Event_Type bits of each legacy event type, as the Core
    /// specification's table (Vol 4 Part E 7.7.65.13) gives them: ADV_IND, ADV_DIRECT_IND,
    /// ADV_SCAN_IND, ADV_NONCONN_IND, SCAN_RSP.
    static let legacyKinds: [AdvertisingPDUKind] = [
        AdvertisingPDUKind(rawValue: 0b10011), AdvertisingPDUKind(rawValue: 0b10101), AdvertisingPDUKind(rawValue: 0b10010),
        AdvertisingPDUKind(rawValue: 0b10000), AdvertisingPDUKind(rawValue: 0b11010),
    ]

    /// An event type the table does not hold is known only as legacy.
    static func kind(of eventType: AdvertisingReportEventType) -> AdvertisingPDUKind {
        eventType.rawValue < 5 ? legacyKinds[Int(eventType.rawValue)] : .legacy
    }

    func expected(_ bytes: ArraySlice<UInt8>) -> Result<[AdvertisingReportFields], CodecError> {
        do throws(CodecError) {
            switch try HCIEvent(parsing: bytes) {
            case let .leMeta(.advertisingReport(reports)):
                return .success(reports.map {
                    AdvertisingReportFields(address: $0.address, addressType: $0.addressType, rssi: $0.rssi,
                                            reportedTxPower: nil, data: $0.data, kind: Self.kind(of: $0.eventType))
                })
            default:
                Issue.record("not an advertising report event: \(HexText.format(Array(bytes), separator: " "))")
                return .success([])
            }
        } catch {
            return .failure(error)
        }
    }

    func read(_ bytes: ArraySlice<UInt8>) -> Result<[AdvertisingReportFields], CodecError> {
        var reports: [AdvertisingReportFields] = []
        do throws(CodecError) {
            #expect(try LEMetaEvent.advertisingReports(inEvent: bytes, into: &reports))
            return .success(reports)
        } catch {
            #expect(reports.isEmpty)
            return .failure(error)
        }
    }

    @Test func agreesWithParsingTheEvent() {
        var generator = SeededGenerator(seed: 0x5EED_2026)
        var failures = 0, single = 0
        for _ in 0..<20_000 {
            let random = { UInt8.random(in: 0...255, using: &generator) }
            let count = [0, 1, 1, 1, 2][Int.random(in: 0..<5, using: &generator)]
            var parameters: [UInt8] = [0x02, UInt8(count)]
            for _ in 0..<count {
                let data = (0..<Int.random(in: 0...31, using: &generator)).map { _ in random() }
                var length = data.count
                if Int.random(in: 0..<6, using: &generator) == 0 { length += Int.random(in: -1...1, using: &generator) }
                parameters += [random() % 5, random() % 4] + (0..<6).map { _ in random() }
                parameters += [UInt8(clamping: max(0, length))] + data + [random()]
            }
            // The event's length as it should be, or a little off; then a byte less or more.
            var eventLength = parameters.count
            if Int.random(in: 0..<6, using: &generator) == 0 { eventLength += Int.random(in: -1...1, using: &generator) }
            var bytes: [UInt8] = [0x3E, UInt8(clamping: max(0, eventLength))] + parameters
            switch Int.random(in: 0..<8, using: &generator) {
            case 0: bytes.removeLast()
            case 1: bytes.append(random())
            default: break
            }
            // Offsets and slices are those of a larger input.
            let input = [0xEE, 0xEE] + bytes
            let want = expected(input[2...])
            #expect(read(input[2...]) == want, "\(HexText.format(bytes, separator: " "))")
            if case .failure = want { failures += 1 }
            if case let .success(reports) = want, reports.count == 1 { single += 1 }
        }
        #expect(failures > 2000 && single > 5000)
    }

    @Test func oneReportReadAtItsPlaces() throws {
        var reports: [AdvertisingReportFields] = []
        let event = hex("3E 0F 02 01 00 01 66 55 44 33 22 11 03 02 01 06 C4")
        #expect(try LEMetaEvent.advertisingReports(inEvent: event[...], into: &reports))
        #expect(reports == [AdvertisingReportFields(address: try BluetoothAddress(parsing: "11:22:33:44:55:66"),
                                                    addressType: .randomDevice, rssi: -60, reportedTxPower: nil,
                                                    data: [0x02, 0x01, 0x06], kind: Self.legacyKinds[0])])
        #expect(reports.first?.kind.description == "ADV_IND")
    }

    /// An extended report's PHY fields are read where the layout puts them (after the address);
    /// a legacy report has none.
    @Test func theReportedPHYsAreAnExtendedReportsOnly() throws {
        let data: [UInt8] = [0x02, 0x01, 0x06]
        let coded: [UInt8] = [0x0D, 0x01, 0x00, 0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x03, 0x03, 0xFF, 0x7F, 0xC5,
                              0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, UInt8(data.count)] + data
        var reports: [AdvertisingReportFields] = []
        #expect(try LEMetaEvent.advertisingReports(inEvent: ([0x3E, UInt8(coded.count)] + coded)[...], into: &reports))
        #expect(reports.first?.phys == ReportedPHYs(primary: 3, secondary: 3))
        #expect(reports.first?.phys?.text == "coded")
        let legacy: [UInt8] = [0x3E, 0x0F, 0x02, 0x01, 0x03, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x03] + data + [0xC5]
        #expect(try LEMetaEvent.advertisingReports(inEvent: legacy[...], into: &reports))
        #expect(reports.count == 1 && reports.first?.phys == nil)
        #expect(ReportedPHYs(primary: 1, secondary: 2).text == "1m+2m")
        #expect(ReportedPHYs(primary: 1, secondary: 0).text == "1m")
        #expect(ReportedPHYs.name(9) == "0x9")
    }
}
