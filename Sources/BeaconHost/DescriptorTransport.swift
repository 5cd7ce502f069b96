// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A transport over a file descriptor that carries H4 packets: a TCP socket, a serial port,
/// or a kernel HCI socket (which delivers one packet per read, type byte first). Reads are
/// reassembled by `H4StreamDecoder`, so packets split across reads are whole again.
public final class DescriptorTransport: HCITransport {
    public let name: String
    private var descriptor: Int32
    private var decoder = H4StreamDecoder()
    private let afterRead: (Int32) -> Void
    private let closeDescriptor: (Int32) -> Void
    private var buffer = [UInt8](repeating: 0, count: 4096)

    /// Takes ownership of `descriptor`.
    /// - Parameters:
    ///   - afterRead: called after each read (TCP re-arms TCP_QUICKACK here).
    ///   - closeDescriptor: how to release it (`close` unless the owner says otherwise).
    init(name: String, descriptor: Int32, afterRead: @escaping (Int32) -> Void = { _ in },
         closeDescriptor: @escaping (Int32) -> Void = { _ = Glibc.close($0) }) {
        self.name = name
        self.descriptor = descriptor
        self.afterRead = afterRead
        self.closeDescriptor = closeDescriptor
    }

    deinit { close() }

    public var pollDescriptor: Int32? { descriptor >= 0 ? descriptor : nil }

    public func send(_ packet: H4Packet) throws(TransportError) {
        guard descriptor >= 0 else { throw .closed(transport: name) }
        let bytes = packet.bytes
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE || code == ECONNRESET { throw .closed(transport: name) }
                throw .system(call: "write(\(name))", errno: code)
            }
            offset += written
        }
    }

    public func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> ReceiveResult {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                if let packet = try decoder.next() { return .packet(packet) }
            } catch {
                throw .framing(error)
            }
            guard descriptor >= 0 else { throw .closed(transport: name) }
            switch try PollProbe.wait(for: descriptor, interrupt: interrupt, until: deadline, name: name) {
            case .timedOut: return .timedOut
            case .interrupted: return .interrupted
            case .readable: break
            }
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == ECONNRESET { throw .closed(transport: name) }
                throw .system(call: "read(\(name))", errno: code)
            }
            if count == 0 { throw .closed(transport: name) }
            afterRead(descriptor)
            decoder.append(buffer[0..<count])
        }
    }

    public func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }
}
