// SPDX-License-Identifier: GPL-2.0-or-later

/// An HCI status / error code (Core Vol 1 Part F). Open: every byte is a status.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(0x00)
    public static let unknownCommand = HCIStatus(0x01)
    public static let unknownConnectionIdentifier = HCIStatus(0x02)
    public static let hardwareFailure = HCIStatus(0x03)
    public static let memoryCapacityExceeded = HCIStatus(0x07)
    public static let commandDisallowed = HCIStatus(0x0C)
    public static let unsupportedFeatureOrParameterValue = HCIStatus(0x11)
    public static let invalidCommandParameters = HCIStatus(0x12)
    public static let unspecifiedError = HCIStatus(0x1F)
    public static let controllerBusy = HCIStatus(0x3A)
    public static let unknownAdvertisingIdentifier = HCIStatus(0x42)
    public static let limitReached = HCIStatus(0x43)

    static let names: [UInt8: String] = [
        0x00: "Success", 0x01: "Unknown HCI Command", 0x02: "Unknown Connection Identifier",
        0x03: "Hardware Failure", 0x07: "Memory Capacity Exceeded", 0x0C: "Command Disallowed",
        0x0D: "Connection Rejected due to Limited Resources", 0x11: "Unsupported Feature or Parameter Value",
        0x12: "Invalid HCI Command Parameters", 0x1F: "Unspecified Error",
        0x3A: "Controller Busy", 0x42: "Unknown Advertising Identifier", 0x43: "Limit Reached",
    ]

    public var isSuccess: Bool { self == .success }

    /// The specification's name, if this codec knows it.
    public var name: String? { Self.names[rawValue] }

    public var description: String {
        name.map { "\($0) (\(rawValue.hexLiteral))" } ?? "status \(rawValue.hexLiteral)"
    }
}
