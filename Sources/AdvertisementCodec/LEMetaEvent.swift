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
            self = .advertisingReport(try Self.reports(&reader, structure: "LE Advertising Report",
                                                       parse: LEAdvertisingReport.init(reader:)))
        case Self.extendedAdvertisingReportCode:
            self = .extendedAdvertisingReport(try Self.reports(&reader, structure: "LE Extended Advertising Report",
                                                               parse: LEExtendedAdvertisingReport.init(reader:)))
        case Self.advertisingSetTerminatedCode:
            var inner = ByteReader(reader.rest(), structure: "LE Advertising Set Terminated")
            self = .advertisingSetTerminated(try LEAdvertisingSetTerminated(reader: &inner))
        default:
            self = .other(subeventCode: subevent, parameters: reader.rest())
        }
    }

    /// Num_Reports, then each report laid out one after another (as controllers and BlueZ do).
    private static func reports<R>(_ outer: inout ByteReader, structure: String,
                                   parse: (inout ByteReader) throws(CodecError) -> R) throws(CodecError) -> [R] {
        var reader = ByteReader(outer.rest(), structure: structure)
        let count = try reader.uint8("Num_Reports")
        var reports: [R] = []
        reports.reserveCapacity(Int(count))
        for _ in 0..<count { reports.append(try parse(&reader)) }
        try reader.expectEnd()
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
