// SPDX-License-Identifier: GPL-2.0-or-later

// Extended advertising commands (Core Vol 4 Part E 7.8.52 - 7.8.60).

/// Advertising_Event_Properties of LE Set Extended Advertising Parameters.
public struct AdvertisingEventProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = AdvertisingEventProperties(rawValue: 0x0001)
    public static let scannable = AdvertisingEventProperties(rawValue: 0x0002)
    public static let directed = AdvertisingEventProperties(rawValue: 0x0004)
    public static let highDutyCycleDirected = AdvertisingEventProperties(rawValue: 0x0008)
    public static let legacyPDU = AdvertisingEventProperties(rawValue: 0x0010)
    public static let anonymous = AdvertisingEventProperties(rawValue: 0x0020)
    public static let includeTxPower = AdvertisingEventProperties(rawValue: 0x0040)

    /// 0x0010: legacy ADV_NONCONN_IND, which every phone and older scanner sees.
    public static let legacyNonConnectable: AdvertisingEventProperties = [.legacyPDU]
    /// 0x0013: legacy ADV_IND.
    public static let legacyConnectable: AdvertisingEventProperties = [.legacyPDU, .connectable, .scannable]
}

/// HCI_LE_Set_Advertising_Set_Random_Address (0x2035).
public struct LESetAdvertisingSetRandomAddress: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingSetRandomAddress
    public var handle: UInt8
    public var address: BluetoothAddress
    public init(handle: UInt8, address: BluetoothAddress) {
        self.handle = handle
        self.address = address
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(handle)
        buffer.append(contentsOf: address.littleEndianBytes)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Advertising Set Random Address")
        handle = try reader.uint8("advertising handle")
        address = try reader.address("random address")
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Extended_Advertising_Parameters (0x2036), the 25-byte version.
/// Intervals are 24-bit, in 0.625 ms units.
public struct LESetExtendedAdvertisingParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingParameters
    /// Advertising_TX_Power 0x7F: the host has no preference.
    public static let noTxPowerPreference: Int8 = 0x7F

    public var handle: UInt8
    public var eventProperties: AdvertisingEventProperties
    public var primaryIntervalMin: UInt32
    public var primaryIntervalMax: UInt32
    public var primaryChannelMap: AdvertisingChannelMap
    public var ownAddressType: OwnAddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var filterPolicy: UInt8
    public var txPower: Int8
    /// 0x01 LE 1M, 0x03 LE Coded. Legacy PDUs need LE 1M.
    public var primaryPHY: UInt8
    public var secondaryMaxSkip: UInt8
    public var secondaryPHY: UInt8
    public var sid: UInt8
    public var scanRequestNotificationEnable: Bool

    public init(handle: UInt8 = 0, eventProperties: AdvertisingEventProperties = .legacyNonConnectable,
                primaryIntervalMin: UInt32 = 0xA0, primaryIntervalMax: UInt32 = 0xA0,
                primaryChannelMap: AdvertisingChannelMap = .all, ownAddressType: OwnAddressType = .publicDevice,
                peerAddressType: AddressType = .publicDevice, peerAddress: BluetoothAddress = BluetoothAddress(0),
                filterPolicy: UInt8 = 0, txPower: Int8 = noTxPowerPreference, primaryPHY: UInt8 = 0x01,
                secondaryMaxSkip: UInt8 = 0, secondaryPHY: UInt8 = 0x01, sid: UInt8 = 0,
                scanRequestNotificationEnable: Bool = false) {
        self.handle = handle
        self.eventProperties = eventProperties
        self.primaryIntervalMin = primaryIntervalMin
        self.primaryIntervalMax = primaryIntervalMax
        self.primaryChannelMap = primaryChannelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.filterPolicy = filterPolicy
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryMaxSkip = secondaryMaxSkip
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.scanRequestNotificationEnable = scanRequestNotificationEnable
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(handle)
        buffer.appendLE(eventProperties.rawValue)
        buffer.appendLE(primaryIntervalMin, width: 3)
        buffer.appendLE(primaryIntervalMax, width: 3)
        buffer.append(primaryChannelMap.rawValue)
        buffer.append(ownAddressType.rawValue)
        buffer.append(peerAddressType.rawValue)
        buffer.append(contentsOf: peerAddress.littleEndianBytes)
        buffer.append(filterPolicy)
        buffer.append(UInt8(bitPattern: txPower))
        buffer.append(primaryPHY)
        buffer.append(secondaryMaxSkip)
        buffer.append(secondaryPHY)
        buffer.append(sid)
        buffer.append(scanRequestNotificationEnable ? 1 : 0)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Extended Advertising Parameters")
        handle = try reader.uint8("advertising handle")
        eventProperties = AdvertisingEventProperties(rawValue: try reader.uint16LE("event properties"))
        primaryIntervalMin = try reader.uint24LE("primary advertising interval min")
        primaryIntervalMax = try reader.uint24LE("primary advertising interval max")
        primaryChannelMap = AdvertisingChannelMap(rawValue: try reader.uint8("primary channel map"))
        ownAddressType = OwnAddressType(rawValue: try reader.uint8("own address type"))
        peerAddressType = AddressType(rawValue: try reader.uint8("peer address type"))
        peerAddress = try reader.address("peer address")
        filterPolicy = try reader.uint8("filter policy")
        txPower = try reader.int8("advertising TX power")
        primaryPHY = try reader.uint8("primary PHY")
        secondaryMaxSkip = try reader.uint8("secondary max skip")
        secondaryPHY = try reader.uint8("secondary PHY")
        sid = try reader.uint8("advertising SID")
        scanRequestNotificationEnable = try reader.boolean("scan request notification enable")
        try reader.expectEnd()
    }

    /// Command Complete carries the TX power the controller selected.
    public struct ReturnParameters: CommandReturnParameters {
        public var selectedTxPower: Int8
        public init(selectedTxPower: Int8) { self.selectedTxPower = selectedTxPower }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "LE Set Extended Advertising Parameters return parameters")
            selectedTxPower = try reader.int8("selected TX power")
        }
    }
}

