// SPDX-License-Identifier: GPL-2.0-or-later

/// Reads btsnoop captures (what `btmon -w` and Android's HCI snoop log write) from bytes that
/// arrive in chunks, so a capture of any length is read in constant memory.
///
/// ```
/// header:  62 74 73 6E 6F 6F 70 00   "btsnoop\0"
///          00 00 00 01               version 1
///          dd dd dd dd               datalink: 1001 HCI, 1002 HCI UART (H4), 2001 Linux monitor
/// record:  oo oo oo oo  ii ii ii ii  original and included length
///          ff ff ff ff  cc cc cc cc  flags, cumulative drops
///          tt * 8                    microseconds since 0000-01-01, big-endian
///          data * included length
/// ```
public struct BTSnoopParser: CapturePacketSource {
    /// One HCI packet from the capture.
    public struct Record: Sendable, Hashable {
        /// Microseconds since midnight, 1 January of year 0.
        public var timestamp: Int64
        public var packet: H4Packet
    }

    /// One HCI packet from the capture, its body a slice of the parser's buffer (valid until
    /// the parser is next changed; nothing is copied).
    public struct PacketView {
        /// Microseconds since midnight, 1 January of year 0.
        public var timestamp: Int64
        public var type: H4PacketType
        /// The HCI packet without the type byte.
        public var body: ArraySlice<UInt8>

        public init(timestamp: Int64, type: H4PacketType, body: ArraySlice<UInt8>) {
            self.timestamp = timestamp
            self.type = type
            self.body = body
        }
    }

