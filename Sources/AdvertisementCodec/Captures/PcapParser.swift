// SPDX-License-Identifier: GPL-2.0-or-later

/// Packets from pcap and pcapng captures as Wireshark writes them for Bluetooth, read as they
/// arrive in chunks, handed out as the btsnoop parser hands out its packets (so a replay reads
/// every format the same way):
///
/// - link type 201 (`BLUETOOTH_HCI_H4_WITH_PHDR`, a 4-byte direction header, then H4) and 187
///   (`BLUETOOTH_HCI_H4`): the HCI packet as it is;
/// - link types 251 (`BLUETOOTH_LE_LL`) and 256 (`BLUETOOTH_LE_LL_WITH_PHDR`, with the
///   sniffer's 10-byte header and its signal power as RSSI): advertising channel PDUs from air
///   sniffers. ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP and ADV_DIRECT_IND, and
///   ADV_EXT_IND / AUX_ADV_IND carrying AdvData, are handed out as the LE advertising report
///   event a controller would have sent for them (legacy or extended); other PDUs are skipped.
///
/// Timestamps are microseconds since 0 AD, as btsnoop's (`BTSnoopParser.unixEpochOffset`
/// after the Unix epoch).
public struct PcapParser: CapturePacketSource {
    public enum Format: Sendable { case pcap, pcapng }

    /// The capture format that `prefix` (a file's first 4 bytes or more) starts, by its magic.
    public static func format(of prefix: some Collection<UInt8>) -> Format? {
        let magic = Array(prefix.prefix(4))
        guard magic.count == 4 else { return nil }
        switch magic {
        case [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D]:
            return .pcap
        case [0x0A, 0x0D, 0x0D, 0x0A]:
            return .pcapng
        default:
            return nil
        }
    }

    public static let h4WithDirection: UInt32 = 201
    public static let h4: UInt32 = 187
    public static let lowEnergyLinkLayer: UInt32 = 251
    public static let lowEnergyLinkLayerWithHeader: UInt32 = 256
    static let supported: Set<UInt32> = [h4WithDirection, h4, lowEnergyLinkLayer, lowEnergyLinkLayerWithHeader]

    private struct Interface {
        var linkType: UInt32
        /// Timestamp units per second.
        var unitsPerSecond: Int64
    }

    private var buffer = ChunkBuffer()
    private var format: Format?
    private var bigEndian = false
    /// pcap: the one interface; pcapng: those of the current section, by number.
    private var interfaces: [Interface] = []
    /// Bytes for a synthesised advertising report event (link-layer captures).
    private var event: [UInt8] = []
    /// Link-layer PDUs handed out even when their CRC shows them damaged (`badCRCPackets`).
    public var includeBadCRC = false
    /// Link-layer PDUs whose CRC failed, left out (or, with `includeBadCRC`, handed out): the
    /// sniffer's header says so (link type 256, "CRC checked" and not "CRC valid"), or the three
    /// CRC bytes after the PDU do not match it. A bit error in an address would otherwise be a
    /// device that never existed.
    public private(set) var badCRCPackets = 0

    public init() {}

