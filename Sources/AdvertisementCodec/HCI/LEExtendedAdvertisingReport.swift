// SPDX-License-Identifier: GPL-2.0-or-later

/// One report of an LE Extended Advertising Report subevent (0x0D).
///
/// ```
/// tt tt         event type (bit 4: legacy PDU; bits 5-6: data status)
/// aa            address type (0xFF: anonymous)
/// xx * 6        address
/// pp ss         primary PHY, secondary PHY
/// ii            advertising SID
/// tx            TX power, Int8 dBm; 127 = not available
/// rr            RSSI, Int8 dBm; 127 = not available
/// vv vv         periodic advertising interval
/// dt            direct address type
/// da * 6        direct address
/// ll            data length
/// dd * ll       advertising data
/// ```
public struct LEExtendedAdvertisingReport: Hashable, Sendable {
    public var eventType: UInt16
    public var addressType: AddressType
    public var address: BluetoothAddress
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
    public var advertisingSID: UInt8
    public var txPower: Int8
    public var rssi: Int8
    public var periodicAdvertisingInterval: UInt16
    public var directAddressType: AddressType
    public var directAddress: BluetoothAddress
    public var data: ArraySlice<UInt8>

    public init(eventType: UInt16, addressType: AddressType, address: BluetoothAddress, primaryPHY: UInt8 = 1,
                secondaryPHY: UInt8 = 0, advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8,
                periodicAdvertisingInterval: UInt16 = 0, directAddressType: AddressType = .publicDevice,
                directAddress: BluetoothAddress = BluetoothAddress(0), data: some Sequence<UInt8>) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.txPower = txPower
        self.rssi = rssi
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddressType = directAddressType
        self.directAddress = directAddress
        self.data = ArraySlice(data)
    }

    /// Bit 4 of the event type: the report came from a legacy PDU.
    public var isLegacy: Bool { eventType & 0x0010 != 0 }
    /// The event type bit of a scan response (Core Vol 4 Part E 7.7.65.13, bit 3).
    public static let scanResponseBit: UInt16 = 0x0008
    /// Bits 5-6: 0 complete, 1 incomplete (more to come), 2 incomplete and truncated.
    public var dataStatus: UInt8 { UInt8((eventType >> 5) & 0x03) }

    init(reader: inout ByteReader) throws(CodecError) {
        eventType = try reader.uint16LE("event type")
        addressType = AddressType(rawValue: try reader.uint8("address type"))
        address = try reader.address("address")
        primaryPHY = try reader.uint8("primary PHY")
        secondaryPHY = try reader.uint8("secondary PHY")
        advertisingSID = try reader.uint8("advertising SID")
        txPower = try reader.int8("TX power")
        rssi = try reader.int8("RSSI")
        periodicAdvertisingInterval = try reader.uint16LE("periodic advertising interval")
        directAddressType = AddressType(rawValue: try reader.uint8("direct address type"))
        directAddress = try reader.address("direct address")
        let length = try reader.uint8("data length")
        data = try reader.bytes(Int(length), "advertising data")
    }

    func encode(into out: inout [UInt8]) {
        out.appendLE(eventType)
        out.append(addressType.rawValue)
        out.append(contentsOf: address.littleEndianBytes)
        out.append(primaryPHY)
        out.append(secondaryPHY)
        out.append(advertisingSID)
        out.append(UInt8(bitPattern: txPower))
        out.append(UInt8(bitPattern: rssi))
        out.appendLE(periodicAdvertisingInterval)
        out.append(directAddressType.rawValue)
        out.append(contentsOf: directAddress.littleEndianBytes)
        out.append(UInt8(truncatingIfNeeded: data.count))
        out.append(contentsOf: data)
    }
}
