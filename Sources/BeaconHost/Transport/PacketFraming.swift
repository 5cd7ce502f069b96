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
