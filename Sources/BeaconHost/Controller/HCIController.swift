// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The command engine: sends one command at a time within the controller's command credits,
/// waits with a real deadline for its Command Complete (or Command Status), and keeps every
/// other event for the caller. Input nobody asked for is counted and reported, never thrown
/// (`UnsolicitedInput` has the rule).
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

    /// Called with every Hardware Error the controller reports, whichever wait sees it (a
    /// command's, including one a control request or a rotation sent, or `nextEvent`'s),
    /// before it is thrown: the supervisor learns of it even when the thrower is someone else.
    public var hardwareErrorSeen: ((UInt8) -> Void)?

    /// Whether the kernel's own host drives the controller too (a raw kernel socket): its
    /// commands, their answers and events of every kind are then normal traffic, not input
    /// nobody asked for.
    public let sharedWithKernel: Bool
    /// Input nobody asked for, by kind.
    public private(set) var unsolicited = UnsolicitedInputCounter()
    /// Called when a kind of unsolicited input is first seen, and at 10, 100, ... of it.
    public var reportUnsolicited: ((UnsolicitedInputReport) -> Void)?

    /// Num_HCI_Command_Packets last granted. A controller starts with one credit.
    private var credits = 1
    private var pendingEvents = PendingEvents<HCIEvent>()
    /// Whether `nextEvent`'s wait handed the observer a packet (it then returns early).
    private var observedWhileWaiting = false

    /// - Parameter sharedWithKernel: true for a raw kernel socket (see `sharedWithKernel`).
    public init(transport: any HCITransport, commandTimeout: Duration = .seconds(2), sharedWithKernel: Bool = false) {
        self.transport = transport
        self.commandTimeout = commandTimeout
        self.sharedWithKernel = sharedWithKernel
    }

    /// Sends `command` and returns its return parameters.
    /// - Parameter context: the values sent, for the message if the controller refuses.
    /// - Throws: `HostError.controllerRefused` with the status, `.commandTimeout` when no answer
    ///   arrives in time, `.malformedEvent` when its answer does not parse (a Command Complete
    ///   without a status, return parameters too short), `.transport` when the link fails,
    ///   `.hardwareError` when the controller reports one meanwhile.
    @discardableResult
    public func send<C: HCICommand>(_ command: C, context: String? = nil) throws(HostError) -> C.ReturnParameters {
        let deadline = ContinuousClock.now + commandTimeout
        let ignoredBefore = unsolicited
        while credits == 0 {
            guard let event = try receiveEvent(until: deadline) else {
                throw timeout(C.opcode, since: ignoredBefore)
            }
            try passOver(event)
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
        let name = C.opcode.name ?? "\(C.opcode)"
        while true {
            guard let event = try receiveEvent(until: deadline) else {
                throw timeout(C.opcode, since: ignoredBefore)
            }
            switch event {
            case let .commandComplete(complete) where complete.opcode == C.opcode:
                credits = Int(complete.numHCICommandPackets)
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
                do {
                    return try complete.decodeReturnParameters(for: C.self)
                } catch {
                    throw .malformedEvent(error)
                }
            case let .commandStatus(status) where status.opcode == C.opcode:
                credits = Int(status.numHCICommandPackets)
                trace?("< Command Status \(name): \(status.status)")
                guard status.status.isSuccess else {
                    throw .controllerRefused(opcode: C.opcode, status: status.status, context: context)
                }
            default:
                try passOver(event)
            }
        }
    }

    /// An event that answers nothing this host waits for. Its credits are taken; a Command
    /// Complete or Status is a stray answer (`answeredSomethingElse`), a Command Complete also
    /// goes to the observer; a hardware error is thrown, with the credit the lost command held
    /// given back (a Reset must go out) and `hardwareErrorSeen` told first; anything else is
    /// kept for `nextEvent`.
    private func passOver(_ event: HCIEvent) throws(HostError) {
        switch event {
        case let .commandComplete(complete):
            credits = Int(complete.numHCICommandPackets)
            answeredSomethingElse(complete.opcode, event: "Command Complete")
            if let observer {
                observer(.commandComplete(complete))
                observedWhileWaiting = true
            }
        case let .commandStatus(status):
            credits = Int(status.numHCICommandPackets)
            answeredSomethingElse(status.opcode, event: "Command Status")
        case let .hardwareError(code):
            credits = 1
            hardwareErrorSeen?(code)
            throw .hardwareError(code: code)
        default:
            keep(event)
        }
    }

    /// The next event that is not an answer to a command, waiting at most `timeout`.
    /// - Parameter interrupt: a descriptor that ends the wait early (the signal pipe).
    /// - Returns: nil on timeout or interrupt, or as soon as the `observer` has been handed
    ///   something (so that a watcher acts on it at once, not at the end of the wait).
    /// - Throws: `HostError` when the link fails or the controller reports a hardware error.
    public func nextEvent(timeout: Duration, interrupt: Int32? = nil) throws(HostError) -> HCIEvent? {
        if let event = pendingEvents.next() { return event }
        let deadline = ContinuousClock.now + timeout
        observedWhileWaiting = false
        while !observedWhileWaiting,
              let event = try receiveEvent(until: deadline, interrupt: interrupt, returnOnObserved: true) {
            switch event {
            case .commandComplete, .commandStatus, .hardwareError: try passOver(event)
            default: return event
            }
        }
        return nil
    }

    /// The next event from the transport that the host handles; nil once `deadline` passes or
    /// `interrupt` is readable (or, with `returnOnObserved`, once another program's command went
    /// to the observer). Everything else is counted as unsolicited input and passed over.
    private func receiveEvent(until deadline: ContinuousClock.Instant, interrupt: Int32? = nil,
                              returnOnObserved: Bool = false) throws(HostError) -> HCIEvent? {
        while let packet = try transport.nextPacket(until: deadline, interrupt: interrupt, device: transport.name) {
            switch packet.type {
            case .event:
                let event: HCIEvent
                do {
                    event = try HCIEvent(parsing: packet.body[...])
                } catch {
                    ignore(.malformedEvent, detail: "\(error)")
                    continue
                }
                if Self.handles(event) { return event }
                if !sharedWithKernel { ignore(.unknownEvent, detail: Self.describe(event)) }
            case .command:
                guard sharedWithKernel, let command = try? packet.command() else {
                    ignore(.commandFromController, detail: "\(packet.body.count) bytes")
                    continue
                }
                if let observer {
                    observer(.command(command))
                    observedWhileWaiting = true
                    if returnOnObserved { return nil }
                }
            default:
                ignore(.dataPacket, detail: "\(packet.type), \(packet.body.count) bytes")
            }
        }
        return nil
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

    /// A Command Complete or Status for a command not waited for: another program's on a
    /// kernel socket; on an owned controller input nobody asked for, except the no-op opcode
    /// 0x0000 a controller uses to grant credits.
    private func answeredSomethingElse(_ opcode: HCIOpcode, event: String) {
        guard !sharedWithKernel, opcode.rawValue != 0 else { return }
        ignore(.strayAnswer, detail: "\(event) for \(opcode.name ?? "\(opcode)")")
    }

    /// Keeps an event for `nextEvent`, letting the oldest half go when a flood fills the queue.
    private func keep(_ event: HCIEvent) {
        pendingEvents.keep(event) { dropped, event in
            for _ in 0..<dropped { ignore(.droppedEvent, detail: "\(event.code)") }
        }
    }

    private func ignore(_ kind: UnsolicitedInput, detail: @autoclosure () -> String) {
        if let report = unsolicited.count(kind, detail: detail()) {
            trace?("< ignored: \(report)")
            reportUnsolicited?(report)
        }
    }

    /// The timeout error, with what was passed over while waiting: the answer may have been
    /// among what did not parse.
    private func timeout(_ opcode: HCIOpcode, since before: UnsolicitedInputCounter) -> HostError {
        .commandTimeout(opcode: opcode, timeout: commandTimeout, ignored: unsolicited.since(before).summary)
    }
}

/// Something another program did on the controller, seen on a kernel HCI socket.
public enum ObservedPacket: Hashable, Sendable {
    /// A command another program sent.
    case command(HCICommandPacket)
    /// A Command Complete that answers no command of this host.
    case commandComplete(CommandComplete)
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
