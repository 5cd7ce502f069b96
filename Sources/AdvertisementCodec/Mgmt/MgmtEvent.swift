// SPDX-License-Identifier: GPL-2.0-or-later

/// A management event, typed where the host acts on it. Events this codec does not decode
/// stay representable as `.other`.
public enum MgmtEvent: Hashable, Sendable {
    /// A command finished: its opcode, status, and return parameters (`mgmt-api.txt` 0x0001).
    case commandComplete(opcode: MgmtOpcode, status: MgmtStatus, returnParameters: [UInt8])
    /// A command failed early, or was accepted to complete later (0x0002).
    case commandStatus(opcode: MgmtOpcode, status: MgmtStatus)
    /// The controller reported an HCI Hardware Error (0x0003).
    case controllerError(code: UInt8)
    /// An adapter appeared (0x0004): plugged in, or handed back by a user channel.
    case indexAdded
    /// An adapter went away (0x0005): unplugged, or taken by a user channel.
    case indexRemoved
    /// One or more settings changed (0x0006): powered off or on among them.
    case newSettings(MgmtSettings)
    /// Another program added an advertising instance (0x0023).
    case advertisingAdded(instance: UInt8)
    /// An instance was removed by another program, by the kernel at power off, or when it
    /// timed out (0x0024).
    case advertisingRemoved(instance: UInt8)
    case other(code: MgmtEventCode, parameters: [UInt8])

    /// Reads the event a packet carries (the packet's index says which adapter).
    /// - Throws: `CodecError` when a decoded event's parameters do not fit its layout.
    public init(packet: MgmtPacket) throws(CodecError) {
        let code = MgmtEventCode(packet.code)
        var reader = ByteReader(packet.parameters[...], structure: code.description)
        switch code {
        case .commandComplete:
            let opcode = MgmtOpcode(try reader.uint16LE("Command_Opcode"))
            let status = MgmtStatus(try reader.uint8("Status"))
            self = .commandComplete(opcode: opcode, status: status, returnParameters: Array(reader.rest()))
            return
        case .commandStatus:
            self = .commandStatus(opcode: MgmtOpcode(try reader.uint16LE("Command_Opcode")),
                                  status: MgmtStatus(try reader.uint8("Status")))
        case .controllerError: self = .controllerError(code: try reader.uint8("Error_Code"))
        case .indexAdded: self = .indexAdded
        case .indexRemoved: self = .indexRemoved
        case .newSettings: self = .newSettings(MgmtSettings(rawValue: try reader.uint32LE("Current_Settings")))
        case .advertisingAdded: self = .advertisingAdded(instance: try reader.uint8("Instance"))
        case .advertisingRemoved: self = .advertisingRemoved(instance: try reader.uint8("Instance"))
        default:
            self = .other(code: code, parameters: packet.parameters)
            return
        }
        try reader.expectEnd()
    }

    public var code: MgmtEventCode {
        switch self {
        case .commandComplete: .commandComplete
        case .commandStatus: .commandStatus
        case .controllerError: .controllerError
        case .indexAdded: .indexAdded
        case .indexRemoved: .indexRemoved
        case .newSettings: .newSettings
        case .advertisingAdded: .advertisingAdded
        case .advertisingRemoved: .advertisingRemoved
        case let .other(code, _): code
        }
    }

    /// The event's parameters as the kernel writes them.
    public var parameters: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case let .commandComplete(opcode, status, returnParameters):
            out.appendLE(opcode.rawValue)
            out.append(status.rawValue)
            out += returnParameters
        case let .commandStatus(opcode, status):
            out.appendLE(opcode.rawValue)
            out.append(status.rawValue)
        case let .controllerError(code): out.append(code)
        case .indexAdded, .indexRemoved: break
        case let .newSettings(settings): out.appendLE(settings.rawValue)
        case let .advertisingAdded(instance), let .advertisingRemoved(instance): out.append(instance)
        case let .other(_, parameters): out = parameters
        }
        return out
    }

    /// The event as the kernel sends it about adapter `index`.
    public func packet(index: UInt16) -> MgmtPacket {
        MgmtPacket(code: code.rawValue, index: index, parameters: parameters)
    }

    /// The typed return parameters of a successful Command Complete for `command`.
    /// - Throws: `CodecError` if they are shorter than the command's layout.
    public static func decodeReturnParameters<C: MgmtCommand>(_ bytes: [UInt8], for command: C.Type) throws(CodecError)
        -> C.ReturnParameters {
        try C.ReturnParameters(parsing: bytes[...])
    }
}
