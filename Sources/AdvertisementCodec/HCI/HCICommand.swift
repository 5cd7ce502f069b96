// SPDX-License-Identifier: GPL-2.0-or-later

/// A typed HCI command: its opcode, how its parameters are written and read, and what its
/// Command Complete returns after the status byte.
public protocol HCICommand: TypedCommand where Code == HCIOpcode {}

extension HCICommand {
    /// The command as an opcode-and-parameters packet.
    public var packet: HCICommandPacket { HCICommandPacket(opcode: Self.opcode, parameters: parameters) }

    /// Reads a typed command from a packet.
    /// - Throws: `CodecError` when the opcode differs or the parameters do not fit.
    public init(packet: HCICommandPacket) throws(CodecError) {
        try Self.expectCode(packet.opcode)
        try self.init(parameters: packet.parameters[...])
    }
}

/// An HCI command packet: opcode (little-endian), parameter length, parameters.
public struct HCICommandPacket: Hashable, Sendable, CustomStringConvertible {
    /// The H4 / kernel socket packet type byte of a command.
    public static let h4Type: UInt8 = 0x01
    public static let maximumParameterLength = 255

    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Parses opcode, length and parameters (no H4 type byte).
    /// - Throws: `CodecError` if the length byte disagrees with the bytes present.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "HCI command")
        opcode = HCIOpcode(try reader.uint16LE("opcode"))
        let length = try reader.uint8("parameter length")
        parameters = Array(try reader.bytes(Int(length), "parameters"))
        try reader.expectEnd()
    }

    /// Opcode, length and parameters.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(3 + parameters.count)
        out.appendLE(opcode.rawValue)
        out.append(UInt8(truncatingIfNeeded: parameters.count))
        out.append(contentsOf: parameters)
        return out
    }

    /// The packet as an H4 stream or a kernel HCI socket carries it: 0x01 first.
    public var h4Bytes: [UInt8] { [Self.h4Type] + bytes }

    public var description: String {
        "\(opcode) [\(HexText.format(parameters, separator: " "))]"
    }
}
