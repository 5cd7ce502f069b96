// SPDX-License-Identifier: GPL-2.0-or-later

/// HCI_LE_Meta_Event (0x3E): a subevent code, then the subevent's parameters.
public enum LEMetaEvent: Hashable, Sendable {
    case advertisingReport([LEAdvertisingReport])
    case extendedAdvertisingReport([LEExtendedAdvertisingReport])
    case advertisingSetTerminated(LEAdvertisingSetTerminated)
    case other(subeventCode: UInt8, parameters: ArraySlice<UInt8>)

    public static let advertisingReportCode: UInt8 = 0x02
    public static let extendedAdvertisingReportCode: UInt8 = 0x0D
    public static let advertisingSetTerminatedCode: UInt8 = 0x12

    /// Parses the parameters of an LE Meta event (subevent code first).
    /// - Throws: `CodecError` if a decoded subevent does not fit its layout.
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Meta event")
        let subevent = try reader.uint8("subevent code")
        switch subevent {
        case Self.advertisingReportCode:
            self = .advertisingReport(try Self.reports(&reader, structure: "LE Advertising Report", of: LEAdvertisingReport.self))
        case Self.extendedAdvertisingReportCode:
            self = .extendedAdvertisingReport(try Self.reports(&reader, structure: "LE Extended Advertising Report",
                                                               of: LEExtendedAdvertisingReport.self))
        case Self.advertisingSetTerminatedCode:
            var inner = ByteReader(reader.rest(), structure: "LE Advertising Set Terminated")
            self = .advertisingSetTerminated(try LEAdvertisingSetTerminated(reader: &inner))
        default:
            self = .other(subeventCode: subevent, parameters: reader.rest())
        }
    }

    /// Num_Reports, then each report laid out one after another (as controllers and BlueZ do).
    private static func reports<R: AdvertisingReportLayout>(_ outer: inout ByteReader, structure: String,
                                                            of type: R.Type) throws(CodecError) -> [R] {
        var reader = try ReportReader<R>(outer.rest(), structure: structure)
        var reports: [R] = []
        reports.reserveCapacity(reader.left)
        while let report = try reader.next() { reports.append(report) }
        return reports
    }

    public var subeventCode: UInt8 {
        switch self {
        case .advertisingReport: Self.advertisingReportCode
        case .extendedAdvertisingReport: Self.extendedAdvertisingReportCode
        case .advertisingSetTerminated: Self.advertisingSetTerminatedCode
        case let .other(code, _): code
        }
    }

    /// Subevent code and parameters.
    public var parameters: [UInt8] {
        var out: [UInt8] = [subeventCode]
        switch self {
        case let .advertisingReport(reports):
            out.append(UInt8(truncatingIfNeeded: reports.count))
            for report in reports { report.encode(into: &out) }
        case let .extendedAdvertisingReport(reports):
            out.append(UInt8(truncatingIfNeeded: reports.count))
            for report in reports { report.encode(into: &out) }
        case let .advertisingSetTerminated(event):
            event.encode(into: &out)
        case let .other(_, parameters):
            out.append(contentsOf: parameters)
        }
        return out
    }
}

/// What legacy and extended advertising reports share, for code that handles both alike.
protocol AdvertisingReportLayout {
    init(reader: inout ByteReader) throws(CodecError)
    var address: BluetoothAddress { get }
    var addressType: AddressType { get }
    var rssi: Int8 { get }
    /// TX power as reported (127 = not available); nil for legacy reports, which carry none.
    var reportedTxPower: Int8? { get }
    var data: ArraySlice<UInt8> { get }
    /// The kind of PDU reported.
    var kind: AdvertisingPDUKind { get }
    /// The PHYs reported; nil for legacy reports, which carry none.
    var phys: ReportedPHYs? { get }
}

extension LEAdvertisingReport: AdvertisingReportLayout {
    var reportedTxPower: Int8? { nil }
    var phys: ReportedPHYs? { nil }
    public var kind: AdvertisingPDUKind { AdvertisingPDUKind(eventType) }
}

extension LEExtendedAdvertisingReport: AdvertisingReportLayout {
    var reportedTxPower: Int8? { txPower }
    public var phys: ReportedPHYs? { ReportedPHYs(primary: primaryPHY, secondary: secondaryPHY) }
    public var kind: AdvertisingPDUKind { AdvertisingPDUKind(extendedEventType: eventType) }
}

/// Reads the reports of an advertising report subevent one at a time, without collecting them.
struct ReportReader<Report: AdvertisingReportLayout> {
    private var reader: ByteReader
    private(set) var left: Int

    /// - Parameter parameters: the subevent's parameters after the subevent code (Num_Reports first).
    init(_ parameters: ArraySlice<UInt8>, structure: String) throws(CodecError) {
        reader = ByteReader(parameters, structure: structure)
        left = Int(try reader.uint8("Num_Reports"))
    }

    /// The next report; nil after the last, once the parameters are checked to end there.
    mutating func next() throws(CodecError) -> Report? {
        guard left > 0 else {
            try reader.expectEnd()
            return nil
        }
        left -= 1
        return try Report(reader: &reader)
    }
}

