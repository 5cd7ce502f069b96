// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// A transport over a file descriptor it owns, framed by `Framing`: H4 to a controller
/// (`HCIDescriptorTransport`), management packets to the kernel (`MgmtSocket`). Sending and
/// receiving, deadlines and what a closed link looks like are written once here.
package final class DescriptorTransport<Framing: PacketFraming>: PacketTransport {
    public typealias Packet = Framing.Packet
    public let name: String
    /// nil once closed.
    private var descriptor: Descriptor?
    private var framing = Framing()
    private let afterRead: (Int32) -> Void
    private let closeDescriptor: (Int32) -> Void
    private var buffer = [UInt8](repeating: 0, count: Framing.readSize)

    /// Takes ownership of `descriptor`.
    /// - Parameters:
    ///   - afterRead: called after each read (TCP re-arms TCP_QUICKACK here).
    ///   - closeDescriptor: how to release it (`close` unless the owner says otherwise).
    init(name: String, descriptor: Int32, afterRead: @escaping (Int32) -> Void = { _ in },
         closeDescriptor: @escaping (Int32) -> Void = { Descriptor($0).close() }) {
        self.name = name
        self.descriptor = Descriptor(descriptor)
        self.afterRead = afterRead
        self.closeDescriptor = closeDescriptor
    }

    deinit { close() }

    public var pollDescriptor: Int32? { descriptor?.rawValue }

    public func send(_ packet: Packet) throws(TransportError) {
        guard let descriptor else { throw .closed(transport: name) }
        do {
            if Framing.writesWholePackets {
                try descriptor.writePacket(Framing.bytes(of: packet), name: "write(\(name))")
            } else {
                try descriptor.writeAll(Framing.bytes(of: packet), name: "write(\(name))")
            }
        } catch {
            throw error.isDisconnect ? .closed(transport: name) : TransportError(error)
        }
    }

    public func receive(timeout: Duration) throws(TransportError) -> Received<Packet> {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                if let packet = try framing.next() { return .packet(packet) }
            } catch {
                throw .framing(error)
            }
            guard let descriptor else { throw .closed(transport: name) }
            let ready: [Bool]
            do {
                ready = try Poll.waitAny([descriptor], until: deadline)
            } catch {
                throw .system(call: "poll(\(name))", errno: error.errno)
            }
            guard ready[0] else { return .timedOut }
            let count: Int
            do {
                switch try descriptor.read(into: &buffer, name: "read(\(name))") {
                case .wouldBlock: continue
                case let .done(read): count = read
                }
            } catch {
                throw error.isDisconnect ? .closed(transport: name) : TransportError(error)
            }
            if count == 0 { throw .closed(transport: name) }
            afterRead(descriptor.rawValue)
            framing.append(buffer[0..<count])
        }
    }

    public func close() {
        guard let descriptor else { return }
        closeDescriptor(descriptor.rawValue)
        self.descriptor = nil
    }
}

/// H4 packets over a descriptor: a TCP socket, a serial port, a kernel HCI socket.
package typealias HCIDescriptorTransport = DescriptorTransport<H4Framing>
/// The kernel's management socket (`HCI_CHANNEL_CONTROL`) or its monitor (`HCI_CHANNEL_MONITOR`).
package typealias MgmtSocket = DescriptorTransport<MgmtFraming>

extension DescriptorTransport where Framing == MgmtFraming {
    /// Takes ownership of `descriptor`, a socket bound to the control (or monitor) channel.
    convenience init(descriptor: Int32, name: String = "the management socket") {
        self.init(name: name, descriptor: descriptor)
    }
}
