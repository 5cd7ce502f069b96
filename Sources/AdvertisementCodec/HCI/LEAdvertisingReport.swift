// SPDX-License-Identifier: GPL-2.0-or-later

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

/// What kind of advertising PDU a report came from, for legacy and extended reports alike: the
/// low five bits of an extended report's Event_Type (Core Vol 4 Part E 7.7.65.13), to which a
/// legacy report's event type maps as the specification's table of legacy PDUs says.
public struct AdvertisingPDUKind: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectable = AdvertisingPDUKind(rawValue: 0x01)
    public static let scannable = AdvertisingPDUKind(rawValue: 0x02)
    public static let directed = AdvertisingPDUKind(rawValue: 0x04)
    public static let scanResponse = AdvertisingPDUKind(rawValue: 0x08)
    public static let legacy = AdvertisingPDUKind(rawValue: 0x10)

    /// An extended report's Event_Type (its data status bits left out).
    public init(extendedEventType: UInt16) {
        rawValue = UInt8(extendedEventType & 0x1F)
    }

    /// A legacy report's event type (an unknown one: legacy, nothing else known).
    public init(_ eventType: AdvertisingReportEventType) {
        switch eventType {
        case .advInd: self = [.legacy, .connectable, .scannable]
        case .advDirectInd: self = [.legacy, .connectable, .directed]
        case .advScanInd: self = [.legacy, .scannable]
        case .scanRsp: self = [.legacy, .scannable, .scanResponse]
        default: self = [.legacy]
        }
    }

    /// The PDU's name: a legacy one's (ADV_NONCONN_IND), else what an extended one is.
    public var description: String {
        if contains(.legacy) {
            if contains(.scanResponse) { return "SCAN_RSP" }
            if contains(.directed) { return "ADV_DIRECT_IND" }
            if contains(.connectable) { return "ADV_IND" }
            return contains(.scannable) ? "ADV_SCAN_IND" : "ADV_NONCONN_IND"
        }
        let parts = [(AdvertisingPDUKind.connectable, "connectable"), (.scannable, "scannable"), (.directed, "directed"),
                     (.scanResponse, "scan response")].filter { contains($0.0) }.map(\.1)
        return "extended (" + (parts.isEmpty ? "non-connectable" : parts.joined(separator: ", ")) + ")"
    }
}
