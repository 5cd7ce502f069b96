// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The command engine for a controller: sends one command at a time within the controller's
/// command credits, waits with a real deadline for its Command Complete (or Command Status),
/// and keeps every other event for the caller. The waiting, the queue and the counting are
/// `CommandEngine`'s, shared with `MgmtClient`; HCI's own rules are `HCIWire`'s.
package typealias HCIController = CommandEngine<HCIWire>

extension HCIController {
    /// - Parameter sharedWithKernel: true for a raw kernel socket (see `sharedWithKernel`).
    public convenience init(transport: any HCITransport, commandTimeout: Duration = .seconds(2),
                            sharedWithKernel: Bool = false) {
        self.init(transport: transport, wire: HCIWire(sharedWithKernel: sharedWithKernel), device: transport.name,
                  commandTimeout: commandTimeout)
    }

    /// Whether the kernel's own host drives the controller too (a raw kernel socket): its
    /// commands, their answers and events of every kind are then normal traffic, not input
    /// nobody asked for.
    public var sharedWithKernel: Bool { wire.sharedWithKernel }

    /// Called with what other programs do on the same controller, as a kernel HCI socket shows
    /// it: the commands they send and the Command Completes answering them. The emitter
    /// watches these for anything that knocks its advertising off.
    public var observer: ((ObservedPacket) -> Void)? {
        get { wire.observer }
        set { wire.observer = newValue }
    }

    /// Called with every Hardware Error the controller reports, whichever wait sees it (a
    /// command's, including one a control request or a rotation sent, or `nextEvent`'s),
    /// before it is thrown: the supervisor learns of it even when the thrower is someone else.
    public var hardwareErrorSeen: ((UInt8) -> Void)? {
        get { wire.hardwareErrorSeen }
        set { wire.hardwareErrorSeen = newValue }
    }

    /// Sends `command` and returns its return parameters.
    /// - Parameter context: the values sent, for the message if the controller refuses.
    /// - Throws: `HostError.controllerRefused` with the status, `.commandTimeout` when no answer
    ///   arrives in time, `.malformedEvent` when its answer does not parse (a Command Complete
    ///   without a status, return parameters too short), `.transport` when the link fails,
    ///   `.hardwareError` when the controller reports one meanwhile.
    @discardableResult
    public func send<C: HCICommand>(_ command: C, context: String? = nil) throws(HostError) -> C.ReturnParameters {
        let packet = command.packet
        let name = C.opcode.name ?? "\(C.opcode)"
        let timeout = commandTimeout
        let complete = try exchange(H4Packet(type: .command, body: packet.bytes), line: "> \(packet)",
                                         timedOut: { .commandTimeout(opcode: C.opcode, timeout: timeout, ignored: $0) }) {
            (event: HCIEvent) throws(HostError) -> Answering<CommandComplete> in
            switch event {
            case let .commandComplete(complete) where complete.opcode == C.opcode:
                // Every command's return parameters start with its status (Core Vol 4 Part E
                // 7.7.14); a Command Complete that ends before it is no answer at all.
                guard let status = complete.status else {
                    throw .malformedEvent(CodecError(structure: "Command Complete for \(name)", offset: 5,
                                                     reason: .truncated(field: "status", needed: 1, available: 0)))
                }
                trace?("< Command Complete \(name): \(status)")
                guard status.isSuccess else {
                    throw .controllerRefused(opcode: C.opcode, status: status, context: context)
                }
                return .answer(complete)
            case let .commandStatus(status) where status.opcode == C.opcode:
                trace?("< Command Status \(name): \(status.status)")
                guard status.status.isSuccess else {
                    throw .controllerRefused(opcode: C.opcode, status: status.status, context: context)
                }
                return .accepted
            default:
                return .other
            }
        }
        do {
            return try complete.decodeReturnParameters(for: C.self)
        } catch {
            throw .malformedEvent(error)
        }
    }
}

/// Something another program did on the controller, seen on a kernel HCI socket.
package enum ObservedPacket: Hashable, Sendable {
    /// A command another program sent.
    case command(HCICommandPacket)
    /// A Command Complete that answers no command of this host.
    case commandComplete(CommandComplete)
}

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

extension HCIController {
    /// Sends a command that turns something off (legacy advertising, a scan). Command
    /// Disallowed (0x0C) then means it was off already: controllers with legacy advertising
    /// only (BlueZ's emulator's LE-only type, many 4.x chips) answer a disable so when nothing
    /// is on, and off is what was asked for.
    /// - Throws: `HostError` for any other refusal or failure.
    public func sendDisable<C: HCICommand>(_ command: C) throws(HostError) {
        do {
            try send(command)
        } catch let .controllerRefused(_, status, _) where status == .commandDisallowed {
            trace?("  (Command Disallowed: already off)")
        }
    }
}
