// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The management interface's rules for the command engine: one socket carries every
/// adapter's events, so only this adapter's are kept; the kernel answers a command only to
/// the socket that sent it, so every answer is this engine's (a global command's names no
/// adapter). An event that does not parse is counted and reported, never thrown (a layout the
/// kernel extends must not stop a beacon; codes this host does not know parse, as `.other`).
/// No command credits: the kernel queues.
package struct MgmtWire: CommandWire {
    /// The adapter.
    public let index: UInt16

    public var maySend: Bool { true }

    public func sending(_ packet: MgmtPacket) {}

    /// Answers come only to the socket that sent the command, whatever adapter they name (a
    /// global command's names none); other events are kept only when about this adapter.
    public func classify(_ packet: MgmtPacket) -> Inbound<MgmtEvent> {
        let event: MgmtEvent
        do {
            event = try MgmtEvent(packet: packet)
        } catch {
            return .unsolicited(.malformedEvent, detail: "\(error)")  // the error names the event
        }
        return packet.index == index || isAnswerOrFault(event) ? .event(event) : .skipped
    }

    public func isAnswerOrFault(_ event: MgmtEvent) -> Bool {
        switch event {
        case .commandComplete, .commandStatus: true
        default: false
        }
    }

    /// An answer to a command not waited for (one that timed out before) is dropped.
    public func passOver(_ event: MgmtEvent) throws(HostError) -> PassedOver {
        PassedOver(keep: !isAnswerOrFault(event))
    }

    public func describe(_ event: MgmtEvent) -> String { "\(event)" }
}