/// What a scanner needs of one advertising report, legacy or extended, read straight from the
/// event's bytes (the data is a slice of them).
public struct AdvertisingReportFields: Hashable, Sendable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// dBm as reported (127 = not available).
    public var rssi: Int8
    /// TX power as reported (127 = not available); nil for legacy reports, which carry none.
    public var reportedTxPower: Int8?
    public var data: ArraySlice<UInt8>
    /// The kind of PDU reported (connectable, scannable, a scan response, legacy or extended).
    public var kind: AdvertisingPDUKind
    /// The PHYs of an extended report; nil for a legacy one.
    public var phys: ReportedPHYs?
    /// Whether it reports a scan response (an active scan's answer).
    public var isScanResponse: Bool { kind.contains(.scanResponse) }

    public init(address: BluetoothAddress, addressType: AddressType, rssi: Int8, reportedTxPower: Int8?,
                data: ArraySlice<UInt8>, kind: AdvertisingPDUKind, phys: ReportedPHYs? = nil) {
        self.phys = phys
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.reportedTxPower = reportedTxPower
        self.data = data
        self.kind = kind
    }

    /// A report known only as a scan response or not (a legacy PDU, ADV_NONCONN_IND otherwise).
    public init(address: BluetoothAddress, addressType: AddressType, rssi: Int8, reportedTxPower: Int8?,
                data: ArraySlice<UInt8>, isScanResponse: Bool = false) {
        self.init(address: address, addressType: addressType, rssi: rssi, reportedTxPower: reportedTxPower, data: data,
                  kind: isScanResponse ? [.legacy, .scannable, .scanResponse] : [.legacy])
    }
}

extension LEMetaEvent {
    /// Reads the reports of an LE Advertising Report or LE Extended Advertising Report event,
    /// given as bytes (event code first), into `reports` (emptied first; its storage reused),
    /// without building the event: what a replay of millions of reports wants.
    /// - Returns: false, reading nothing, when the bytes are not one of those two events.
    /// - Throws: `CodecError` where `HCIEvent(parsing:)` throws for the same bytes (checked
    ///   before any report is returned: `reports` is left empty).
    public static func advertisingReports(inEvent bytes: ArraySlice<UInt8>,
                                          into reports: inout [AdvertisingReportFields]) throws(CodecError) -> Bool {
        reports.removeAll(keepingCapacity: true)
        let s = bytes.startIndex
        guard bytes.count >= 3, HCIEventCode(bytes[s]) == .leMeta,
              bytes[s + 2] == advertisingReportCode || bytes[s + 2] == extendedAdvertisingReportCode else { return false }
        if let report = oneLegacyReport(bytes) {
            reports.append(report)
            return true
        }
        let (_, parameters) = try HCIEvent.split(bytes)
        do throws(CodecError) {
            if bytes[s + 2] == advertisingReportCode {
                try collect(&reports, from: parameters, structure: "LE Advertising Report", of: LEAdvertisingReport.self)
            } else {
                try collect(&reports, from: parameters, structure: "LE Extended Advertising Report",
                            of: LEExtendedAdvertisingReport.self)
            }
        } catch {
            reports.removeAll(keepingCapacity: true)
            throw error
        }
        return true
    }

    /// The report of an LE Advertising Report event that carries one report and is well formed
    /// (what controllers send almost always), read at its fixed places; nil for any other shape,
    /// which the general reader handles. Well formed means every length agrees: the event's
    /// with the bytes', and the data's with the event's.
    @inline(__always)
    private static func oneLegacyReport(_ bytes: ArraySlice<UInt8>) -> AdvertisingReportFields? {
        // Event code, parameter length, subevent, Num_Reports = 1, event type, address type,
        // six address bytes, data length; the data; RSSI.
        let s = bytes.startIndex
        guard bytes.count >= 14, bytes[s + 2] == advertisingReportCode, bytes[s + 3] == 1 else { return nil }
        let dataLength = Int(bytes[s + 12])
        guard Int(bytes[s + 1]) == bytes.count - 2, bytes.count == 14 + dataLength else { return nil }
        var address: UInt64 = 0
        for index in (s + 6...s + 11).reversed() { address = address << 8 | UInt64(bytes[index]) }
        return AdvertisingReportFields(address: BluetoothAddress(address), addressType: AddressType(rawValue: bytes[s + 5]),
                                       rssi: Int8(bitPattern: bytes[s + 13 + dataLength]), reportedTxPower: nil,
                                       data: bytes[(s + 13)..<(s + 13 + dataLength)],
                                       kind: AdvertisingPDUKind(AdvertisingReportEventType(rawValue: bytes[s + 4])))
    }

    private static func collect<R: AdvertisingReportLayout>(_ reports: inout [AdvertisingReportFields],
                                                           from parameters: ArraySlice<UInt8>, structure: String,
                                                           of type: R.Type) throws(CodecError) {
        var reader = try ReportReader<R>(parameters.dropFirst(), structure: structure)
        while let report = try reader.next() {
            reports.append(AdvertisingReportFields(address: report.address, addressType: report.addressType,
                                                   rssi: report.rssi, reportedTxPower: report.reportedTxPower,
                                                   data: report.data, kind: report.kind, phys: report.phys))
        }
    }
}
