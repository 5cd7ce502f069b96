// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// HCI's rules for the command engine: command credits (Num_HCI_Command_Packets, one at the
/// start), the events the host acts on, a Hardware Error ending what waits, and a raw kernel
/// socket's traffic from other programs handed to the observer rather than counted.
package struct HCIWire: CommandWire {
    public let sharedWithKernel: Bool
    var observer: ((ObservedPacket) -> Void)?
    var hardwareErrorSeen: ((UInt8) -> Void)?
    /// Num_HCI_Command_Packets last granted. A controller starts with one credit.
    private var credits = 1

    init(sharedWithKernel: Bool) {
        self.sharedWithKernel = sharedWithKernel
    }

    public var maySend: Bool { credits > 0 }

    public mutating func sending(_ packet: H4Packet) { credits -= 1 }

    public mutating func classify(_ packet: H4Packet) -> Inbound<HCIEvent> {
        switch packet.type {
        case .event:
            let event: HCIEvent
            do {
                event = try HCIEvent(parsing: packet.body[...])
            } catch {
                return .unsolicited(.malformedEvent, detail: "\(error)")
            }
            switch event {
            case let .commandComplete(complete): credits = Int(complete.numHCICommandPackets)
            case let .commandStatus(status): credits = Int(status.numHCICommandPackets)
            case .hardwareError: credits = 1  // the credit the lost command held comes back: a Reset must go out
            default: break
            }
            if Self.handles(event) { return .event(event) }
            return sharedWithKernel ? .skipped : .unsolicited(.unknownEvent, detail: Self.describe(event))
        case .command:
            guard sharedWithKernel, let command = try? packet.command() else {
                return .unsolicited(.commandFromController, detail: "\(packet.body.count) bytes")
            }
            guard let observer else { return .skipped }
            observer(.command(command))
            return .observed
        default:
            return .unsolicited(.dataPacket, detail: "\(packet.type), \(packet.body.count) bytes")
        }
    }

    public func isAnswerOrFault(_ event: HCIEvent) -> Bool {
        switch event {
        case .commandComplete, .commandStatus, .hardwareError: true
        default: false
        }
    }

    /// A Command Complete or Status for a command not waited for is another program's on a
    /// kernel socket, and input nobody asked for on an owned controller (except the no-op
    /// opcode 0x0000 a controller uses to grant credits); a Command Complete also goes to the
    /// observer. A Hardware Error is thrown, `hardwareErrorSeen` told first; anything else is kept.
    public mutating func passOver(_ event: HCIEvent) throws(HostError) -> PassedOver {
        switch event {
        case let .commandComplete(complete):
            var outcome = PassedOver(unsolicited: strayAnswer(complete.opcode, event: "Command Complete"))
            if let observer {
                observer(.commandComplete(complete))
                outcome.observed = true
            }
            return outcome
        case let .commandStatus(status):
            return PassedOver(unsolicited: strayAnswer(status.opcode, event: "Command Status"))
        case let .hardwareError(code):
            hardwareErrorSeen?(code)
            throw .hardwareError(code: code)
        default:
            return PassedOver(keep: true)
        }
    }

    public func describe(_ event: HCIEvent) -> String { "\(event.code)" }

    private func strayAnswer(_ opcode: HCIOpcode, event: String) -> (kind: UnsolicitedInput, detail: String)? {
        guard !sharedWithKernel, opcode.rawValue != 0 else { return nil }
        return (.strayAnswer, "\(event) for \(opcode.name ?? "\(opcode)")")
    }

    /// The events the host acts on: answers, hardware errors, and the LE subevents it enables
    /// (advertising reports, extended reports, advertising set terminated).
    private static func handles(_ event: HCIEvent) -> Bool {
        switch event {
        case .commandComplete, .commandStatus, .hardwareError: true
        case .leMeta(.other): false
        case .leMeta: true
        case .other: false
        }
    }

    private static func describe(_ event: HCIEvent) -> String {
        if case let .leMeta(.other(subevent, _)) = event { return "LE Meta subevent 0x\(HexText.format([subevent]))" }
        return "\(event.code)"
    }
}
