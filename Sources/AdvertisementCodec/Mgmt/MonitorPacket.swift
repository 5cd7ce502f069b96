// SPDX-License-Identifier: GPL-2.0-or-later

/// What the kernel's monitor channel (`HCI_CHANNEL_MONITOR`, what btmon reads) says about the
/// management interface: which program opened a management socket, and every management
/// command and event, each with the cookie of the socket it came from or went to. The packet
/// has the management packet's header (opcode, index, length, little-endian), so
/// `MgmtPacket(parsing:)` frames it; this reads the parameters of the opcodes that concern
/// management sockets and leaves the rest (the HCI traffic of every adapter) as `.other`.
public enum MonitorMessage: Hashable, Sendable {
    /// Monitor opcodes (Linux `include/net/bluetooth/hci_mon.h`).
    public static let controlOpen: UInt16 = 14
    public static let controlClose: UInt16 = 15
    public static let controlCommand: UInt16 = 16
    public static let controlEvent: UInt16 = 17

    /// A socket was opened (or was open when the monitor opened): its cookie, its format
    /// (2 for the management interface), and the name of the process that opened it.
    case opened(cookie: UInt32, format: UInt16, process: String)
    /// A socket closed.
    case closed(cookie: UInt32)
    /// A program sent a management command to adapter `index`.
    case command(cookie: UInt32, index: UInt16, opcode: MgmtOpcode, parameters: [UInt8])
    /// The kernel sent a management event to one socket (a Command Complete among them) or to all.
    case event(cookie: UInt32, index: UInt16, event: MgmtEvent)
    /// Anything else on the channel (HCI packets, notes), by its monitor opcode.
    case other(opcode: UInt16)

    /// Reads the message in a monitor packet.
    /// - Throws: `CodecError` when a management message's parameters are cut short.
    public init(packet: MgmtPacket) throws(CodecError) {
        var reader = ByteReader(packet.parameters[...], structure: "monitor message \(packet.code)")
        switch packet.code {
        case Self.controlOpen:
            let cookie = try reader.uint32LE("Cookie")
            let format = try reader.uint16LE("Format")
            _ = try reader.bytes(3, "Version")
            _ = try reader.uint32LE("Flags")
            let length = try reader.uint8("Command_Name_Length")
            let name = try reader.bytes(Int(length), "Command_Name")
            let text = name.prefix { $0 != 0 }
            self = .opened(cookie: cookie, format: format, process: String(decoding: text, as: UTF8.self))
        case Self.controlClose:
            self = .closed(cookie: try reader.uint32LE("Cookie"))
        case Self.controlCommand:
            let cookie = try reader.uint32LE("Cookie")
            let opcode = MgmtOpcode(try reader.uint16LE("Opcode"))
            self = .command(cookie: cookie, index: packet.index, opcode: opcode, parameters: Array(reader.rest()))
        case Self.controlEvent:
            let cookie = try reader.uint32LE("Cookie")
            let code = try reader.uint16LE("Event_Code")
            let event = try MgmtEvent(packet: MgmtPacket(code: code, index: packet.index, parameters: Array(reader.rest())))
            self = .event(cookie: cookie, index: packet.index, event: event)
        default:
            self = .other(opcode: packet.code)
        }
    }
}

extension MgmtOpcode {
    /// Whether the command creates or rewrites an advertising instance (its first parameter
    /// is the instance): Add Advertising, Add Extended Advertising Parameters or Data.
    public var writesAdvertisingInstance: Bool {
        self == .addAdvertising || self == .addExtendedAdvertisingParameters || self == .addExtendedAdvertisingData
    }
}