    /// The link type of the capture (pcap) or of its first interface (pcapng), once read.
    public var linkType: UInt32? { interfaces.first?.linkType }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(bytes)
    }

    /// Bytes received that no whole record has used yet.
    public var bufferedByteCount: Int { buffer.count }

    /// The next HCI packet (as `BTSnoopParser.nextPacket(into:)` gives it); false when no whole
    /// record is buffered. The body is a slice of the parser's storage: let go of it before
    /// `append`.
    /// - Throws: `CodecError` with the file offset when the capture is malformed or of a link
    ///   type other than the four above.
    public mutating func nextPacket(into packet: inout BTSnoopParser.PacketView) throws(CodecError) -> Bool {
        packet.body = []
        if format == nil {
            guard buffer.count >= 4 else { return false }
            guard let found = Self.format(of: buffer.slice(from: 0, length: 4)) else {
                throw error(.unexpectedValue(field: "magic", expected: "a pcap or pcapng magic number",
                                             found: HexText.format(buffer.slice(from: 0, length: 4), separator: " ")), at: 0)
            }
            format = found
        }
        return format == .pcap ? try nextPcapPacket(into: &packet) : try nextPcapngPacket(into: &packet)
    }

    /// Checks that the capture ended at a record's end.
    /// - Throws: `CodecError` naming the offset of the record that was cut short.
    public func finish() throws(CodecError) {
        guard buffer.count > 0 else {
            if format == nil { throw error(.truncated(field: "magic number", needed: 4, available: 0), at: 0) }
            return
        }
        throw error(.truncated(field: format == .pcapng ? "block" : "record", needed: neededForNext,
                               available: buffer.count), at: 0)
    }

    private var neededForNext: Int {
        switch format {
        case nil: return 4
        case .pcap: return interfaces.isEmpty ? 24 : 16 + (buffer.count >= 16 ? Int(uint32(at: 8)) : 0)
        case .pcapng: return buffer.count >= 8 ? Int(uint32(at: 4)) : 12
        }
    }

    // MARK: - pcap

    private mutating func nextPcapPacket(into packet: inout BTSnoopParser.PacketView) throws(CodecError) -> Bool {
        if interfaces.isEmpty {
            guard buffer.count >= 24 else { return false }
            let magic = buffer.uint32BE(at: 0)
            bigEndian = magic == 0xA1B2_C3D4 || magic == 0xA1B2_3C4D
            let nanoseconds = magic == 0xA1B2_3C4D || magic == 0x4D3C_B2A1
            let link = uint32(at: 20) & 0x0FFF_FFFF
            try checkLinkType(link, at: 20)
            interfaces = [Interface(linkType: link, unitsPerSecond: nanoseconds ? 1_000_000_000 : 1_000_000)]
            buffer.consume(24)
        }
        while buffer.count >= 16 {
            let included = Int(uint32(at: 8))
            guard included <= 262_144 else {
                throw error(.unexpectedValue(field: "included length", expected: "at most 262144", found: "\(included)"), at: 8)
            }
            guard buffer.count >= 16 + included else { return false }
            let seconds = Int64(uint32(at: 0))
            let fraction = Int64(uint32(at: 4))
            let interface = interfaces[0]
            let data = buffer.slice(from: 16, length: included)
            let offset = buffer.streamOffset(ofStorageIndex: data.startIndex)
            buffer.consume(16 + included)
            if try packetFrom(data, linkType: interface.linkType, offset: offset, into: &packet) {
                packet.timestamp = BTSnoopParser.unixEpochOffset + seconds * 1_000_000
                    + fraction * 1_000_000 / interface.unitsPerSecond
                return true
            }
        }
        return false
    }

    // MARK: - pcapng

    private mutating func nextPcapngPacket(into packet: inout BTSnoopParser.PacketView) throws(CodecError) -> Bool {
        while buffer.count >= 12 {
            if buffer.uint32BE(at: 0) == 0x0A0D_0D0A {  // a section header: its own byte order
                let order = buffer.uint32BE(at: 8)
                guard order == 0x1A2B_3C4D || order == 0x4D3C_2B1A else {
                    throw error(.unexpectedValue(field: "byte-order magic", expected: "1A2B3C4D",
                                                 found: String(order, radix: 16)), at: 8)
                }
                bigEndian = order == 0x1A2B_3C4D
                interfaces = []
            }
            let type = uint32(at: 0)
            let length = Int(uint32(at: 4))
            guard length >= 12, length % 4 == 0, length <= 16 << 20 else {
                throw error(.unexpectedValue(field: "block length", expected: "a multiple of 4, at least 12",
                                             found: "\(length)"), at: 4)
            }
            guard buffer.count >= length else { return false }
            let body = buffer.slice(from: 8, length: length - 12)
            let bodyOffset = buffer.streamOffset(ofStorageIndex: body.startIndex)
            var found = false
            switch type {
            case 0x0000_0001:  // interface description
                guard body.count >= 8 else {
                    throw error(.truncated(field: "interface description", needed: 8, available: body.count), at: 8)
                }
                let link = UInt32(read16(body, at: 0))
                interfaces.append(Interface(linkType: link, unitsPerSecond: resolution(options: body.dropFirst(8))))
            case 0x0000_0006, 0x0000_0003:  // enhanced and simple packet blocks
                let enhanced = type == 6
                let header = enhanced ? 20 : 4
                guard body.count >= header else {
                    throw error(.truncated(field: "packet block", needed: header, available: body.count), at: 8)
                }
                let number = enhanced ? Int(read32(body, at: 0)) : 0
                guard number < interfaces.count else {
                    throw error(.unexpectedValue(field: "interface", expected: "one described before the packet",
                                                 found: "\(number)"), at: 8)
                }
                let interface = interfaces[number]
                try checkLinkType(interface.linkType, at: 8)
                let captured = Int(read32(body, at: enhanced ? 12 : 0))
                let available = body.count - header
                guard captured <= available else {
                    throw error(.truncated(field: "packet data", needed: captured, available: available), at: 8 + header)
                }
                let data = body.dropFirst(header).prefix(captured)
                found = try packetFrom(data, linkType: interface.linkType, offset: bodyOffset + header, into: &packet)
                if found {
                    let units = enhanced ? Int64(read32(body, at: 4)) << 32 | Int64(read32(body, at: 8)) : 0
                    packet.timestamp = Self.timestamp(units: units, unitsPerSecond: interface.unitsPerSecond)
                }
            default:
                break  // section headers (read above), statistics, name resolution, custom blocks
            }
            buffer.consume(length)
            if found { return true }
        }
        return false
    }

    /// `if_tsresol` among an interface's options: 10^-n (or 2^-n with the top bit) seconds.
    private func resolution(options: ArraySlice<UInt8>) -> Int64 {
        var offset = 0
        while offset + 4 <= options.count {
            let code = read16(options, at: offset)
            let length = Int(read16(options, at: offset + 2))
            if code == 0 { break }
            if code == 9, length >= 1, offset + 4 < options.count {
                let value = options[options.startIndex + offset + 4]
                let exponent = Int64(value & 0x7F)
                guard exponent <= 18 else { return 1_000_000 }
                return value & 0x80 != 0 ? 1 << exponent : (0..<exponent).reduce(1) { product, _ in product * 10 }
            }
            offset += 4 + (length + 3) / 4 * 4
        }
        return 1_000_000
    }

    // MARK: - Link types

    private func checkLinkType(_ link: UInt32, at offset: Int) throws(CodecError) {
        guard Self.supported.contains(link) else {
            throw error(.unexpectedValue(field: "link type", expected: "201, 187, 251 or 256 (Bluetooth HCI H4 or LE link layer)",
                                         found: "\(link)"), at: offset)
        }
    }

    /// Fills `packet` from a record's data; false for a record that holds nothing to hand out.
    private mutating func packetFrom(_ data: ArraySlice<UInt8>, linkType: UInt32, offset: Int,
                                     into packet: inout BTSnoopParser.PacketView) throws(CodecError) -> Bool {
        switch linkType {
        case Self.h4WithDirection, Self.h4:
            let h4 = linkType == Self.h4WithDirection ? data.dropFirst(4) : data
            guard let type = h4.first else { return false }
            packet.type = H4PacketType(rawValue: type)
            packet.body = h4.dropFirst()
            return true
        default:
            var rssi: Int8 = 127  // not available
            var frame = data
            var checked: Bool?  // the sniffer's own verdict on the CRC, where it gives one
            if linkType == Self.lowEnergyLinkLayerWithHeader {
                guard data.count >= 10 else { return false }
                let flags = UInt16(data[data.startIndex + 8]) | UInt16(data[data.startIndex + 9]) << 8
                if flags & 0x0002 != 0 { rssi = Int8(bitPattern: data[data.startIndex + 1]) }
                // 0x0400 CRC checked, 0x0800 CRC valid (LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR).
                if flags & 0x0400 != 0 { checked = flags & 0x0800 != 0 }
                frame = data.dropFirst(10)
            }
            if !includeBadCRC, !(checked ?? Self.crcMatches(linkLayer: frame)) {
                badCRCPackets += 1
                return false
            }
            guard let event = Self.advertisingReport(linkLayer: frame, rssi: rssi) else { return false }
            self.event = event
            packet.type = .event
            packet.body = self.event[...]
            return true
        }
    }

    /// Whether a link-layer frame (access address, header, payload, CRC) ends in its PDU's CRC;
    /// true for a frame too short to carry one (nothing to judge by).
    static func crcMatches(linkLayer frame: ArraySlice<UInt8>) -> Bool {
        guard frame.count >= 6 else { return true }
        let pduEnd = frame.startIndex + 6 + Int(frame[frame.startIndex + 5])
        guard pduEnd + 3 <= frame.endIndex else { return true }
        return LinkLayerCRC.matches(pdu: frame[(frame.startIndex + 4)..<pduEnd], crcBytes: frame[pduEnd..<(pduEnd + 3)])
    }

    /// The LE advertising report event a controller would send for an advertising channel PDU
    /// (access address, header, payload, CRC), or nil for a PDU that carries no advertising data.
    static func advertisingReport(linkLayer frame: ArraySlice<UInt8>, rssi: Int8) -> [UInt8]? {
        let s = frame.startIndex
        guard frame.count >= 4 + 2 + 3, frame[s] == 0xD6, frame[s + 1] == 0xBE, frame[s + 2] == 0x89,
              frame[s + 3] == 0x8E else { return nil }  // the advertising channel's access address
        let header = frame[s + 4]
        let length = Int(frame[s + 5])
        guard frame.count >= 6 + length else { return nil }
        let payload = frame[(s + 6)..<(s + 6 + length)]
        let pduType = header & 0x0F
        let randomAddress: UInt8 = header & 0x40 != 0 ? 1 : 0
        switch pduType {
        case 0x00, 0x01, 0x02, 0x04, 0x06:  // ADV_IND, ADV_DIRECT_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND
            guard payload.count >= 6 else { return nil }
            let address = payload.prefix(6)
            let data = pduType == 0x01 ? [] : payload.dropFirst(6)
            guard data.count <= 31 else { return nil }
            let eventType: UInt8 = [0x00: 0x00, 0x01: 0x01, 0x02: 0x03, 0x04: 0x04, 0x06: 0x02][pduType] ?? 0
            let parameters: [UInt8] = [0x02, 0x01, eventType, randomAddress] + address + [UInt8(data.count)] + data
                + [UInt8(bitPattern: rssi)]
            return [0x3E, UInt8(parameters.count)] + parameters
        case 0x07:  // ADV_EXT_IND, AUX_ADV_IND, AUX_SCAN_RSP, AUX_CHAIN_IND: the common extended format
            guard let first = payload.first else { return nil }
            let headerLength = Int(first & 0x3F)
            let mode = first >> 6
            guard payload.count >= 1 + headerLength else { return nil }
            let extended = payload.dropFirst().prefix(headerLength)
            var address: ArraySlice<UInt8> = [0, 0, 0, 0, 0, 0][...]
            var txPower: UInt8 = 0x7F
            if let flags = extended.first {
                var index = extended.startIndex + 1
                if flags & 0x01 != 0, index + 6 <= extended.endIndex { address = extended[index..<(index + 6)]; index += 6 }
                if flags & 0x02 != 0 { index += 6 }  // TargetA
                if flags & 0x04 != 0 { index += 1 }  // CTEInfo
                if flags & 0x08 != 0 { index += 2 }  // ADI
                if flags & 0x10 != 0 { index += 3 }  // AuxPtr
                if flags & 0x20 != 0 { index += 18 }  // SyncInfo
                if flags & 0x40 != 0, index < extended.endIndex { txPower = extended[index] }
            }
            let data = payload.dropFirst(1 + headerLength)
            guard !data.isEmpty, data.count <= 229 else { return nil }
            // Event type: connectable (mode 1), scannable (mode 2), data complete.
            let eventType: UInt16 = mode == 1 ? 0x0001 : mode == 2 ? 0x0002 : 0x0000
            var parameters: [UInt8] = [0x0D, 0x01, UInt8(eventType & 0xFF), UInt8(eventType >> 8), randomAddress]
            parameters += address
            parameters += [0x01, 0x00, 0xFF, txPower, UInt8(bitPattern: rssi), 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0]
            parameters += [UInt8(data.count)] + data
            return [0x3E, UInt8(parameters.count)] + parameters
        default:
            return nil  // SCAN_REQ, CONNECT_IND
        }
    }

    // MARK: - Bytes

    private func uint32(at offset: Int) -> UInt32 {
        let value = buffer.uint32BE(at: offset)
        return bigEndian ? value : value.byteSwapped
    }

    private func read32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        let i = bytes.startIndex + offset
        let big = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
        return bigEndian ? big : big.byteSwapped
    }

    private func read16(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16 {
        let i = bytes.startIndex + offset
        let big = UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
        return bigEndian ? big : big.byteSwapped
    }

    private func error(_ reason: CodecError.Reason, at offset: Int) -> CodecError {
        CodecError(structure: format == .pcapng ? "pcapng capture" : "pcap capture",
                   offset: buffer.streamOffset(ofStorageIndex: buffer.readIndex + offset), reason: reason)
    }
}

