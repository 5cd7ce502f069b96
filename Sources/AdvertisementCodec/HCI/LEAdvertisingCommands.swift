// SPDX-License-Identifier: GPL-2.0-or-later

// Legacy advertising commands (Core Vol 4 Part E 7.8.5 - 7.8.9).

/// Legacy advertising PDU types (LE Set Advertising Parameters, Advertising_Type).
public struct AdvertisingType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectableUndirected = AdvertisingType(rawValue: 0x00)            // ADV_IND
    public static let connectableDirectedHighDuty = AdvertisingType(rawValue: 0x01)      // ADV_DIRECT_IND
    public static let scannableUndirected = AdvertisingType(rawValue: 0x02)              // ADV_SCAN_IND
    public static let nonConnectableUndirected = AdvertisingType(rawValue: 0x03)         // ADV_NONCONN_IND
    public static let connectableDirectedLowDuty = AdvertisingType(rawValue: 0x04)       // ADV_DIRECT_IND

    public var description: String {
        switch rawValue {
        case 0x00: "ADV_IND"
        case 0x01: "ADV_DIRECT_IND (high duty)"
        case 0x02: "ADV_SCAN_IND"
        case 0x03: "ADV_NONCONN_IND"
        case 0x04: "ADV_DIRECT_IND (low duty)"
        default: "advertising type \(rawValue.hexLiteral)"
        }
    }
}

/// Own_Address_Type of advertising and scanning commands.
public struct OwnAddressType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let publicDevice = OwnAddressType(rawValue: 0x00)
    public static let randomDevice = OwnAddressType(rawValue: 0x01)
    public static let resolvableOrPublic = OwnAddressType(rawValue: 0x02)
    public static let resolvableOrRandom = OwnAddressType(rawValue: 0x03)
}

/// The primary advertising channels to use.
public struct AdvertisingChannelMap: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let channel37 = AdvertisingChannelMap(rawValue: 0x01)
    public static let channel38 = AdvertisingChannelMap(rawValue: 0x02)
    public static let channel39 = AdvertisingChannelMap(rawValue: 0x04)
    public static let all: AdvertisingChannelMap = [.channel37, .channel38, .channel39]
}

/// HCI_LE_Set_Advertising_Parameters (0x2006). Intervals in 0.625 ms units.
public struct LESetAdvertisingParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingParameters

    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var advertisingType: AdvertisingType
    public var ownAddressType: OwnAddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var channelMap: AdvertisingChannelMap
    public var filterPolicy: UInt8

    /// Defaults are a beacon's: non-connectable, public address, all channels, no filter.
    public init(intervalMin: UInt16 = 0x00A0, intervalMax: UInt16 = 0x00A0,
                advertisingType: AdvertisingType = .nonConnectableUndirected,
                ownAddressType: OwnAddressType = .publicDevice,
                peerAddressType: AddressType = .publicDevice, peerAddress: BluetoothAddress = BluetoothAddress(0),
                channelMap: AdvertisingChannelMap = .all, filterPolicy: UInt8 = 0) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.appendLE(intervalMin)
        buffer.appendLE(intervalMax)
        buffer.append(advertisingType.rawValue)
        buffer.append(ownAddressType.rawValue)
        buffer.append(peerAddressType.rawValue)
        buffer.append(contentsOf: peerAddress.littleEndianBytes)
        buffer.append(channelMap.rawValue)
        buffer.append(filterPolicy)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Advertising Parameters")
        intervalMin = try reader.uint16LE("advertising interval min")
        intervalMax = try reader.uint16LE("advertising interval max")
        advertisingType = AdvertisingType(rawValue: try reader.uint8("advertising type"))
        ownAddressType = OwnAddressType(rawValue: try reader.uint8("own address type"))
        peerAddressType = AddressType(rawValue: try reader.uint8("peer address type"))
        peerAddress = try reader.address("peer address")
        channelMap = AdvertisingChannelMap(rawValue: try reader.uint8("channel map"))
        filterPolicy = try reader.uint8("filter policy")
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Advertising_Data (0x2008): a length byte, then 31 bytes zero-padded.
public struct LESetAdvertisingData: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingData
    public var data: [UInt8]

    /// - Throws: `CodecError` if `data` exceeds 31 bytes: controllers reject (or, in some
    ///   virtual controllers, crash on) a longer length.
    public init(data: [UInt8]) throws(CodecError) {
        try LegacyDataLayout.check(data, structure: "LE Set Advertising Data")
        self.data = data
    }

    public func encodeParameters(into buffer: inout [UInt8]) { LegacyDataLayout.encode(data, into: &buffer) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        data = try LegacyDataLayout.parse(parameters, structure: "LE Set Advertising Data")
    }
}

/// HCI_LE_Set_Scan_Response_Data (0x2009): same layout as advertising data.
public struct LESetScanResponseData: HCICommand {
    public static let opcode = HCIOpcode.leSetScanResponseData
    public var data: [UInt8]

    /// - Throws: `CodecError` if `data` exceeds 31 bytes.
    public init(data: [UInt8]) throws(CodecError) {
        try LegacyDataLayout.check(data, structure: "LE Set Scan Response Data")
        self.data = data
    }

    public func encodeParameters(into buffer: inout [UInt8]) { LegacyDataLayout.encode(data, into: &buffer) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        data = try LegacyDataLayout.parse(parameters, structure: "LE Set Scan Response Data")
    }
}

/// The `length + 31 bytes` layout shared by legacy advertising and scan response data.
enum LegacyDataLayout {
    static let capacity = AdvertisingData.legacyMaximumLength

    static func check(_ data: [UInt8], structure: String) throws(CodecError) {
        guard data.count <= capacity else {
            throw CodecError(structure: structure, offset: 0, reason: .unexpectedValue(
                field: "data length", expected: "at most \(capacity) bytes", found: "\(data.count) bytes"))
        }
    }

    static func encode(_ data: [UInt8], into buffer: inout [UInt8]) {
        buffer.append(UInt8(data.count))
        buffer.append(contentsOf: data)
        buffer.append(contentsOf: repeatElement(0, count: capacity - data.count))
    }

    static func parse(_ parameters: ArraySlice<UInt8>, structure: String) throws(CodecError) -> [UInt8] {
        var reader = ByteReader(parameters, structure: structure)
        let lengthOffset = reader.offset
        let length = try reader.uint8("data length")
        guard Int(length) <= capacity else {
            throw reader.unexpected("data length", expected: "at most \(capacity)", found: "\(length)", at: lengthOffset)
        }
        let all = try reader.bytes(capacity, "data (always 31 bytes, zero padded)")
        try reader.expectEnd()
        return Array(all.prefix(Int(length)))
    }
}

/// HCI_LE_Set_Advertising_Enable (0x200A).
public struct LESetAdvertisingEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingEnable
    public var enable: Bool
    public init(enable: Bool) { self.enable = enable }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(enable ? 1 : 0) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Advertising Enable")
        enable = try reader.boolean("advertising enable")
        try reader.expectEnd()
    }
}

extension ByteReader {
    /// A byte that must be 0x00 or 0x01.
    mutating func boolean(_ field: String) throws(CodecError) -> Bool {
        let offset = self.offset
        let byte = try uint8(field)
        guard byte <= 1 else { throw unexpected(field, expected: "0x00 or 0x01", found: byte.hexLiteral, at: offset) }
        return byte == 1
    }
}
