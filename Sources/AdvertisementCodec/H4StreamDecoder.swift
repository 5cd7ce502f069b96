// SPDX-License-Identifier: GPL-2.0-or-later

/// Reassembles H4 packets from a byte stream that arrives in pieces of any size: a TCP
/// connection to a virtual controller, a UART, a pipe.
///
/// Feed bytes with `append`, then call `next()` until it returns nil ("need more bytes").
/// A packet type byte the decoder cannot frame throws: the stream has lost sync and the
/// connection should be dropped.
public struct H4StreamDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Bytes consumed before `buffer[0]`, so errors name the offset in the whole stream.
    private var streamOffset = 0

    public init() {}

    /// Bytes received but not yet returned as a packet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if readIndex > 0, readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            streamOffset += readIndex
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// How many more bytes the packet at the front needs before it is complete
    /// (at least 1 when nothing is buffered; 0 when a packet is ready).
    public var bytesNeeded: Int {
        guard bufferedByteCount > 0 else { return 1 }
        guard let framing = H4PacketType(rawValue: buffer[readIndex]).framing else { return 0 }
        let available = bufferedByteCount - 1
        guard available >= framing.headerLength else { return framing.headerLength - available }
        return max(0, framing.headerLength + payloadLength(framing) - available)
    }

    /// The next complete packet, or nil when more bytes are needed.
    /// - Throws: `CodecError` at the stream offset of a packet type byte that cannot be framed.
    public mutating func next() throws(CodecError) -> H4Packet? {
        guard bufferedByteCount > 0 else { return nil }
        let type = H4PacketType(rawValue: buffer[readIndex])
        guard let framing = type.framing else {
            throw CodecError(structure: "H4 stream", offset: streamOffset + readIndex, reason: .unexpectedValue(
                field: "packet type", expected: "0x01 to 0x05", found: type.rawValue.hexLiteral))
        }
        let available = bufferedByteCount - 1
        guard available >= framing.headerLength else { return nil }
        let total = framing.headerLength + payloadLength(framing)
        guard available >= total else { return nil }
        let start = readIndex + 1
        let packet = H4Packet(type: type, body: Array(buffer[start..<(start + total)]))
        readIndex = start + total
        if readIndex == buffer.count {
            streamOffset += buffer.count
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        return packet
    }

    private func payloadLength(_ framing: (headerLength: Int, lengthOffset: Int, lengthWidth: Int, lengthMask: Int))
        -> Int {
        let at = readIndex + 1 + framing.lengthOffset
        var length = Int(buffer[at])
        if framing.lengthWidth == 2 { length |= Int(buffer[at + 1]) << 8 }
        return length & framing.lengthMask
    }
}
