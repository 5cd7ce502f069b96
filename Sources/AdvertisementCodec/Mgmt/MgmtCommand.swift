// SPDX-License-Identifier: GPL-2.0-or-later

/// A typed management command: its code, how its parameters are written and read, and what
/// its Command Complete returns after the status.
public protocol MgmtCommand: TypedCommand where Code == MgmtOpcode {}

extension MgmtCommand {
    /// The command addressed to adapter `index` (`MgmtPacket.nonController` for global ones).
    public func packet(index: UInt16) -> MgmtPacket {
        MgmtPacket(code: Self.opcode.rawValue, index: index, parameters: parameters)
    }

    /// Reads a typed command from a packet.
    /// - Throws: `CodecError` when the code differs or the parameters do not fit.
    public init(packet: MgmtPacket) throws(CodecError) {
        try Self.expectCode(MgmtOpcode(packet.code))
        try self.init(parameters: packet.parameters[...])
    }
}

/// The controller settings bitmask of Read Controller Information and New Settings.
public struct MgmtSettings: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = MgmtSettings(rawValue: 1 << 0)
    public static let connectable = MgmtSettings(rawValue: 1 << 1)
    public static let discoverable = MgmtSettings(rawValue: 1 << 3)
    public static let bredr = MgmtSettings(rawValue: 1 << 7)
    public static let lowEnergy = MgmtSettings(rawValue: 1 << 9)
    /// Advertising through Set Advertising, which takes precedence over every instance.
    public static let advertising = MgmtSettings(rawValue: 1 << 10)
    /// LE privacy: the adapter advertises from resolvable private addresses.
    public static let privacy = MgmtSettings(rawValue: 1 << 13)
}

/// The Flags of Add Advertising and Add Extended Advertising Parameters, and the
/// Supported_Flags of Read Advertising Features.
public struct MgmtAdvertisingFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let connectable = MgmtAdvertisingFlags(rawValue: 1 << 0)
    public static let discoverable = MgmtAdvertisingFlags(rawValue: 1 << 1)
    public static let limitedDiscoverable = MgmtAdvertisingFlags(rawValue: 1 << 2)
    /// The kernel adds (and keeps) a Flags field in front of the data.
    public static let managedFlags = MgmtAdvertisingFlags(rawValue: 1 << 3)
    public static let txPowerField = MgmtAdvertisingFlags(rawValue: 1 << 4)
    public static let secondary1M = MgmtAdvertisingFlags(rawValue: 1 << 7)
    /// Extended advertising on the LE Coded PHY (the kernel sends the primary and secondary
    /// PDUs on it); in Supported_Flags where the controller has the Coded PHY.
    public static let secondaryCoded = MgmtAdvertisingFlags(rawValue: 1 << 9)
    /// Supported_Flags: the TX power can be requested.
    public static let canSetTxPower = MgmtAdvertisingFlags(rawValue: 1 << 10)
    /// Add Extended Advertising Parameters: which of its fields the caller set.
    public static let durationParameter = MgmtAdvertisingFlags(rawValue: 1 << 12)
    public static let timeoutParameter = MgmtAdvertisingFlags(rawValue: 1 << 13)
    public static let intervalParameters = MgmtAdvertisingFlags(rawValue: 1 << 14)
    public static let txPowerParameter = MgmtAdvertisingFlags(rawValue: 1 << 15)
    public static let scanResponseParameter = MgmtAdvertisingFlags(rawValue: 1 << 16)
}
