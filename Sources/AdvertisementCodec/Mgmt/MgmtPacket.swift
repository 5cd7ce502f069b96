// SPDX-License-Identifier: GPL-2.0-or-later

/// A packet on the kernel's Bluetooth management socket (`HCI_CHANNEL_CONTROL`, what
/// bluetoothd and `btmgmt` use): command or event code, controller index and parameter
/// length, each little-endian, then the parameters (BlueZ `doc/mgmt-api.txt`, "Packet
/// Structures"). Commands and events share the layout; `code` is an opcode in one direction
/// and an event code in the other.
public struct MgmtPacket: Hashable, Sendable, CustomStringConvertible {
    /// The controller index of commands and events that concern no controller.
    public static let nonController: UInt16 = 0xFFFF
    public static let headerLength = 6

    public var code: UInt16
    /// The adapter: 0 for hci0; `nonController` for global commands and events.
    public var index: UInt16
    public var parameters: [UInt8]

    public init(code: UInt16, index: UInt16, parameters: [UInt8] = []) {
        self.code = code
        self.index = index
        self.parameters = parameters
    }

    /// Parses one packet, as one read from the socket returns it.
    /// - Throws: `CodecError` when the header is cut short or its length disagrees with the
    ///   bytes present.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "management packet")
        code = try reader.uint16LE("code")
        index = try reader.uint16LE("controller index")
        let length = try reader.uint16LE("parameter length")
        parameters = Array(try reader.bytes(Int(length), "parameters"))
        try reader.expectEnd()
    }

    public init(parsing bytes: [UInt8]) throws(CodecError) {
        try self.init(parsing: bytes[...])
    }

    /// Header and parameters, as written to the socket.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerLength + parameters.count)
        out.appendLE(code)
        out.appendLE(index)
        out.appendLE(UInt16(truncatingIfNeeded: parameters.count))
        out.append(contentsOf: parameters)
        return out
    }

    public var description: String {
        "code 0x\(HexText.format([UInt8(code >> 8), UInt8(code & 0xFF)])) index \(index) "
            + "[\(HexText.format(parameters, separator: " "))]"
    }
}