/// A parser of a capture file read in chunks (btsnoop, pcap, pcapng): what a replay reads.
public protocol CapturePacketSource: Sendable {
    init()
    mutating func append(_ bytes: some Sequence<UInt8>)
    /// The next HCI packet; false when no whole record is buffered.
    mutating func nextPacket(into packet: inout BTSnoopParser.PacketView) throws(CodecError) -> Bool
    /// Checks, at the end of the file, that the last record was whole.
    func finish() throws(CodecError)
    /// Records left out because their CRC failed (link-layer captures; 0 for the others).
    var badCRCPackets: Int { get }
}

extension CapturePacketSource {
    /// HCI captures carry no CRC: nothing is left out for one.
    public var badCRCPackets: Int { 0 }
}

extension PcapParser {
    /// Microseconds since 0 AD (btsnoop's clock) for a pcapng timestamp: `units` since 1970 at
    /// `unitsPerSecond` (if_tsresol: up to 10^18). A file can hold any 64-bit count; one beyond
    /// what 64 bits of microseconds since 0 AD hold stays at the nearest end of that range.
    static func timestamp(units: Int64, unitsPerSecond: Int64) -> Int64 {
        let seconds = units / unitsPerSecond
        let rest = units % unitsPerSecond
        // |rest| < unitsPerSecond, so the fraction is under a million microseconds.
        let fraction = unitsPerSecond.dividingFullWidth(rest.multipliedFullWidth(by: 1_000_000)).quotient
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(fraction)
        guard !overflowSum else { return whole < 0 ? .min : .max }
        let (timestamp, overflowOffset) = sum.addingReportingOverflow(BTSnoopParser.unixEpochOffset)
        return overflowOffset ? .max : timestamp
    }
}
