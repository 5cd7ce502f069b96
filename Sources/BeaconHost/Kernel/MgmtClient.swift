// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The management command engine for one adapter: sends a command, waits with a real
/// deadline for its Command Complete (or Command Status), and keeps every other event about
/// the adapter for the caller.
public final class MgmtClient {
    public let transport: any MgmtTransport
    /// The adapter (0 for hci0).
    public let index: UInt16
    public var commandTimeout: Duration
    /// Called with each command sent and each answer, for `--verbose`.
    public var trace: ((String) -> Void)?
    /// Called with each command packet sent (the takeover watch learns our socket from it).
    public var sent: ((MgmtPacket) -> Void)?
    /// Commands sent so far (each is one round trip).
    public private(set) var roundTrips = 0
    /// Input nobody asked for, by kind: events that do not parse, and events dropped while
    /// commands waited (the same rule as the HCI command engine's, `UnsolicitedInput`).
    public private(set) var unsolicited = UnsolicitedInputCounter()
    /// Called when a kind of unsolicited input is first seen, and at 10, 100, ... of it.
    public var reportUnsolicited: ((UnsolicitedInputReport) -> Void)?
    private var pendingEvents = PendingEvents<MgmtEvent>()

    public init(transport: any MgmtTransport, index: UInt16, commandTimeout: Duration = .seconds(2)) {
        self.transport = transport
        self.index = index
        self.commandTimeout = commandTimeout
    }

    /// The adapter's name in messages: `hci0`.
    public var adapter: String { "hci\(index)" }

    /// Sends `command` to the adapter (or, with `global`, to no adapter) and returns its
    /// return parameters.
    /// - Parameter context: the values sent, for the message if the kernel refuses.
    /// - Throws: `HostError.managementRefused` with the status, `.commandTimeout` when no
    ///   answer arrives in time, `.transport` when the socket fails.
    @discardableResult
    public func send<C: MgmtCommand>(_ command: C, global: Bool = false, context: String? = nil) throws(HostError)
        -> C.ReturnParameters {
        let target = global ? MgmtPacket.nonController : index
        let packet = command.packet(index: target)
        trace?("> mgmt \(C.opcode.name ?? C.opcode.description) [\(HexText.format(packet.parameters, separator: " "))]")
        do {
            try transport.send(packet)
        } catch {
            throw .transport(error, device: adapter)
        }
        roundTrips += 1
        sent?(packet)
        let deadline = ContinuousClock.now + commandTimeout
        while true {
            guard let (eventIndex, event) = try receive(until: deadline, interrupt: nil) else {
                throw .managementTimeout(opcode: C.opcode, timeout: commandTimeout)
            }
            switch event {
            case let .commandComplete(opcode, status, returnParameters) where opcode == C.opcode && eventIndex == target:
                trace?("< mgmt Command Complete \(C.opcode.name ?? C.opcode.description): \(status)")
                guard status.isSuccess else {
                    throw .managementRefused(opcode: C.opcode, status: status, context: context, adapter: adapter)
                }
                do {
                    return try MgmtEvent.decodeReturnParameters(returnParameters, for: C.self)
                } catch {
                    throw .malformedEvent(error)
                }
            case let .commandStatus(opcode, status) where opcode == C.opcode && eventIndex == target:
                trace?("< mgmt Command Status \(C.opcode.name ?? C.opcode.description): \(status)")
                guard status.isSuccess else {
                    throw .managementRefused(opcode: C.opcode, status: status, context: context, adapter: adapter)
                }
            case .commandComplete, .commandStatus:
                continue  // another command's answer: not ours (one socket, one command at a time)
            default:
                if eventIndex == index {
                    pendingEvents.keep(event) { dropped, event in
                        trace?("< dropped the \(dropped) oldest events kept while commands waited")
                        for _ in 0..<dropped { ignore(.droppedEvent, detail: "\(event)") }
                    }
                }
            }
        }
    }

    /// The next event about the adapter that is not an answer to a command, waiting at most `timeout`.
    /// - Parameter interrupt: a descriptor that ends the wait early (the signal pipe).
    /// - Returns: nil on timeout or interrupt.
    /// - Throws: `HostError` when the socket fails.
    public func nextEvent(timeout: Duration, interrupt: Int32? = nil) throws(HostError) -> MgmtEvent? {
        if let event = pendingEvents.next() { return event }
        let deadline = ContinuousClock.now + timeout
        while let (eventIndex, event) = try receive(until: deadline, interrupt: interrupt) {
            switch event {
            case .commandComplete, .commandStatus: continue
            default: if eventIndex == index { return event }
            }
        }
        return nil
    }