    public struct Datalink: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let hci = Datalink(rawValue: 1001)
        public static let hciUART = Datalink(rawValue: 1002)
        public static let linuxMonitor = Datalink(rawValue: 2001)
    }

    static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// Microseconds from 0000-01-01 to 1970-01-01, for converting timestamps to Unix time.
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Seconds from one timestamp (microseconds) to another. A capture may hold any 64-bit
    /// value: where the difference does not fit 64 bits it is taken in floating point.
    public static func seconds(from start: Int64, to end: Int64) -> Double {
        let (difference, overflow) = end.subtractingReportingOverflow(start)
        return overflow ? (Double(end) - Double(start)) / 1_000_000 : Double(difference) / 1_000_000
    }

    /// A timestamp (microseconds since 0 AD) as seconds since 1970.
    public static func unixTime(_ timestamp: Int64) -> Double {
        seconds(from: unixEpochOffset, to: timestamp)
    }

    private var buffer = ChunkBuffer()
    public private(set) var datalink: Datalink?

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(bytes)
    }

    /// Bytes received but not yet returned.
    public var bufferedByteCount: Int { buffer.count }

    /// The next HCI packet, or nil when more bytes are needed. Records that carry no HCI
    /// packet (monitor notes, index events) are skipped.
    /// - Throws: `CodecError` with the file offset when the header or a record is malformed.
    public mutating func next() throws(CodecError) -> Record? {
        try nextPacket().map { Record(timestamp: $0.timestamp, packet: H4Packet(type: $0.type, body: Array($0.body))) }
    }

    /// The next HCI packet as `next()` finds it, without copying its bytes.
    /// - Throws: `CodecError` with the file offset when the header or a record is malformed.
    public mutating func nextPacket() throws(CodecError) -> PacketView? {
        var packet = PacketView(timestamp: 0, type: .event, body: [])
        return try nextPacket(into: &packet) ? packet : nil
    }

    /// The next HCI packet as `nextPacket()` finds it, written into `packet`; false when no
    /// whole record is buffered (`packet.body` is then empty). A reader of many records keeps one
    /// `packet` (an optional made and dropped per record cost more than the record's header).
    /// Its body is a slice of the parser's buffer: let go of it (or of `packet`) before `append`,
    /// which would otherwise copy the buffer.
    /// - Throws: `CodecError` with the file offset when the header or a record is malformed.
    public mutating func nextPacket(into packet: inout PacketView) throws(CodecError) -> Bool {
        packet.body = []  // the buffer is changed below: not shared with the last packet
        if datalink == nil {
            guard buffer.count >= 16 else { return false }
            let header = buffer.slice(from: 0, length: 16)
            var reader = ByteReader(header, structure: "btsnoop header")
            let magic = try reader.bytes(8, "magic")
            guard magic.elementsEqual(Self.magic) else {
                throw error(.unexpectedValue(field: "magic", expected: "\"btsnoop\\0\"",
                                             found: HexText.format(magic, separator: " ")), at: header.startIndex)
            }
            let version = try reader.uint32BE("version")
            guard version == 1 else {
                throw error(.unexpectedValue(field: "version", expected: "1", found: "\(version)"), at: header.startIndex + 8)
            }
            let link = Datalink(rawValue: try reader.uint32BE("datalink"))
            guard [.hci, .hciUART, .linuxMonitor].contains(link) else {
                throw error(.unexpectedValue(field: "datalink", expected: "1001, 1002 or 2001", found: "\(link.rawValue)"),
                            at: header.startIndex + 12)
            }
            datalink = link
            buffer.consume(16)
        }
        while buffer.count >= 24 {
            // The record header: original length, included length, flags, cumulative drops
            // and the timestamp, big-endian, read in place (a whole header is there).
            let included = Int(buffer.uint32BE(at: 4))
            let flags = buffer.uint32BE(at: 8)
            let high = Int64(buffer.uint32BE(at: 16))
            let low = Int64(buffer.uint32BE(at: 20))
            let recordOffset = buffer.readIndex
            guard included <= 65_535 + 5 else {
                throw error(.unexpectedValue(field: "included length", expected: "at most 65540", found: "\(included)"),
                            at: recordOffset + 4)
            }
            guard buffer.count >= 24 + included else { return false }
            let data = buffer.slice(from: 24, length: included)
            let parsed = try hciPacket(from: data, flags: flags, offset: recordOffset)
            buffer.consume(24 + included)
            if let (type, body) = parsed {
                packet.timestamp = high << 32 | low
                packet.type = type
                packet.body = body
                return true
            }
        }
        return false
    }

    private func hciPacket(from data: ArraySlice<UInt8>, flags: UInt32,
                           offset: Int) throws(CodecError) -> (H4PacketType, ArraySlice<UInt8>)? {
        switch datalink {
        case .hciUART:
            guard let type = data.first else {
                throw error(.truncated(field: "H4 packet type", needed: 1, available: 0), at: offset + 24)
            }
            return (H4PacketType(rawValue: type), data.dropFirst())
        case .hci:
            // Bit 0: received (1) or sent (0); bit 1: command/event (1) or data (0).
            let received = flags & 1 != 0
            let control = flags & 2 != 0
            let type: H4PacketType = control ? (received ? .event : .command) : .aclData
            return (type, data)
        default:
            // Linux monitor: the low 16 bits are the opcode. 2 command, 3 event, 4/5 ACL.
            switch flags & 0xFFFF {
            case 2: return (.command, data)
            case 3: return (.event, data)
            case 4, 5: return (.aclData, data)
            default: return nil
            }
        }
    }

    /// Checks, at the end of the file, that it held a header and ended at a record's end.
    /// - Throws: `CodecError` naming the offset of what was cut short.
    public func finish() throws(CodecError) {
        if datalink == nil {
            throw error(.truncated(field: "btsnoop header", needed: 16, available: buffer.count), at: buffer.readIndex)
        }
        guard buffer.count > 0 else { return }
        let needed = buffer.count >= 8 ? 24 + Int(buffer.uint32BE(at: 4)) : 24
        throw error(.truncated(field: "record", needed: needed, available: buffer.count), at: buffer.readIndex)
    }

    private func error(_ reason: CodecError.Reason, at index: Int) -> CodecError {
        CodecError(structure: "btsnoop capture", offset: buffer.streamOffset(ofStorageIndex: index), reason: reason)
    }
}
