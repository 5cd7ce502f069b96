// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What waiting for an HCI packet ended with.
package typealias ReceiveResult = Received<H4Packet>
/// What waiting for a management packet ended with.
package typealias MgmtReceiveResult = Received<MgmtPacket>

/// The one seam between the host logic and what it drives: send a packet, receive a packet
/// with a deadline. Generic in the packet: HCI packets to a controller (a kernel HCI socket,
/// an H4 byte stream over TCP or a UART) and management packets to the kernel (its control
/// and monitor sockets) go through the same descriptor transport, and a scripted fake
/// implements it for tests, so everything above is tested once.
package protocol PacketTransport<Packet>: AnyObject {
    associatedtype Packet: Hashable & Sendable

    /// A short description for messages: `hci0`, `tcp:127.0.0.1:6402`, `the management socket`.
    var name: String { get }

    /// Sends one packet.
    /// - Throws: `TransportError` when the other end cannot be reached.
    func send(_ packet: Packet) throws(TransportError)

    /// Waits at most `timeout` for the next packet (`.zero`: one that has arrived, without
    /// waiting; a loop that owns other descriptors waits on `pollDescriptor` beside them).
    /// - Throws: `TransportError` when the transport closed, failed, or lost its framing.
    func receive(timeout: Duration) throws(TransportError) -> Received<Packet>

    /// Releases the transport. Safe to call more than once.
    func close()

    /// The descriptor to poll beside others, where there is one: readable means `receive`
    /// has something (a kernel socket delivers one packet per read).
    var pollDescriptor: Int32? { get }
}

extension PacketTransport {
    public var pollDescriptor: Int32? { nil }
}

/// A transport to a controller: HCI packets in H4 framing.
package typealias HCITransport = PacketTransport<H4Packet>
/// A transport to the kernel's management interface.
package typealias MgmtTransport = PacketTransport<MgmtPacket>

extension WakeSet {
    /// A loop's one wait (`wait(until:)`): the readable descriptors, none at `deadline`.
    /// - Throws: `HostError.transport` naming `what` waited, where epoll fails.
    package func readable(until deadline: ContinuousClock.Instant, what: String) throws(HostError) -> Set<Int32> {
        do throws(SystemCallError) {
            return Set(try wait(until: deadline))
        } catch {
            throw .transport(TransportError(error), device: what)
        }
    }
}
