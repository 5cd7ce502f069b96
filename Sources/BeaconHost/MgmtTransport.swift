// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What waiting for a management packet ended with.
public enum MgmtReceiveResult: Hashable, Sendable {
    case packet(MgmtPacket)
    case timedOut
    /// The interrupt descriptor became readable (a signal arrived).
    case interrupted
}

/// The seam between the host logic and the kernel's management interface: send a packet,
/// receive a packet with a deadline. The kernel's control socket and a scripted kernel
/// implement it.
public protocol MgmtTransport: AnyObject {
    /// Sends one command packet.
    /// - Throws: `TransportError` when the socket fails.
    func send(_ packet: MgmtPacket) throws(TransportError)
    /// Waits at most `timeout` for the next packet.
    /// - Throws: `TransportError` when the socket fails or delivers something that does not parse.
    func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> MgmtReceiveResult
    /// Releases the transport. Safe to call more than once.
    func close()
    /// The descriptor to poll beside others, where there is one.
    var pollDescriptor: Int32? { get }
}

extension MgmtTransport {
    public var pollDescriptor: Int32? { nil }
}

/// The kernel's management socket (`HCI_CHANNEL_CONTROL`): one packet per read and write.
public final class MgmtSocket: MgmtTransport {
    public let name: String
    private var descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536 + MgmtPacket.headerLength)

    /// Takes ownership of `descriptor`, a socket bound to the control (or monitor) channel.
    init(descriptor: Int32, name: String = "the management socket") {
        self.descriptor = descriptor
        self.name = name
    }

    deinit { close() }

    public var pollDescriptor: Int32? { descriptor >= 0 ? descriptor : nil }

    public func send(_ packet: MgmtPacket) throws(TransportError) {
        guard descriptor >= 0 else { throw .closed(transport: name) }
        let bytes = packet.bytes
        while true {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written >= 0 { return }
            if errno == EINTR { continue }
            throw .system(call: "write(\(name))", errno: errno)
        }
    }

    public func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> MgmtReceiveResult {
        let deadline = ContinuousClock.now + timeout
        while true {
            guard descriptor >= 0 else { throw .closed(transport: name) }
            switch try PollProbe.wait(for: descriptor, interrupt: interrupt, until: deadline, name: name) {
            case .timedOut: return .timedOut
            case .interrupted: return .interrupted
            case .readable: break
            }
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system(call: "read(\(name))", errno: errno)
            }
            if count == 0 { throw .closed(transport: name) }
            do {
                return .packet(try MgmtPacket(parsing: buffer[0..<count]))
            } catch {
                throw .framing(error)
            }
        }
    }

    public func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }
}
