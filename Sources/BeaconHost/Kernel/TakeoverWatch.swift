// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

/// Notices when another program writes one of our advertising instances through the kernel's
/// management interface. bluetoothd numbers its applications' advertisements on its own and
/// the kernel takes an Add for an instance that exists as an update, telling nobody; but it
/// copies every management command, with the sending socket's cookie, to the monitor channel,
/// and says which process opened each socket. A write to one of our instances from a socket
/// that is not ours, which the kernel completed with success, is a takeover.
///
/// Our own socket is told apart by its cookie, learnt from the first command we send after the
/// watch opened (`sent`): the monitor's copy with the same opcode, adapter and parameters, from
/// a process of our name. Until then nothing is judged, so our own writes never count.
package final class TakeoverWatch {
    public let transport: any MgmtTransport
    /// The adapter watched (followed to its new number when it comes back under another).
    public internal(set) var index: UInt16
    /// Our process's name, as the kernel reports it.
    public let process: String
    private var names: [UInt32: String] = [:]
    private var ownCookie: UInt32?
    /// Our commands not yet seen on the monitor, while our cookie is not known (bounded).
    private var unmatched: [MgmtPacket] = []
    /// Other programs' writes to an instance of ours, waiting for the kernel's answer.
    private var writes: [UInt32: [(opcode: MgmtOpcode, instance: UInt8)]] = [:]
    /// Packets on the monitor that did not parse: counted and reported (the first, then at 10,
    /// 100, ...), never the end of a run.
    private var ignored = UnsolicitedInputCounter()
    public var malformed: Int { ignored.counts[.malformedEvent, default: 0] }
    /// Called with each report of input that did not parse.
    public var reportUnsolicited: ((UnsolicitedInputReport) -> Void)?

    public init(transport: any MgmtTransport, index: UInt16, process: String) {
        self.transport = transport
        self.index = index
        self.process = process
    }

    public var pollDescriptor: Int32? { transport.pollDescriptor }

    /// Called with every command our management socket sends.
    public func sent(_ packet: MgmtPacket) {
        guard ownCookie == nil else { return }
        unmatched.append(packet)
        if unmatched.count > 64 { unmatched.removeFirst() }
    }

    /// Reads what the monitor has without waiting and returns the takeovers among it.
    /// - Parameter ours: the instances that are ours now.
    /// - Throws: `TransportError` when the monitor socket fails.
    public func drain(ours: Set<UInt8>) throws(TransportError) -> [InstanceTakeover] {
        var found: [InstanceTakeover] = []
        while case let .packet(packet) = try transport.receive(timeout: .zero) {
            let message: MonitorMessage
            do {
                message = try MonitorMessage(packet: packet)
            } catch {
                if let report = ignored.count(.malformedEvent, detail: "monitor channel: \(error)") { reportUnsolicited?(report) }
                continue
            }
            if let takeover = take(message, ours: ours) { found.append(takeover) }
        }
        return found
    }

    /// One monitor message: a takeover when it completes another program's write to one of ours.
    func take(_ message: MonitorMessage, ours: Set<UInt8>) -> InstanceTakeover? {
        switch message {
        case let .opened(cookie, _, name):
            names[cookie] = name
        case let .closed(cookie):
            names[cookie] = nil
            writes[cookie] = nil
        case let .command(cookie, commandIndex, opcode, parameters):
            if cookie == ownCookie { return nil }
            if ownCookie == nil, process.isEmpty || names[cookie].map({ $0 == process }) ?? true,
               unmatched.contains(where: {
                   $0.code == opcode.rawValue && $0.index == commandIndex && $0.parameters == parameters }) {
                ownCookie = cookie
                unmatched = []
                return nil
            }
            // Until our socket is known, nothing is judged: our own write must never look foreign.
            guard ownCookie != nil, commandIndex == index, opcode.writesAdvertisingInstance, let instance = parameters.first,
                  ours.contains(instance) else { return nil }
            writes[cookie, default: []].append((opcode, instance))
        case let .event(cookie, eventIndex, .commandComplete(opcode, status, _)):
            guard eventIndex == index, cookie != ownCookie, var pending = writes[cookie],
                  let position = pending.firstIndex(where: { $0.opcode == opcode }) else { return nil }
            let write = pending.remove(at: position)
            writes[cookie] = pending.isEmpty ? nil : pending
            guard status.isSuccess, ours.contains(write.instance) else { return nil }
            return InstanceTakeover(instance: write.instance, process: names[cookie] ?? "another program")
        case .event, .other:
            break
        }
        return nil
    }

    public func close() { transport.close() }
}

/// This process's name as the kernel keeps it (`/proc/self/comm`, at most 15 characters),
/// which the monitor channel reports for each socket.
enum ProcessName {
    static var current: String {
        guard let text = try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8) else { return "" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
