// SPDX-License-Identifier: GPL-2.0-or-later

/// Reassembles H4 packets from a byte stream that arrives in pieces of any size: a TCP
/// connection to a virtual controller, a UART, a pipe.
///
/// Feed bytes with `append`, then call `next()` until it returns nil ("need more bytes").
/// A packet type byte the decoder cannot frame throws: the stream has lost sync and the
/// connection should be dropped.
public struct H4StreamDecoder: Sendable {
    private var buffer = ChunkBuffer()

    public init() {}

    /// Bytes received but not yet returned as a packet.
    public var bufferedByteCount: Int { buffer.count }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(bytes)
    }

    /// How many more bytes the packet at the front needs before it is complete
    /// (at least 1 when nothing is buffered; 0 when a packet is ready).
    public var bytesNeeded: Int {
        guard buffer.count > 0 else { return 1 }
        guard let framing = H4PacketType(rawValue: buffer[0]).framing else { return 0 }
        let available = buffer.count - 1
        guard available >= framing.headerLength else { return framing.headerLength - available }
        return max(0, framing.headerLength + payloadLength(framing) - available)
    }

    /// The next complete packet, or nil when more bytes are needed.
    /// - Throws: `CodecError` at the stream offset of a packet type byte that cannot be framed.
    public mutating func next() throws(CodecError) -> H4Packet? {
        guard buffer.count > 0 else { return nil }
        let type = H4PacketType(rawValue: buffer[0])
        guard let framing = type.framing else {
            throw CodecError(structure: "H4 stream", offset: buffer.streamOffset(ofStorageIndex: buffer.readIndex),
                             reason: .unexpectedValue(field: "packet type", expected: "0x01 to 0x05",
                                                      found: type.rawValue.hexLiteral))
        }
        let available = buffer.count - 1
        guard available >= framing.headerLength else { return nil }
        let total = framing.headerLength + payloadLength(framing)
        guard available >= total else { return nil }
        let packet = H4Packet(type: type, body: Array(buffer.slice(from: 1, length: total)))
        buffer.consume(1 + total)
        return packet
    }

    private func payloadLength(_ framing: (headerLength: Int, lengthOffset: Int, lengthWidth: Int, lengthMask: Int))
        -> Int {
        let at = 1 + framing.lengthOffset
        var length = Int(buffer[at])
        if framing.lengthWidth == 2 { length |= Int(buffer[at + 1]) << 8 }
        return length & framing.lengthMask
    }
}