/// HCI_LE_Set_Extended_Advertising_Data (0x2037): one fragment of at most 251 bytes.
public struct LESetExtendedAdvertisingData: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingData
    public static let maximumFragmentLength = 251

    /// Which part of the data this command carries.
    public struct Operation: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let intermediateFragment = Operation(rawValue: 0x00)
        public static let firstFragment = Operation(rawValue: 0x01)
        public static let lastFragment = Operation(rawValue: 0x02)
        public static let complete = Operation(rawValue: 0x03)
        public static let unchangedData = Operation(rawValue: 0x04)
    }

    public var handle: UInt8
    public var operation: Operation
    /// 0x00: the controller may fragment; 0x01: it should not.
    public var fragmentPreference: UInt8
    public var data: [UInt8]

    /// - Throws: `CodecError` if `data` exceeds 251 bytes.
    public init(handle: UInt8 = 0, operation: Operation = .complete, fragmentPreference: UInt8 = 0x01,
                data: [UInt8]) throws(CodecError) {
        guard data.count <= Self.maximumFragmentLength else {
            throw CodecError(structure: "LE Set Extended Advertising Data", offset: 0, reason: .unexpectedValue(
                field: "data length", expected: "at most \(Self.maximumFragmentLength) bytes per fragment",
                found: "\(data.count) bytes"))
        }
        self.handle = handle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    /// Splits advertising data into the fragments that set it (a single `complete` one when it fits).
    public static func fragments(handle: UInt8, data: [UInt8]) -> [LESetExtendedAdvertisingData] {
        guard data.count > maximumFragmentLength else {
            return [LESetExtendedAdvertisingData(unchecked: handle, .complete, data[...])]
        }
        let starts = Array(stride(from: 0, to: data.count, by: maximumFragmentLength))
        return starts.enumerated().map { index, start in
            let chunk = data[start..<min(start + maximumFragmentLength, data.count)]
            let operation: Operation = index == 0 ? .firstFragment
                : index == starts.count - 1 ? .lastFragment : .intermediateFragment
            return LESetExtendedAdvertisingData(unchecked: handle, operation, chunk)
        }
    }

    private init(unchecked handle: UInt8, _ operation: Operation, _ data: ArraySlice<UInt8>) {
        self.handle = handle
        self.operation = operation
        self.fragmentPreference = 0x01
        self.data = Array(data)
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(handle)
        buffer.append(operation.rawValue)
        buffer.append(fragmentPreference)
        buffer.append(UInt8(truncatingIfNeeded: data.count))
        buffer.append(contentsOf: data)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Extended Advertising Data")
        handle = try reader.uint8("advertising handle")
        operation = Operation(rawValue: try reader.uint8("operation"))
        fragmentPreference = try reader.uint8("fragment preference")
        let lengthOffset = reader.offset
        let length = try reader.uint8("data length")
        guard Int(length) <= Self.maximumFragmentLength else {
            throw reader.unexpected("data length", expected: "at most \(Self.maximumFragmentLength)",
                                    found: "\(length)", at: lengthOffset)
        }
        data = Array(try reader.bytes(Int(length), "advertising data"))
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Extended_Advertising_Enable (0x2039).
public struct LESetExtendedAdvertisingEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedAdvertisingEnable

    /// One advertising set to enable or disable.
    public struct Set: Hashable, Sendable {
        public var handle: UInt8
        /// In 10 ms units; 0 advertises until disabled.
        public var duration: UInt16
        /// 0: no limit.
        public var maximumExtendedAdvertisingEvents: UInt8
        public init(handle: UInt8, duration: UInt16 = 0, maximumExtendedAdvertisingEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maximumExtendedAdvertisingEvents = maximumExtendedAdvertisingEvents
        }
    }

    public var enable: Bool
    /// Disabling with no sets disables every set.
    public var sets: [Set]

    public init(enable: Bool, sets: [Set]) {
        self.enable = enable
        self.sets = sets
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(enable ? 1 : 0)
        buffer.append(UInt8(truncatingIfNeeded: sets.count))
        for set in sets {
            buffer.append(set.handle)
            buffer.appendLE(set.duration)
            buffer.append(set.maximumExtendedAdvertisingEvents)
        }
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Extended Advertising Enable")
        enable = try reader.boolean("enable")
        let count = try reader.uint8("number of sets")
        sets = []
        for index in 0..<Int(count) {
            sets.append(Set(handle: try reader.uint8("advertising handle [\(index)]"),
                            duration: try reader.uint16LE("duration [\(index)]"),
                            maximumExtendedAdvertisingEvents: try reader.uint8("max extended advertising events [\(index)]")))
        }
        try reader.expectEnd()
    }
}

/// HCI_LE_Read_Maximum_Advertising_Data_Length (0x203A).
public struct LEReadMaximumAdvertisingDataLength: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.leReadMaximumAdvertisingDataLength
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var maximumLength: UInt16
        public init(maximumLength: UInt16) { self.maximumLength = maximumLength }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "LE Read Maximum Advertising Data Length return parameters")
            maximumLength = try reader.uint16LE("maximum advertising data length")
        }
    }
}

