// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The command engine for the kernel's management interface, for one adapter: sends a
/// command, waits with a real deadline for its Command Complete (or Command Status), and keeps
/// every other event about the adapter for the caller. The waiting, the queue and the counting
/// are `CommandEngine`'s, shared with `HCIController`; the management rules are `MgmtWire`'s.
package typealias MgmtClient = CommandEngine<MgmtWire>

extension MgmtClient {
    public convenience init(transport: any MgmtTransport, index: UInt16, commandTimeout: Duration = .seconds(2)) {
        self.init(transport: transport, wire: MgmtWire(index: index), device: "hci\(index)", commandTimeout: commandTimeout)
    }

    /// The adapter (0 for hci0).
    public var index: UInt16 { wire.index }

    /// Talks to adapter `index` from now on: the same adapter, back under another number.
    func follow(to index: UInt16) {
        wire = MgmtWire(index: index)
        device = "hci\(index)"
    }
    /// The adapter's name in messages: `hci0`.
    /// How long powering an adapter on may take: the kernel runs the controller's whole
    /// initialization first (allowing each command 10 s), which a USB dongle or a controller
    /// behind a slow link takes seconds over.
    public static let powerOnTimeout = Duration.seconds(10)

    public var adapter: String { device }

    /// Sends `command` to the adapter (or, with `global`, to no adapter) and returns its
    /// return parameters.
    /// - Parameters:
    ///   - context: the values sent, for the message if the kernel refuses.
    ///   - timeout: how long the answer may take (nil: `commandTimeout`).
    /// - Throws: `HostError.managementRefused` with the status, `.commandTimeout` when no
    ///   answer arrives in time, `.transport` when the socket fails.
    @discardableResult
    public func send<C: MgmtCommand>(_ command: C, global: Bool = false, context: String? = nil,
                                     timeout: Duration? = nil) throws(HostError) -> C.ReturnParameters {
        let target = global ? MgmtPacket.nonController : index
        let packet = command.packet(index: target)
        let name = C.opcode.name ?? C.opcode.description
        let timeout = timeout ?? commandTimeout
        let adapter = adapter
        let returnParameters = try exchange(
            packet, line: "> mgmt \(name) [\(HexText.format(packet.parameters, separator: " "))]", timeout: timeout,
            timedOut: { _ in .managementTimeout(opcode: C.opcode, timeout: timeout) }) {
            (event: MgmtEvent) throws(HostError) -> Answering<[UInt8]> in
            switch event {
            case let .commandComplete(opcode, status, returnParameters) where opcode == C.opcode:
                trace?("< mgmt Command Complete \(name): \(status)")
                guard status.isSuccess else {
                    throw .managementRefused(opcode: C.opcode, status: status, context: context, adapter: adapter)
                }
                return .answer(returnParameters)
            case let .commandStatus(opcode, status) where opcode == C.opcode:
                trace?("< mgmt Command Status \(name): \(status)")
                guard status.isSuccess else {
                    throw .managementRefused(opcode: C.opcode, status: status, context: context, adapter: adapter)
                }
                return .accepted
            default:
                return .other
            }
        }
        do {
            return try MgmtEvent.decodeReturnParameters(returnParameters, for: C.self)
        } catch {
            throw .malformedEvent(error)
        }
    }

    /// Removes advertising instance `instance`.
    ///
    /// After the adapter was taken down and up under it (`hciconfig down`/`up`), Linux keeps an
    /// instance whose set the controller has forgotten, and refuses to remove it (Failed: the
    /// controller does not know the set). An update of its parameters then fails too, and on
    /// that failure the kernel drops the instance; so a Failed removal is followed by such an
    /// update and a second removal.
    ///
    /// Invalid Parameters (no such instance) is taken for gone only where the kernel's list
    /// proves it: while an adapter went down, Linux 6.1 answered so of an instance it still
    /// listed, and put back on the air when the adapter came up.
    /// - Returns: false when the instance was already gone.
    /// - Throws: `HostError` when the kernel refuses otherwise, or says it is gone but lists it.
    @discardableResult
    public func removeInstance(_ instance: UInt8) throws(HostError) -> Bool {
        do {
            try send(RemoveAdvertising(instance: instance))
            return true
        } catch let .managementRefused(_, status, _, _) where status == .failed {
            trace?("instance \(instance) is stuck in the kernel: updating it so that the kernel drops it")
            _ = try? send(AddExtendedAdvertisingParameters(instance: instance, flags: [.intervalParameters],
                                                           minimumInterval: 0x0800, maximumInterval: 0x0800))
            do {
                try send(RemoveAdvertising(instance: instance))
            } catch {
                try confirmGone(instance, refused: error)
            }
            return true
        } catch {
            try confirmGone(instance, refused: error)
            return false
        }
    }

    /// Rethrows `refused` unless it says `instance` does not exist (Invalid Parameters) and the
    /// kernel's list of instances proves it free; where the list does not, the refusal says so.
    private func confirmGone(_ instance: UInt8, refused: HostError) throws(HostError) {
        guard case let .managementRefused(_, status, _, _) = refused, status == .invalidParameters else { throw refused }
        let features: ReadAdvertisingFeatures.ReturnParameters
        do {
            features = try send(ReadAdvertisingFeatures())
        } catch {
            throw refused
        }
        guard features.provablyFreeInstances.contains(instance) else {
            throw .refused(Refusal(nil, .instanceStillListed(instance)))
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
    func putInstance(_ instance: UInt8, data: [UInt8], scanResponse: [UInt8] = [], extendedPDU: Bool = false,
                     label: String, options: AdvertisingOptions, separately: Bool,
                     parameters: Bool = true, duration: UInt16? = nil, log: ((String) -> Void)?) throws(HostError) {
        var flags: MgmtAdvertisingFlags = options.connectable ? [.connectable] : []
        // A secondary PHY makes the kernel send extended PDUs, which hold more than 31 bytes;
        // the Coded one puts the primary PDUs on the Coded PHY too.
        if extendedPDU { flags.insert(options.phy == .coded ? .secondaryCoded : .secondary1M) }
        // The kernel sets up a set's type (scannable or not) when its parameters come (Add
        // Extended Advertising Parameters), before any scan response: a scannable instance is
        // added whole (Add Advertising), at the kernel's interval.
        let separately = separately && scanResponse.isEmpty
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
            log?("instance \(instance): data for \(label): \(HexText.format(data))"
                 + (scanResponse.isEmpty ? "" : ", scan response \(HexText.format(scanResponse))"))
            try send(try HostError.encoding(label) { () throws(CodecError) in
                try AddExtendedAdvertisingData(instance: instance, advertisingData: data, scanResponse: scanResponse)
            }, context: "instance \(instance), \(data.count) bytes")
        } else {
            log?("instance \(instance): \(label): \(HexText.format(data))"
                 + (scanResponse.isEmpty ? "" : ", scan response \(HexText.format(scanResponse))"))
            try send(try HostError.encoding(label) { () throws(CodecError) in
                try AddAdvertising(instance: instance, flags: flags, duration: duration ?? 0, advertisingData: data,
                                   scanResponse: scanResponse)
            }, context: "instance \(instance), \(data.count) bytes")
        }
    }
}

