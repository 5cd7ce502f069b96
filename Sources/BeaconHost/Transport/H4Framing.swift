// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

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
