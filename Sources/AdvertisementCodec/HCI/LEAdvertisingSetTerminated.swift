// SPDX-License-Identifier: GPL-2.0-or-later

/// LE Advertising Set Terminated subevent (0x12).
public struct LEAdvertisingSetTerminated: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt8
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    public init(status: HCIStatus, handle: UInt8, connectionHandle: UInt16, numCompletedExtendedAdvertisingEvents: UInt8) {
        self.status = status
        self.handle = handle
        self.connectionHandle = connectionHandle
        self.numCompletedExtendedAdvertisingEvents = numCompletedExtendedAdvertisingEvents
    }

    init(reader: inout ByteReader) throws(CodecError) {
        status = HCIStatus(try reader.uint8("status"))
        handle = try reader.uint8("advertising handle")
        connectionHandle = try reader.uint16LE("connection handle")
        numCompletedExtendedAdvertisingEvents = try reader.uint8("num completed extended advertising events")
        try reader.expectEnd()
    }

    func encode(into out: inout [UInt8]) {
        out.append(status.rawValue)
        out.append(handle)
        out.appendLE(connectionHandle)
        out.append(numCompletedExtendedAdvertisingEvents)
    }
}
