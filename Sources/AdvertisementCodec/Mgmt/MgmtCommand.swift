// SPDX-License-Identifier: GPL-2.0-or-later

/// A typed management command: its code, how its parameters are written and read, and what
/// its Command Complete returns after the status.
public protocol MgmtCommand: Hashable, Sendable {
    associatedtype ReturnParameters: MgmtReturnParameters = MgmtNoReturnParameters
    static var opcode: MgmtOpcode { get }
    /// Appends the command's parameters (without the header).
    func encodeParameters(into buffer: inout [UInt8])
    /// Reads the parameters back, for scripted kernels and captures.
    /// - Throws: `CodecError` when they do not have this command's layout.
    init(parameters: ArraySlice<UInt8>) throws(CodecError)
}

/// What a management Command Complete carries after opcode and status.
public protocol MgmtReturnParameters: Hashable, Sendable {
    /// - Throws: `CodecError` when the bytes are shorter than the layout. Bytes past it are
    ///   ignored: the kernel may append fields in later versions.
    init(parsing bytes: ArraySlice<UInt8>) throws(CodecError)
}

/// For commands whose Command Complete carries nothing that the host reads.
public struct MgmtNoReturnParameters: MgmtReturnParameters {
    public init() {}
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {}
}

extension MgmtCommand {
    /// The command addressed to adapter `index` (`MgmtPacket.nonController` for global ones).
    public func packet(index: UInt16) -> MgmtPacket {
        var parameters: [UInt8] = []
        encodeParameters(into: &parameters)
        return MgmtPacket(code: Self.opcode.rawValue, index: index, parameters: parameters)
    }

    /// Reads a typed command from a packet.
    /// - Throws: `CodecError` when the code differs or the parameters do not fit.
    public init(packet: MgmtPacket) throws(CodecError) {
        guard packet.code == Self.opcode.rawValue else {
            throw CodecError(structure: "management command", offset: 0, reason: .unexpectedValue(
                field: "code", expected: Self.opcode.description, found: MgmtOpcode(packet.code).description))
        }
        try self.init(parameters: packet.parameters[...])
    }
}

/// A management command without parameters.
public protocol ParameterlessMgmtCommand: MgmtCommand {
    init()
}

extension MgmtCommand where Self: ParameterlessMgmtCommand {
    public func encodeParameters(into buffer: inout [UInt8]) {}
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        try ByteReader(parameters, structure: Self.opcode.name ?? "management command").expectEnd()
        self.init()
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
    /// Supported_Flags: the TX power can be requested.
    public static let canSetTxPower = MgmtAdvertisingFlags(rawValue: 1 << 10)
    /// Add Extended Advertising Parameters: which of its fields the caller set.
    public static let durationParameter = MgmtAdvertisingFlags(rawValue: 1 << 12)
    public static let timeoutParameter = MgmtAdvertisingFlags(rawValue: 1 << 13)
    public static let intervalParameters = MgmtAdvertisingFlags(rawValue: 1 << 14)
    public static let txPowerParameter = MgmtAdvertisingFlags(rawValue: 1 << 15)
    public static let scanResponseParameter = MgmtAdvertisingFlags(rawValue: 1 << 16)
}
