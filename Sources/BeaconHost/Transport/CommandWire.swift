// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One protocol's rules for the command engine: how a packet from the transport becomes an
/// event, whether a command may go now, and what an event that answers nothing waited for
/// means. HCI (`HCIWire`: command credits, Hardware Error, a kernel socket shared with other
/// programs) and the kernel's management interface (`MgmtWire`: events per adapter) are the two.
package protocol CommandWire {
    associatedtype Packet: Hashable & Sendable
    associatedtype Event

    /// What a packet from the transport is. Takes the credits an answer grants.
    mutating func classify(_ packet: Packet) -> Inbound<Event>
    /// Whether a command may be sent now (HCI: a command credit is left).
    var maySend: Bool { get }
    /// Takes note of a command going out (HCI: it uses a credit).
    mutating func sending(_ packet: Packet)
    /// Whether `event` is an answer or a fault (not an event for `nextEvent`'s caller).
    func isAnswerOrFault(_ event: Event) -> Bool
    /// An event that answers no command waited for.
    /// - Throws: `HostError` for a fault that ends what waits (HCI: a Hardware Error).
    mutating func passOver(_ event: Event) throws(HostError) -> PassedOver
    /// The event named in messages (what a flood dropped).
    func describe(_ event: Event) -> String
}
