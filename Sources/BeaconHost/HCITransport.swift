// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What waiting for a packet ended with.
public enum ReceiveResult: Hashable, Sendable {
    case packet(H4Packet)
    case timedOut
    /// The interrupt descriptor became readable (a signal arrived).
    case interrupted
}

/// The one seam between the host logic and a controller: send a packet, receive a packet
/// with a deadline. A kernel HCI socket, an H4 byte stream (TCP, UART) and a scripted fake
/// implement it, so everything above is tested once.
public protocol HCITransport: AnyObject {
    /// A short description for messages: `hci0`, `tcp:127.0.0.1:6402`.
    var name: String { get }

    /// Sends one packet.
    /// - Throws: `TransportError` when the controller cannot be reached.
    func send(_ packet: H4Packet) throws(TransportError)

    /// Waits at most `timeout` for the next packet.
    /// - Parameter interrupt: a descriptor whose readability ends the wait early (a signal pipe).
    /// - Throws: `TransportError` when the transport closed or failed.
    func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> ReceiveResult

    /// Releases the transport. Safe to call more than once.
    func close()

    /// The descriptor to poll beside others, where there is one: readable means `receive`
    /// has something (a kernel socket delivers one packet per read).
    var pollDescriptor: Int32? { get }
}

extension HCITransport {
    public var pollDescriptor: Int32? { nil }
}

/// Why a transport failed.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The other end closed the connection (a virtual controller stopped, a cable pulled).
    case closed(transport: String)
    /// A system call failed: its name and errno.
    case system(call: String, errno: Int32)
    /// The byte stream carried something that is not H4 framing.
    case framing(CodecError)

    public var description: String {
        switch self {
        case let .closed(transport): "\(transport) closed the connection"
        case let .system(call, code): "\(call): \(SystemError.message(code)) (errno \(code))"
        case let .framing(error): "lost H4 framing: \(error)"
        }
    }
}
