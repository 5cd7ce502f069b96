// SPDX-License-Identifier: GPL-2.0-or-later

/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), sent little-endian. Open: any value
/// is representable, so a controller's answer to an unknown opcode still parses.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF) }

    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x03FF }

    public static let setEventMask = HCIOpcode(0x0C01)
    public static let reset = HCIOpcode(0x0C03)
    public static let readLocalVersionInformation = HCIOpcode(0x1001)
    public static let readLocalSupportedCommands = HCIOpcode(0x1002)
    public static let readBDAddr = HCIOpcode(0x1009)
    public static let leSetEventMask = HCIOpcode(0x2001)
    public static let leReadLocalSupportedFeatures = HCIOpcode(0x2003)
    public static let leSetRandomAddress = HCIOpcode(0x2005)
    public static let leSetAdvertisingParameters = HCIOpcode(0x2006)
    public static let leReadAdvertisingPhysicalChannelTxPower = HCIOpcode(0x2007)
    public static let leSetAdvertisingData = HCIOpcode(0x2008)
    public static let leSetScanResponseData = HCIOpcode(0x2009)
    public static let leSetAdvertisingEnable = HCIOpcode(0x200A)
    public static let leSetScanParameters = HCIOpcode(0x200B)
    public static let leSetScanEnable = HCIOpcode(0x200C)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(0x2035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(0x2036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(0x2037)
    public static let leSetExtendedScanResponseData = HCIOpcode(0x2038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(0x2039)
    public static let leReadMaximumAdvertisingDataLength = HCIOpcode(0x203A)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(0x203B)
    public static let leRemoveAdvertisingSet = HCIOpcode(0x203C)
    public static let leClearAdvertisingSets = HCIOpcode(0x203D)
    public static let leSetExtendedScanParameters = HCIOpcode(0x2041)
    public static let leSetExtendedScanEnable = HCIOpcode(0x2042)

    static let names: [UInt16: String] = [
        0x0C01: "Set Event Mask", 0x0C03: "Reset",
        0x1001: "Read Local Version Information", 0x1002: "Read Local Supported Commands",
        0x1009: "Read BD_ADDR",
        0x2001: "LE Set Event Mask", 0x2003: "LE Read Local Supported Features",
        0x2005: "LE Set Random Address", 0x2006: "LE Set Advertising Parameters",
        0x2007: "LE Read Advertising Physical Channel Tx Power", 0x2008: "LE Set Advertising Data",
        0x2009: "LE Set Scan Response Data", 0x200A: "LE Set Advertising Enable",
        0x200B: "LE Set Scan Parameters", 0x200C: "LE Set Scan Enable",
        0x2035: "LE Set Advertising Set Random Address", 0x2036: "LE Set Extended Advertising Parameters",
        0x2037: "LE Set Extended Advertising Data", 0x2038: "LE Set Extended Scan Response Data", 0x2039: "LE Set Extended Advertising Enable",
        0x203A: "LE Read Maximum Advertising Data Length",
        0x203B: "LE Read Number of Supported Advertising Sets",
        0x203C: "LE Remove Advertising Set", 0x203D: "LE Clear Advertising Sets",
        0x2041: "LE Set Extended Scan Parameters", 0x2042: "LE Set Extended Scan Enable",
    ]

    /// The specification's name, or "opcode 0xNNNN" for one this codec does not name.
    public var name: String? { Self.names[rawValue] }

    public var description: String {
        let hex = "0x" + HexText.format([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
        return name.map { "\($0) (\(hex))" } ?? "opcode \(hex)"
    }
}

extension HCIOpcode: CommandCode {
    public static let commandKind = "HCI command"
    public static let fieldName = "opcode"
}
