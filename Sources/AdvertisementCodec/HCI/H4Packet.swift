// SPDX-License-Identifier: GPL-2.0-or-later

/// The packet type byte that precedes each packet on a UART (H4) stream or a kernel HCI socket.
public struct H4PacketType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let command = H4PacketType(rawValue: 0x01)
    public static let aclData = H4PacketType(rawValue: 0x02)
    public static let synchronousData = H4PacketType(rawValue: 0x03)
    public static let event = H4PacketType(rawValue: 0x04)
    public static let isoData = H4PacketType(rawValue: 0x05)

    /// Header length and where its length field sits, for the types whose framing is known.
    var framing: (headerLength: Int, lengthOffset: Int, lengthWidth: Int, lengthMask: Int)? {
        switch self {
        case .command: (3, 2, 1, 0xFF)
        case .aclData: (4, 2, 2, 0xFFFF)
        case .synchronousData: (3, 2, 1, 0xFF)
        case .event: (2, 1, 1, 0xFF)
        case .isoData: (4, 2, 2, 0x3FFF)
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .command: "command"
        case .aclData: "ACL data"
        case .synchronousData: "synchronous data"
        case .event: "event"
        case .isoData: "ISO data"
        default: "packet type \(rawValue.hexLiteral)"
        }
    }
}

/// One H4 packet: its type and the packet that follows (header and payload).
public struct H4Packet: Hashable, Sendable {
    public var type: H4PacketType
    /// The HCI packet without the type byte.
    public var body: [UInt8]

    public init(type: H4PacketType, body: [UInt8]) {
        self.type = type
        self.body = body
    }

    /// Parses exactly one complete H4 packet, type byte first.
    /// - Throws: `CodecError` if the type is unknown or the length field disagrees with the bytes.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var decoder = H4StreamDecoder()
        decoder.append(bytes)
        guard let packet = try decoder.next() else {
            let needed = decoder.bytesNeeded
            throw CodecError(structure: "H4 packet", offset: bytes.endIndex, reason: .truncated(
                field: "packet", needed: needed, available: 0))
        }
        guard decoder.bufferedByteCount == 0 else {
            throw CodecError(structure: "H4 packet", offset: bytes.endIndex - decoder.bufferedByteCount,
                             reason: .trailingBytes(count: decoder.bufferedByteCount))
        }
        self = packet
    }

    /// Type byte, then the packet.
    public var bytes: [UInt8] { [type.rawValue] + body }

    /// The packet as an event, or nil if it is not one.
    /// - Throws: `CodecError` if it is an event that does not parse.
    public func event() throws(CodecError) -> HCIEvent? {
        type == .event ? try HCIEvent(parsing: body[...]) : nil
    }

    /// The packet as a command, or nil if it is not one.
    /// - Throws: `CodecError` if it is a command that does not parse.
    public func command() throws(CodecError) -> HCICommandPacket? {
        type == .command ? try HCICommandPacket(parsing: body[...]) : nil
    }
}
