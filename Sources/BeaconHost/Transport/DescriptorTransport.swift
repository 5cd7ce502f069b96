// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// How a descriptor's reads become packets, and packets become bytes to write.
package protocol PacketFraming {
    associatedtype Packet: Hashable & Sendable
    init()
    /// The most one read may return.
    static var readSize: Int { get }
    /// Adds what one read returned.
    mutating func append(_ bytes: ArraySlice<UInt8>)
    /// The next complete packet, or nil when more bytes are needed.
    /// - Throws: `CodecError` when the bytes cannot be framed (the link is then unusable).
    mutating func next() throws(CodecError) -> Packet?
    /// What to write for `packet`.
    static func bytes(of packet: Packet) -> [UInt8]
    /// Whether one write is one packet (a packet socket), rather than bytes of a stream.
    static var writesWholePackets: Bool { get }
}

/// H4 over a byte stream (TCP, a UART) or a kernel HCI socket (one packet per read, type byte
/// first): reads are reassembled by `H4StreamDecoder`, so packets split across reads are whole again.
package struct H4Framing: PacketFraming {
    private var decoder = H4StreamDecoder()
    public init() {}
    public static var readSize: Int { 4096 }
    public mutating func append(_ bytes: ArraySlice<UInt8>) { decoder.append(bytes) }
    public mutating func next() throws(CodecError) -> H4Packet? { try decoder.next() }
    public static func bytes(of packet: H4Packet) -> [UInt8] { packet.bytes }
    /// A kernel HCI socket takes packets whole too, but a full write is the same call there.
    public static var writesWholePackets: Bool { false }
}

/// The kernel's management and monitor sockets: one whole packet per read and per write.
package struct MgmtFraming: PacketFraming {
    private var pending: ArraySlice<UInt8>?
    public init() {}
    public static var readSize: Int { 65_536 + MgmtPacket.headerLength }
    public mutating func append(_ bytes: ArraySlice<UInt8>) { pending = bytes }
    public mutating func next() throws(CodecError) -> MgmtPacket? {
        guard let bytes = pending else { return nil }
        pending = nil
        return try MgmtPacket(parsing: bytes)
    }
    public static func bytes(of packet: MgmtPacket) -> [UInt8] { packet.bytes }
    public static var writesWholePackets: Bool { true }
}

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
