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
