// SPDX-License-Identifier: GPL-2.0-or-later

/// A management command code (`mgmt-api.txt`). Open: any value is representable.
public struct MgmtOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let readVersionInformation = MgmtOpcode(0x0001)
    public static let readControllerIndexList = MgmtOpcode(0x0003)
    public static let readControllerInformation = MgmtOpcode(0x0004)
    public static let setPowered = MgmtOpcode(0x0005)
    public static let setLowEnergy = MgmtOpcode(0x000D)
    public static let setAdvertising = MgmtOpcode(0x0029)
    public static let readAdvertisingFeatures = MgmtOpcode(0x003D)
    public static let addAdvertising = MgmtOpcode(0x003E)
    public static let removeAdvertising = MgmtOpcode(0x003F)
    public static let addExtendedAdvertisingParameters = MgmtOpcode(0x0054)
    public static let addExtendedAdvertisingData = MgmtOpcode(0x0055)

    static let names: [UInt16: String] = [
        0x0001: "Read Management Version Information", 0x0003: "Read Controller Index List",
        0x0004: "Read Controller Information", 0x0005: "Set Powered", 0x000D: "Set Low Energy",
        0x0029: "Set Advertising", 0x003D: "Read Advertising Features", 0x003E: "Add Advertising",
        0x003F: "Remove Advertising", 0x0054: "Add Extended Advertising Parameters",
        0x0055: "Add Extended Advertising Data",
    ]

    public var name: String? { Self.names[rawValue] }

    public var description: String {
        let hex = "0x" + HexText.format([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
        return name.map { "\($0) (\(hex))" } ?? "management command \(hex)"
    }
}

/// A management event code. Open: any value is representable.
public struct MgmtEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let commandComplete = MgmtEventCode(0x0001)
    public static let commandStatus = MgmtEventCode(0x0002)
    public static let controllerError = MgmtEventCode(0x0003)
    public static let indexAdded = MgmtEventCode(0x0004)
    public static let indexRemoved = MgmtEventCode(0x0005)
    public static let newSettings = MgmtEventCode(0x0006)
    public static let advertisingAdded = MgmtEventCode(0x0023)
    public static let advertisingRemoved = MgmtEventCode(0x0024)

    static let names: [UInt16: String] = [
        0x0001: "Command Complete", 0x0002: "Command Status", 0x0003: "Controller Error",
        0x0004: "Index Added", 0x0005: "Index Removed", 0x0006: "New Settings",
        0x0023: "Advertising Added", 0x0024: "Advertising Removed",
    ]

    public var description: String {
        Self.names[rawValue] ?? "management event 0x" + HexText.format([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
    }
}

/// A management status (`mgmt-api.txt`, "Error Codes"). Open: any byte is a status.
public struct MgmtStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = MgmtStatus(0x00)
    public static let unknownCommand = MgmtStatus(0x01)
    public static let failed = MgmtStatus(0x03)
    public static let noResources = MgmtStatus(0x07)
    public static let busy = MgmtStatus(0x0A)
    public static let rejected = MgmtStatus(0x0B)
    public static let notSupported = MgmtStatus(0x0C)
    public static let invalidParameters = MgmtStatus(0x0D)
    public static let notPowered = MgmtStatus(0x0F)
    public static let invalidIndex = MgmtStatus(0x11)
    public static let rfKilled = MgmtStatus(0x12)
    public static let permissionDenied = MgmtStatus(0x14)

    static let names: [UInt8: String] = [
        0x00: "Success", 0x01: "Unknown Command", 0x02: "Not Connected", 0x03: "Failed", 0x04: "Connect Failed",
        0x05: "Authentication Failed", 0x06: "Not Paired", 0x07: "No Resources", 0x08: "Timeout",
        0x09: "Already Connected", 0x0A: "Busy", 0x0B: "Rejected", 0x0C: "Not Supported",
        0x0D: "Invalid Parameters", 0x0E: "Disconnected", 0x0F: "Not Powered", 0x10: "Cancelled",
        0x11: "Invalid Index", 0x12: "RFKilled", 0x13: "Already Paired", 0x14: "Permission Denied",
    ]

    public var isSuccess: Bool { self == .success }
    public var name: String? { Self.names[rawValue] }

    public var description: String {
        name.map { "\($0) (\(rawValue.hexLiteral))" } ?? "status \(rawValue.hexLiteral)"
    }
}

extension MgmtOpcode: CommandCode {
    public static let commandKind = "management command"
    public static let fieldName = "code"
}