    /// The next event from the socket with the adapter it concerns; nil once `deadline`
    /// passes or `interrupt` is readable. An event that does not parse is counted and
    /// reported, never thrown: a layout the kernel extends must not stop a beacon (events of
    /// codes this host does not know parse, as `.other`).
    private func receive(until deadline: ContinuousClock.Instant, interrupt: Int32?) throws(HostError)
        -> (UInt16, MgmtEvent)? {
        while let packet = try transport.nextPacket(until: deadline, interrupt: interrupt, device: adapter) {
            do {
                return (packet.index, try MgmtEvent(packet: packet))
            } catch {
                ignore(.malformedEvent, detail: "\(error)")  // the error names the event
            }
        }
        return nil
    }

    private func ignore(_ kind: UnsolicitedInput, detail: @autoclosure () -> String) {
        if let report = unsolicited.count(kind, detail: detail()) {
            trace?("< ignored: \(report)")
            reportUnsolicited?(report)
        }
    }

    /// Removes advertising instance `instance`.
    ///
    /// After the adapter was taken down and up under it (`hciconfig down`/`up`), Linux keeps an
    /// instance whose set the controller has forgotten, and refuses to remove it (Failed: the
    /// controller does not know the set). An update of its parameters then fails too, and on
    /// that failure the kernel drops the instance; so a Failed removal is followed by such an
    /// update and a second removal.
    /// - Returns: false when the instance was already gone.
    /// - Throws: `HostError` when the kernel refuses otherwise.
    @discardableResult
    public func removeInstance(_ instance: UInt8) throws(HostError) -> Bool {
        do {
            try send(RemoveAdvertising(instance: instance))
            return true
        } catch let .managementRefused(_, status, _, _) where status == .invalidParameters {
            return false
        } catch let .managementRefused(_, status, _, _) where status == .failed {
            trace?("instance \(instance) is stuck in the kernel: updating it so that the kernel drops it")
            _ = try? send(AddExtendedAdvertisingParameters(instance: instance, flags: [.intervalParameters],
                                                           minimumInterval: 0x0800, maximumInterval: 0x0800))
            do {
                try send(RemoveAdvertising(instance: instance))
            } catch let .managementRefused(_, status, _, _) where status == .invalidParameters {
                // Dropped by the kernel.
            }
            return true
        }
    }

    /// Adds (or, for one that exists, updates) advertising instance `instance` with `data`:
    /// its parameters (connectable or not, the interval, the TX power of `options`) and then
    /// its data where the kernel takes them apart (`separately`), else the whole instance at
    /// once (Add Advertising, the kernel's default interval). With `parameters` false, only the
    /// data of a running instance changes, in place.
    /// - Parameter label: what the data is, for the steps and errors ("beacon 2").
    /// - Parameter duration: seconds the instance stays on the air in each of the kernel's turns
    ///   between instances (nil: the kernel's default).
    func putInstance(_ instance: UInt8, data: [UInt8], label: String, options: AdvertisingOptions, separately: Bool,
                     parameters: Bool = true, duration: UInt16? = nil, log: ((String) -> Void)?) throws(HostError) {
        var flags: MgmtAdvertisingFlags = options.connectable ? [.connectable] : []
        do {
            if separately {
                if parameters {
                    flags.insert(.intervalParameters)
                    if options.txPower != nil { flags.insert(.txPowerParameter) }
                    if duration != nil { flags.insert(.durationParameter) }
                    let power = options.txPower.map { ", TX power \($0) dBm" } ?? ""
                    let turn = duration.map { ", \($0) s per turn" } ?? ""
                    log?("instance \(instance): parameters: \(options.connectable ? "connectable" : "non-connectable"), "
                         + "interval \(options.intervalDescription)" + power + turn)
                    let chosen = try send(AddExtendedAdvertisingParameters(
                        instance: instance, flags: flags, duration: duration ?? 0, minimumInterval: options.intervalUnits,
                        maximumInterval: options.intervalUnits, txPower: options.txPower ?? 127),
                        context: "instance \(instance), interval \(options.intervalDescription)" + power)
                    if options.txPower != nil { log?("instance \(instance): the controller chose \(chosen.txPower) dBm") }
                }
                log?("instance \(instance): data for \(label): \(HexText.format(data))")
                try send(try AddExtendedAdvertisingData(instance: instance, advertisingData: data),
                         context: "instance \(instance), \(data.count) bytes")
            } else {
                log?("instance \(instance): \(label): \(HexText.format(data))")
                try send(try AddAdvertising(instance: instance, flags: flags, duration: duration ?? 0, advertisingData: data),
                         context: "instance \(instance), \(data.count) bytes")
            }
        } catch let error as HostError {
            throw error
        } catch {
            throw .unsupported("\(label): \(error)")
        }
    }
}
