// SPDX-License-Identifier: GPL-2.0-or-later

// LE controller commands that are neither advertising nor scanning (Core Vol 4 Part E 7.8).

/// HCI_LE_Set_Event_Mask (0x2001).
public struct LESetEventMask: HCICommand {
    public static let opcode = HCIOpcode.leSetEventMask
    /// Bit 1: LE Advertising Report.
    public static let advertisingReportBit: UInt64 = 1 << 1
    /// Bit 12: LE Extended Advertising Report.
    public static let extendedAdvertisingReportBit: UInt64 = 1 << 12
    /// Bit 17: LE Advertising Set Terminated.
    public static let advertisingSetTerminatedBit: UInt64 = 1 << 17
    /// The default after reset (0x1F) plus extended reports and set termination.
    public static let beaconDefault = LESetEventMask(
        mask: 0x1F | extendedAdvertisingReportBit | advertisingSetTerminatedBit)

    public var mask: UInt64
    public init(mask: UInt64) { self.mask = mask }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.appendLE(mask) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Event Mask")
        mask = try reader.uint64LE("LE event mask")
        try reader.expectEnd()
    }
}

/// HCI_LE_Read_Local_Supported_Features (0x2003).
public struct LEReadLocalSupportedFeatures: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.leReadLocalSupportedFeatures
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var features: LEFeatures
        public init(features: LEFeatures) { self.features = features }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "LE Read Local Supported Features return parameters")
            features = LEFeatures(rawValue: try reader.uint64LE("LE features"))
        }
    }
}

/// The LE feature bits (Core Vol 6 Part B 4.6).
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    public static let leCodedPHY = LEFeatures(rawValue: 1 << 11)
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
    public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)
}

/// HCI_LE_Set_Random_Address (0x2005).
public struct LESetRandomAddress: HCICommand {
    public static let opcode = HCIOpcode.leSetRandomAddress
    public var address: BluetoothAddress
    public init(address: BluetoothAddress) { self.address = address }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(contentsOf: address.littleEndianBytes) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Random Address")
        address = try reader.address("random address")
        try reader.expectEnd()
    }
}

/// HCI_LE_Read_Advertising_Physical_Channel_Tx_Power (0x2007).
public struct LEReadAdvertisingPhysicalChannelTxPower: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.leReadAdvertisingPhysicalChannelTxPower
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        /// dBm.
        public var txPowerLevel: Int8
        public init(txPowerLevel: Int8) { self.txPowerLevel = txPowerLevel }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "LE Read Advertising Physical Channel Tx Power return parameters")
            txPowerLevel = try reader.int8("TX power level")
        }
    }
}
