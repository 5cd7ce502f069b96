// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

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