/// HCI_LE_Read_Number_of_Supported_Advertising_Sets (0x203B).
public struct LEReadNumberOfSupportedAdvertisingSets: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.leReadNumberOfSupportedAdvertisingSets
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var numberOfSets: UInt8
        public init(numberOfSets: UInt8) { self.numberOfSets = numberOfSets }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "LE Read Number of Supported Advertising Sets return parameters")
            numberOfSets = try reader.uint8("number of supported advertising sets")
        }
    }
}

/// HCI_LE_Remove_Advertising_Set (0x203C).
public struct LERemoveAdvertisingSet: HCICommand {
    public static let opcode = HCIOpcode.leRemoveAdvertisingSet
    public var handle: UInt8
    public init(handle: UInt8) { self.handle = handle }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(handle) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Remove Advertising Set")
        handle = try reader.uint8("advertising handle")
        try reader.expectEnd()
    }
}

/// HCI_LE_Clear_Advertising_Sets (0x203D).
public struct LEClearAdvertisingSets: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.leClearAdvertisingSets
    public init() {}
}

/// LE Set Extended Scan Response Data (Core Vol 4 Part E 7.8.55): the layout of LE Set
/// Extended Advertising Data (handle, operation, fragment preference, data), another opcode.
public struct LESetExtendedScanResponseData: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanResponseData
    public var fragment: LESetExtendedAdvertisingData

    public init(fragment: LESetExtendedAdvertisingData) {
        self.fragment = fragment
    }

    /// The fragments that set `data` as set `handle`'s scan response.
    public static func fragments(handle: UInt8, data: [UInt8]) -> [LESetExtendedScanResponseData] {
        LESetExtendedAdvertisingData.fragments(handle: handle, data: data).map(LESetExtendedScanResponseData.init)
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        fragment.encodeParameters(into: &buffer)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        fragment = try LESetExtendedAdvertisingData(parameters: parameters)
    }
}
