// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The command engine: sends one command at a time within the controller's command credits,
/// waits with a real deadline for its Command Complete (or Command Status), and keeps every
/// other event for the caller.
public final class HCIController {
    public let transport: any HCITransport
    /// How long a command may go unanswered.
    public var commandTimeout: Duration
    /// Called with each command sent and each answer, for `--verbose`.
    public var trace: ((String) -> Void)?
    /// Commands sent so far (each is one round trip).
    public private(set) var roundTrips = 0

    /// Called with what other programs do on the same controller, as a kernel HCI socket shows
    /// it: the commands they send and the Command Completes answering them. The emitter
    /// watches these for anything that knocks its advertising off.
    public var observer: ((ObservedPacket) -> Void)?

    /// Num_HCI_Command_Packets last granted. A controller starts with one credit.
    private var credits = 1
    private var pendingEvents: [HCIEvent] = []
    /// Whether `nextEvent`'s wait handed the observer a packet (it then returns early).
    private var observedWhileWaiting = false

    public init(transport: any HCITransport, commandTimeout: Duration = .seconds(2)) {
        self.transport = transport
        self.commandTimeout = commandTimeout
    }

    /// Sends `command` and returns its return parameters.
    /// - Parameter context: the values sent, for the message if the controller refuses.
    /// - Throws: `HostError.controllerRefused` with the status, `.commandTimeout` when no answer
    ///   arrives in time, `.transport` when the link fails.
    @discardableResult
    public func send<C: HCICommand>(_ command: C, context: String? = nil) throws(HostError) -> C.ReturnParameters {
        let deadline = ContinuousClock.now + commandTimeout
        while credits == 0 {
            guard let event = try receiveEvent(until: deadline) else {
                throw .commandTimeout(opcode: C.opcode, timeout: commandTimeout)
            }
            absorbCredits(event)
        }
        let packet = command.packet
        trace?("> \(packet)")
        do {
            try transport.send(H4Packet(type: .command, body: packet.bytes))
        } catch {
            throw .transport(error, device: transport.name)
        }
        credits -= 1
        roundTrips += 1
        while true {
            guard let event = try receiveEvent(until: deadline) else {
                throw .commandTimeout(opcode: C.opcode, timeout: commandTimeout)
            }
            switch event {
            case let .commandComplete(complete):
                credits = Int(complete.numHCICommandPackets)
                guard complete.opcode == C.opcode else {
                    observer?(.commandComplete(complete))
                    continue
                }
                let status = complete.status ?? .success
                trace?("< Command Complete \(C.opcode.name ?? "\(C.opcode)"): \(status)")
                guard status.isSuccess else {
                    throw .controllerRefused(opcode: C.opcode, status: status, context: context)
                }
                do {
                    return try complete.decodeReturnParameters(for: C.self)
                } catch {
                    throw .malformedEvent(error)
                }
            case let .commandStatus(status):
                credits = Int(status.numHCICommandPackets)
                guard status.opcode == C.opcode else { continue }
                trace?("< Command Status \(C.opcode.name ?? "\(C.opcode)"): \(status.status)")
                guard status.status.isSuccess else {
                    throw .controllerRefused(opcode: C.opcode, status: status.status, context: context)
                }
            case let .hardwareError(code):
                throw .hardwareError(code: code)
            default:
                pendingEvents.append(event)
            }
        }
    }

    /// The next event that is not an answer to a command, waiting at most `timeout`.
    /// - Parameter interrupt: a descriptor that ends the wait early (the signal pipe).
    /// - Returns: nil on timeout or interrupt, or as soon as the `observer` has been handed
    ///   something (so that a watcher acts on it at once, not at the end of the wait).
    /// - Throws: `HostError` when the link fails or the controller reports a hardware error.
    public func nextEvent(timeout: Duration, interrupt: Int32? = nil) throws(HostError) -> HCIEvent? {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        observedWhileWaiting = false
        while !observedWhileWaiting,
              let event = try receiveEvent(until: deadline, interrupt: interrupt, returnOnObserved: true) {
            switch event {
            case let .commandComplete(complete):
                absorbCredits(event)
                if let observer {
                    observer(.commandComplete(complete))
                    observedWhileWaiting = true
                }
            case .commandStatus: absorbCredits(event)
            case let .hardwareError(code): throw .hardwareError(code: code)
            default: return event
            }
        }
        return nil
    }

    /// The next event from the transport; nil once `deadline` passes or `interrupt` is readable
    /// (or, with `returnOnObserved`, once another program's command went to the observer).
    private func receiveEvent(until deadline: ContinuousClock.Instant, interrupt: Int32? = nil,
                              returnOnObserved: Bool = false) throws(HostError) -> HCIEvent? {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let result: ReceiveResult
            do {
                result = try transport.receive(timeout: max(remaining, .zero), interrupt: interrupt)
            } catch {
                throw .transport(error, device: transport.name)
            }
            switch result {
            case .timedOut, .interrupted: return nil
            case let .packet(packet):
                if let event = try decodeEvent(packet) { return event }
                if let observer, let command = try? packet.command() {
                    observer(.command(command))
                    observedWhileWaiting = true
                    if returnOnObserved { return nil }
                }
            }
        }
    }

    private func decodeEvent(_ packet: H4Packet) throws(HostError) -> HCIEvent? {
        do {
            return try packet.event()
        } catch {
            throw .malformedEvent(error)
        }
    }

    private func absorbCredits(_ event: HCIEvent) {
        switch event {
        case let .commandComplete(complete): credits = Int(complete.numHCICommandPackets)
        case let .commandStatus(status): credits = Int(status.numHCICommandPackets)
        default: break
        }
    }
}

/// Something another program did on the controller, seen on a kernel HCI socket.
public enum ObservedPacket: Hashable, Sendable {
    /// A command another program sent.
    case command(HCICommandPacket)
    /// A Command Complete that answers no command of this host.
    case commandComplete(CommandComplete)
}
