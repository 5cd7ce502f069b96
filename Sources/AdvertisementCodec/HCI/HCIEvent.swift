// SPDX-License-Identifier: GPL-2.0-or-later

/// An HCI event code. Open: any byte is an event code.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandComplete = HCIEventCode(0x0E)
    public static let commandStatus = HCIEventCode(0x0F)
    public static let hardwareError = HCIEventCode(0x10)
    public static let leMeta = HCIEventCode(0x3E)

    public var description: String {
        switch self {
        case .commandComplete: "Command Complete"
        case .commandStatus: "Command Status"
        case .hardwareError: "Hardware Error"
        case .leMeta: "LE Meta"
        default: "event \(rawValue.hexLiteral)"
        }
    }
}

/// An HCI event: code, parameter length, parameters. Events this codec does not decode stay
/// representable as `.other`.
public enum HCIEvent: Hashable, Sendable {
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    /// HCI_Hardware_Error: a controller-specific hardware code.
    case hardwareError(hardwareCode: UInt8)
    case leMeta(LEMetaEvent)
    case other(code: HCIEventCode, parameters: ArraySlice<UInt8>)

    /// The H4 / kernel socket packet type byte of an event.
    public static let h4Type: UInt8 = 0x04

    /// Parses code, length and parameters (no H4 type byte).
    /// - Throws: `CodecError` if the length byte disagrees with the bytes present, or the
    ///   parameters of a decoded event do not fit its layout.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        let (code, parameters) = try Self.split(bytes)
        switch code {
        case .commandComplete: self = .commandComplete(try CommandComplete(parameters: parameters))
        case .commandStatus: self = .commandStatus(try CommandStatus(parameters: parameters))
        case .hardwareError:
            var inner = ByteReader(parameters, structure: "Hardware Error")
            self = .hardwareError(hardwareCode: try inner.uint8("hardware code"))
            try inner.expectEnd()
        case .leMeta: self = .leMeta(try LEMetaEvent(parameters: parameters))
        default: self = .other(code: code, parameters: parameters)
        }
    }

    public init(parsing bytes: [UInt8]) throws(CodecError) {
        try self.init(parsing: bytes[...])
    }

    /// An event's code and parameters, the length byte checked against the bytes present.
    static func split(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> (HCIEventCode, ArraySlice<UInt8>) {
        var reader = ByteReader(bytes, structure: "HCI event")
        let code = HCIEventCode(try reader.uint8("event code"))
        let length = try reader.uint8("parameter length")
        let parameters = try reader.bytes(Int(length), "\(code) parameters")
        try reader.expectEnd()
        return (code, parameters)
    }

    public var code: HCIEventCode {
        switch self {
        case .commandComplete: .commandComplete
        case .commandStatus: .commandStatus
        case .hardwareError: .hardwareError
        case .leMeta: .leMeta
        case let .other(code, _): code
        }
    }

    /// The event's parameters.
    public var parameters: [UInt8] {
        switch self {
        case let .commandComplete(event): event.parameters
        case let .commandStatus(event): event.parameters
        case let .hardwareError(code): [code]
        case let .leMeta(event): event.parameters
        case let .other(_, parameters): Array(parameters)
        }
    }

    /// Code, length and parameters. Parameters longer than 255 bytes cannot be sent; the
    /// length byte then wraps, as it would on the wire.
    public var bytes: [UInt8] {
        let parameters = self.parameters
        return [code.rawValue, UInt8(truncatingIfNeeded: parameters.count)] + parameters
    }

    /// The event as an H4 stream carries it: 0x04 first.
    public var h4Bytes: [UInt8] { [Self.h4Type] + bytes }
}

/// HCI_Command_Complete (0x0E).
public struct CommandComplete: Hashable, Sendable {
    /// How many more commands the controller accepts now.
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode
    /// Everything after the opcode; for most commands the first byte is the status.
    public var returnParameters: ArraySlice<UInt8>

    public init(numHCICommandPackets: UInt8 = 1, opcode: HCIOpcode, returnParameters: some Sequence<UInt8>) {
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
        self.returnParameters = ArraySlice(returnParameters)
    }

    init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Command Complete")
        numHCICommandPackets = try reader.uint8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(try reader.uint16LE("command opcode"))
        returnParameters = reader.rest()
    }

    /// The status byte, or nil for an event without return parameters (the 0x0000 no-op).
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }

    /// The typed return parameters after the status byte.
    /// - Throws: `CodecError` if they are shorter than the command's layout.
    public func decodeReturnParameters<C: HCICommand>(for command: C.Type) throws(CodecError) -> C.ReturnParameters {
        try C.ReturnParameters(parsing: returnParameters.dropFirst())
    }

    var parameters: [UInt8] {
        var out: [UInt8] = [numHCICommandPackets]
        out.appendLE(opcode.rawValue)
        out.append(contentsOf: returnParameters)
        return out
    }
}

/// HCI_Command_Status (0x0F): the controller accepted (or refused) a command that completes later.
public struct CommandStatus: Hashable, Sendable {
    public var status: HCIStatus
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numHCICommandPackets: UInt8 = 1, opcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
    }

    init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Command Status")
        status = HCIStatus(try reader.uint8("status"))
        numHCICommandPackets = try reader.uint8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(try reader.uint16LE("command opcode"))
        try reader.expectEnd()
    }

    var parameters: [UInt8] {
        var out: [UInt8] = [status.rawValue, numHCICommandPackets]
        out.appendLE(opcode.rawValue)
        return out
    }
}
