// SPDX-License-Identifier: GPL-2.0-or-later

/// The type byte of an AD structure (Assigned Numbers, "Common Data Types"). Open: any byte is
/// a valid `ADType`, named or not.
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteServiceUUIDs16 = ADType(0x02)
    public static let completeServiceUUIDs16 = ADType(0x03)
    public static let incompleteServiceUUIDs32 = ADType(0x04)
    public static let completeServiceUUIDs32 = ADType(0x05)
    public static let incompleteServiceUUIDs128 = ADType(0x06)
    public static let completeServiceUUIDs128 = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let serviceData16 = ADType(0x16)
    public static let appearance = ADType(0x19)
    public static let serviceData32 = ADType(0x20)
    public static let serviceData128 = ADType(0x21)
    public static let manufacturerSpecificData = ADType(0xFF)

    public var description: String {
        switch self {
        case .flags: "Flags"
        case .incompleteServiceUUIDs16: "Incomplete List of 16-bit Service UUIDs"
        case .completeServiceUUIDs16: "Complete List of 16-bit Service UUIDs"
        case .incompleteServiceUUIDs32: "Incomplete List of 32-bit Service UUIDs"
        case .completeServiceUUIDs32: "Complete List of 32-bit Service UUIDs"
        case .incompleteServiceUUIDs128: "Incomplete List of 128-bit Service UUIDs"
        case .completeServiceUUIDs128: "Complete List of 128-bit Service UUIDs"
        case .shortenedLocalName: "Shortened Local Name"
        case .completeLocalName: "Complete Local Name"
        case .txPowerLevel: "Tx Power Level"
        case .serviceData16: "Service Data - 16-bit UUID"
        case .appearance: "Appearance"
        case .serviceData32: "Service Data - 32-bit UUID"
        case .serviceData128: "Service Data - 128-bit UUID"
        case .manufacturerSpecificData: "Manufacturer Specific Data"
        default: "AD type \(rawValue.hexLiteral)"
        }
    }
}

/// The Flags AD value (CSS Part A 1.3).
public struct ADFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverable = ADFlags(rawValue: 0x01)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 0x02)
    public static let brEdrNotSupported = ADFlags(rawValue: 0x04)
    public static let simultaneousLEBrEdrController = ADFlags(rawValue: 0x08)
    public static let simultaneousLEBrEdrHost = ADFlags(rawValue: 0x10)

    /// `0x06`: what beacons send.
    public static let beacon: ADFlags = [.leGeneralDiscoverable, .brEdrNotSupported]
}

/// A Bluetooth SIG company identifier, as carried (little-endian) at the start of
/// manufacturer specific data.
public struct CompanyIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let apple = CompanyIdentifier(0x004C)
    /// Radius Networks, the AltBeacon specification's own example company.
    public static let radiusNetworks = CompanyIdentifier(0x0118)

    public var description: String {
        "0x" + HexText.format([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
    }
}
