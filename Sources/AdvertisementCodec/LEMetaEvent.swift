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

/// Event_Type of a legacy advertising report: which PDU was received.
public struct AdvertisingReportEventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let advInd = AdvertisingReportEventType(rawValue: 0x00)
    public static let advDirectInd = AdvertisingReportEventType(rawValue: 0x01)
    public static let advScanInd = AdvertisingReportEventType(rawValue: 0x02)
    public static let advNonconnInd = AdvertisingReportEventType(rawValue: 0x03)
    public static let scanRsp = AdvertisingReportEventType(rawValue: 0x04)

    public var description: String {
        switch rawValue {
        case 0x00: "ADV_IND"
        case 0x01: "ADV_DIRECT_IND"
        case 0x02: "ADV_SCAN_IND"
        case 0x03: "ADV_NONCONN_IND"
        case 0x04: "SCAN_RSP"
        default: "event type \(rawValue.hexLiteral)"
        }
    }
}

/// One report of an LE Advertising Report subevent (0x02).
///
/// ```
/// tt            event type
/// aa            address type
/// xx * 6        address, least significant byte first
/// ll            data length (0...31)
/// dd * ll       advertising data
/// rr            RSSI, Int8 dBm; 127 = not available
/// ```
public struct LEAdvertisingReport: Hashable, Sendable {
    /// RSSI value meaning "not available".
    public static let rssiNotAvailable: Int8 = 127

    public var eventType: AdvertisingReportEventType
    public var addressType: AddressType
    public var address: BluetoothAddress
    /// The advertising data as received; parse it with `AdvertisingData(parsing:)`.
    public var data: ArraySlice<UInt8>
    public var rssi: Int8

    public init(eventType: AdvertisingReportEventType, addressType: AddressType, address: BluetoothAddress,
                data: some Sequence<UInt8>, rssi: Int8) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.data = ArraySlice(data)
        self.rssi = rssi
    }

    init(reader: inout ByteReader) throws(CodecError) {
        eventType = AdvertisingReportEventType(rawValue: try reader.uint8("event type"))
        addressType = AddressType(rawValue: try reader.uint8("address type"))
        address = try reader.address("address")
        let length = try reader.uint8("data length")
        data = try reader.bytes(Int(length), "advertising data")
        rssi = try reader.int8("RSSI")
    }

    func encode(into out: inout [UInt8]) {
        out.append(eventType.rawValue)
        out.append(addressType.rawValue)
        out.append(contentsOf: address.littleEndianBytes)
        out.append(UInt8(truncatingIfNeeded: data.count))
        out.append(contentsOf: data)
        out.append(UInt8(bitPattern: rssi))
    }
}

/// One report of an LE Extended Advertising Report subevent (0x0D).
///
/// ```
/// tt tt         event type (bit 4: legacy PDU; bits 5-6: data status)
/// aa            address type (0xFF: anonymous)
/// xx * 6        address
/// pp ss         primary PHY, secondary PHY
/// ii            advertising SID
/// tx            TX power, Int8 dBm; 127 = not available
/// rr            RSSI, Int8 dBm; 127 = not available
/// vv vv         periodic advertising interval
/// dt            direct address type
/// da * 6        direct address
/// ll            data length
/// dd * ll       advertising data
/// ```
public struct LEExtendedAdvertisingReport: Hashable, Sendable {
    public var eventType: UInt16
    public var addressType: AddressType
    public var address: BluetoothAddress
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
    public var advertisingSID: UInt8
    public var txPower: Int8
    public var rssi: Int8
    public var periodicAdvertisingInterval: UInt16
    public var directAddressType: AddressType
    public var directAddress: BluetoothAddress
    public var data: ArraySlice<UInt8>

    public init(eventType: UInt16, addressType: AddressType, address: BluetoothAddress, primaryPHY: UInt8 = 1,
                secondaryPHY: UInt8 = 0, advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8,
                periodicAdvertisingInterval: UInt16 = 0, directAddressType: AddressType = .publicDevice,
                directAddress: BluetoothAddress = BluetoothAddress(0), data: some Sequence<UInt8>) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.txPower = txPower
        self.rssi = rssi
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddressType = directAddressType
        self.directAddress = directAddress
        self.data = ArraySlice(data)
    }

    /// Bit 4 of the event type: the report came from a legacy PDU.
    public var isLegacy: Bool { eventType & 0x0010 != 0 }
    /// Bits 5-6: 0 complete, 1 incomplete (more to come), 2 incomplete and truncated.
    public var dataStatus: UInt8 { UInt8((eventType >> 5) & 0x03) }

    init(reader: inout ByteReader) throws(CodecError) {
        eventType = try reader.uint16LE("event type")
        addressType = AddressType(rawValue: try reader.uint8("address type"))
        address = try reader.address("address")
        primaryPHY = try reader.uint8("primary PHY")
        secondaryPHY = try reader.uint8("secondary PHY")
        advertisingSID = try reader.uint8("advertising SID")
        txPower = try reader.int8("TX power")
        rssi = try reader.int8("RSSI")
        periodicAdvertisingInterval = try reader.uint16LE("periodic advertising interval")
        directAddressType = AddressType(rawValue: try reader.uint8("direct address type"))
        directAddress = try reader.address("direct address")
        let length = try reader.uint8("data length")
        data = try reader.bytes(Int(length), "advertising data")
    }

    func encode(into out: inout [UInt8]) {
        out.appendLE(eventType)
        out.append(addressType.rawValue)
        out.append(contentsOf: address.littleEndianBytes)
        out.append(primaryPHY)
        out.append(secondaryPHY)
        out.append(advertisingSID)
        out.append(UInt8(bitPattern: txPower))
        out.append(UInt8(bitPattern: rssi))
        out.appendLE(periodicAdvertisingInterval)
        out.append(directAddressType.rawValue)
        out.append(contentsOf: directAddress.littleEndianBytes)
        out.append(UInt8(truncatingIfNeeded: data.count))
        out.append(contentsOf: data)
    }
}

/// LE Advertising Set Terminated subevent (0x12).
public struct LEAdvertisingSetTerminated: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt8
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    public init(status: HCIStatus, handle: UInt8, connectionHandle: UInt16, numCompletedExtendedAdvertisingEvents: UInt8) {
        self.status = status
        self.handle = handle
        self.connectionHandle = connectionHandle
        self.numCompletedExtendedAdvertisingEvents = numCompletedExtendedAdvertisingEvents
    }

    init(reader: inout ByteReader) throws(CodecError) {
        status = HCIStatus(try reader.uint8("status"))
        handle = try reader.uint8("advertising handle")
        connectionHandle = try reader.uint16LE("connection handle")
        numCompletedExtendedAdvertisingEvents = try reader.uint8("num completed extended advertising events")
        try reader.expectEnd()
    }

    func encode(into out: inout [UInt8]) {
        out.append(status.rawValue)
        out.append(handle)
        out.appendLE(connectionHandle)
        out.append(numCompletedExtendedAdvertisingEvents)
    }
}
