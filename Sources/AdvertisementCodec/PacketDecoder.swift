// SPDX-License-Identifier: GPL-2.0-or-later

/// What a packet given as bytes turned out to be.
public enum PacketKind: String, Hashable, Sendable, CustomStringConvertible {
    case advertisingData = "advertising data"
    case manufacturerData = "manufacturer data"
    case hciEvent = "HCI event"
    case h4Event = "H4 event packet"
    case hciCommand = "HCI command"
    case h4Command = "H4 command packet"

    public var description: String { rawValue }
}

/// The beacons found in one packet, and what kind of packet it was.
public struct DecodedPacket: Hashable, Sendable {
    public var kind: PacketKind
    public var sightings: [BeaconSighting]
    /// Offset of the first advertising data in the input, where "no beacon here" points.
    public var advertisingDataOffset: Int

    /// Throws unless at least one beacon was found.
    /// - Throws: `CodecError` at the start of the advertising data that held none.
    public func requireBeacons() throws(CodecError) {
        guard sightings.isEmpty else { return }
        throw CodecError(structure: kind.rawValue, offset: advertisingDataOffset, reason: .unrecognized(
            expected: "a beacon (iBeacon, AltBeacon or Eddystone)"))
    }
}

/// Finds beacons in bytes of any of the shapes a user pastes: raw advertising data,
/// manufacturer data alone, an HCI event or H4 event packet carrying advertising reports, or
/// an HCI or H4 command that sets advertising data.
public enum PacketDecoder {
    /// Detects the kind of packet and decodes every beacon in it.
    ///
    /// Detection, in order: an H4 event (`04 code len`, length matching) or command
    /// (`01 opcode len`); an HCI event (known code, length matching); an HCI command setting
    /// advertising or scan response data; iBeacon or AltBeacon manufacturer data alone;
    /// otherwise advertising data.
    /// - Throws: `CodecError` with the offset in `bytes` of the first byte that does not fit.
    public static func decode(_ bytes: [UInt8]) throws(CodecError) -> DecodedPacket {
        let count = bytes.count
        if count >= 3, bytes[0] == H4PacketType.event.rawValue, Int(bytes[2]) == count - 3 {
            return try decodeEvent(bytes[1...], kind: .h4Event)
        }
        if count >= 4, bytes[0] == H4PacketType.command.rawValue, Int(bytes[3]) == count - 4 {
            return try decodeCommand(bytes[1...], kind: .h4Command)
        }
        if count >= 2, Int(bytes[1]) == count - 2, knownEvents.contains(HCIEventCode(bytes[0])) {
            return try decodeEvent(bytes[...], kind: .hciEvent)
        }
        if count >= 3, Int(bytes[2]) == count - 3,
           dataCommands.contains(HCIOpcode(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)) {
            return try decodeCommand(bytes[...], kind: .hciCommand)
        }
        if count == IBeacon.manufacturerDataLength || count == AltBeacon.manufacturerDataLength,
           let beacon = try Beacon.beacon(inManufacturerData: bytes[...]) {
            return DecodedPacket(kind: .manufacturerData, sightings: [BeaconSighting(beacon: beacon)],
                                 advertisingDataOffset: 0)
        }
        let data = try AdvertisingData(parsing: bytes[...])
        return DecodedPacket(kind: .advertisingData, sightings: try sightings(in: data), advertisingDataOffset: 0)
    }

    static let knownEvents: Set<HCIEventCode> = [.commandComplete, .commandStatus, .hardwareError, .leMeta]
    static let dataCommands: Set<HCIOpcode> = [.leSetAdvertisingData, .leSetScanResponseData,
                                               .leSetExtendedAdvertisingData]

    private static func decodeEvent(_ bytes: ArraySlice<UInt8>, kind: PacketKind) throws(CodecError) -> DecodedPacket {
        let event = try HCIEvent(parsing: bytes)
        // Legacy and extended reports in one shape: sender, type, RSSI, TX power, data.
        let reports: [(BluetoothAddress, AddressType, Int8, Int8?, ArraySlice<UInt8>)]
        switch event {
        case let .leMeta(.advertisingReport(legacy)):
            reports = legacy.map { ($0.address, $0.addressType, $0.rssi, nil, $0.data) }
        case let .leMeta(.extendedAdvertisingReport(extended)):
            reports = extended.map { ($0.address, $0.addressType, $0.rssi, $0.txPower, $0.data) }
        default:
            reports = []
        }
        var found: [BeaconSighting] = []
        for (address, addressType, rssi, txPower, data) in reports {
            found += try sightings(in: try AdvertisingData(parsing: data), address: address, addressType: addressType,
                                   rssi: rssi, reportedTxPower: txPower)
        }
        let firstData = reports.first?.4.startIndex
        return DecodedPacket(kind: kind, sightings: found, advertisingDataOffset: firstData ?? bytes.startIndex)
    }

    private static func decodeCommand(_ bytes: ArraySlice<UInt8>, kind: PacketKind) throws(CodecError) -> DecodedPacket {
        var reader = ByteReader(bytes, structure: kind.rawValue)
        let opcode = HCIOpcode(try reader.uint16LE("opcode"))
        _ = try reader.uint8("parameter length")
        let parameters = reader.rest()
        // The data sits at a fixed place in each command; parse the command for its checks,
        // then the data from the input itself so offsets stay those of the input.
        let dataStart: Int
        let dataLength: Int
        switch opcode {
        case .leSetAdvertisingData:
            dataLength = try LESetAdvertisingData(parameters: parameters).data.count
            dataStart = parameters.startIndex + 1
        case .leSetScanResponseData:
            dataLength = try LESetScanResponseData(parameters: parameters).data.count
            dataStart = parameters.startIndex + 1
        case .leSetExtendedAdvertisingData:
            dataLength = try LESetExtendedAdvertisingData(parameters: parameters).data.count
            dataStart = parameters.startIndex + 4
        default:
            return DecodedPacket(kind: kind, sightings: [], advertisingDataOffset: bytes.startIndex)
        }
        let data = try AdvertisingData(parsing: bytes[dataStart..<(dataStart + dataLength)])
        return DecodedPacket(kind: kind, sightings: try sightings(in: data), advertisingDataOffset: dataStart)
    }

    /// Every beacon in advertising data, with the sender's details when a report gave them.
    public static func sightings(in data: AdvertisingData, address: BluetoothAddress? = nil,
                                 addressType: AddressType? = nil, rssi: Int8? = nil,
                                 reportedTxPower: Int8? = nil) throws(CodecError) -> [BeaconSighting] {
        let notAvailable = LEAdvertisingReport.rssiNotAvailable
        let txPower = reportedTxPower.flatMap { $0 == notAvailable ? nil : $0 } ?? data.txPowerLevel
        return try Beacon.beacons(in: data).map { beacon in
            BeaconSighting(beacon: beacon, address: address, addressType: addressType,
                           rssi: rssi.flatMap { $0 == notAvailable ? nil : $0 }, txPower: txPower)
        }
    }
}
