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

/// Advertising data that holds no beacon, with the sender's details when a report gave them:
/// what `decode` describes structure by structure (`ADField`).
public struct AdvertisementSighting: Hashable, Sendable {
    public var data: AdvertisingData
    public var address: BluetoothAddress?
    public var addressType: AddressType?
    /// Received signal strength in dBm, when reported.
    public var rssi: Int8?

    public init(data: AdvertisingData, address: BluetoothAddress? = nil, addressType: AddressType? = nil, rssi: Int8? = nil) {
        self.data = data
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
    }
}

/// What a packet held, for a caller that took its beacons one at a time.
public struct PacketSummary: Hashable, Sendable {
    public var kind: PacketKind
    public var beaconCount: Int
    /// Advertising data without a beacon handed to the caller (`decode`'s `others`).
    public var otherCount = 0
    /// Offset of the first advertising data in the input, where "no beacon here" points.
    public var advertisingDataOffset: Int

    /// Throws unless at least one beacon was found (or, where the caller collected it,
    /// advertising data without one: `otherCount`).
    /// - Throws: `CodecError` at the start of the advertising data that held none.
    public func requireBeacons() throws(CodecError) {
        guard beaconCount == 0 && otherCount == 0 else { return }
        throw CodecError(structure: kind.rawValue, offset: advertisingDataOffset, reason: .unrecognized(
            expected: "a beacon (iBeacon, AltBeacon or Eddystone)"))
    }
}

/// The beacons found in one packet, and what kind of packet it was.
public struct DecodedPacket: Hashable, Sendable {
    public var kind: PacketKind
    public var sightings: [BeaconSighting]
    /// Offset of the first advertising data in the input, where "no beacon here" points.
    public var advertisingDataOffset: Int

    /// Throws unless at least one beacon was found (or, where the caller collected it,
    /// advertising data without one: `otherCount`).
    /// - Throws: `CodecError` at the start of the advertising data that held none.
    public func requireBeacons() throws(CodecError) {
        try PacketSummary(kind: kind, beaconCount: sightings.count, advertisingDataOffset: advertisingDataOffset)
            .requireBeacons()
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
        var sightings: [BeaconSighting] = []
        let summary = try decode(bytes[...]) { sightings.append($0) }
        return DecodedPacket(kind: summary.kind, sightings: sightings, advertisingDataOffset: summary.advertisingDataOffset)
    }

    /// Detects the kind of packet as `decode(_:)` does and calls `body` with each beacon as it
    /// is found, collecting nothing: for a packet of the usual shapes this allocates nothing.
    /// - Throws: `CodecError` with the offset in `bytes` of the first byte that does not fit;
    ///   `body` may have been called for beacons before that point.
    public static func decode(_ bytes: ArraySlice<UInt8>,
                              each body: (BeaconSighting) -> Void) throws(CodecError) -> PacketSummary {
        try detect(bytes, each: body, others: nil)
    }

    /// Decodes as `decode(_:each:)` does, and calls `others` with each advertising data that
    /// holds no beacon (counted in `PacketSummary.otherCount`); with `always`, with every
    /// advertising data, after its beacons (counted only where it holds none).
    public static func decode(_ bytes: ArraySlice<UInt8>, each body: (BeaconSighting) -> Void, always: Bool = false,
                              others: (AdvertisementSighting) -> Void) throws(CodecError) -> PacketSummary {
        // Called only while this runs: the optional the steps below share does not escape.
        try withoutActuallyEscaping(others) { (others) throws(CodecError) in
            try detect(bytes, each: body, others: Others(call: others, always: always))
        }
    }

    private static func detect(_ bytes: ArraySlice<UInt8>, each body: (BeaconSighting) -> Void,
                               others: Others?) throws(CodecError) -> PacketSummary {
        let s = bytes.startIndex
        let count = bytes.count
        if count >= 3, bytes[s] == H4PacketType.event.rawValue, Int(bytes[s + 2]) == count - 3 {
            return try decodeEvent(bytes.dropFirst(), kind: .h4Event, body, others)
        }
        if count >= 4, bytes[s] == H4PacketType.command.rawValue, Int(bytes[s + 3]) == count - 4 {
            return try decodeCommand(bytes.dropFirst(), kind: .h4Command, body, others)
        }
        if count >= 2, Int(bytes[s + 1]) == count - 2, knownEvents.contains(HCIEventCode(bytes[s])) {
            return try decodeEvent(bytes, kind: .hciEvent, body, others)
        }
        if count >= 3, Int(bytes[s + 2]) == count - 3,
           dataCommands.contains(HCIOpcode(UInt16(bytes[s]) | UInt16(bytes[s + 1]) << 8)) {
            return try decodeCommand(bytes, kind: .hciCommand, body, others)
        }
        if count == IBeacon.manufacturerDataLength || count == AltBeacon.manufacturerDataLength,
           let beacon = try Beacon.beacon(inManufacturerData: bytes) {
            body(BeaconSighting(beacon: beacon))
            return PacketSummary(kind: .manufacturerData, beaconCount: 1, advertisingDataOffset: s)
        }
        var summary = PacketSummary(kind: .advertisingData, beaconCount: 0, advertisingDataOffset: s)
        do {
            try sightings(inAdvertisingData: bytes, summary: &summary, body, others)
        } catch {
            // Not advertising data: manufacturer data of a beacon, cut short, is named as that.
            throw cutShortManufacturerData(bytes) ?? error
        }
        return summary
    }

    /// iBeacon manufacturer data (Apple's company ID, type 02 15) shorter than its 25 bytes,
    /// as the error that says so; nil for anything else.
    static func cutShortManufacturerData(_ bytes: ArraySlice<UInt8>) -> CodecError? {
        let s = bytes.startIndex
        guard bytes.count >= 3, bytes.count < IBeacon.manufacturerDataLength, bytes[s] == 0x4C, bytes[s + 1] == 0x00,
              bytes[s + 2] == IBeacon.typeByte else { return nil }
        return CodecError(structure: "iBeacon manufacturer data", offset: 0, reason: .unexpectedValue(
            field: "length", expected: "\(IBeacon.manufacturerDataLength) bytes (4C 00 02 15, the UUID, major, minor, measured power)",
            found: "\(bytes.count) bytes: Apple's company ID and the iBeacon type, cut short (not advertising data)"))
    }

    /// Where advertising data without a beacon goes (with `always`, every advertising data).
    private struct Others {
        let call: (AdvertisementSighting) -> Void
        var always = false
    }

    static let knownEvents: Set<HCIEventCode> = [.commandComplete, .commandStatus, .hardwareError, .leMeta]
    /// The commands that set advertising data or a scan response (legacy and extended).
    public static let dataCommands: Set<HCIOpcode> = [.leSetAdvertisingData, .leSetScanResponseData,
                                               .leSetExtendedAdvertisingData]

    private static func decodeEvent(_ bytes: ArraySlice<UInt8>, kind: PacketKind, _ body: (BeaconSighting) -> Void,
                                    _ others: Others?) throws(CodecError) -> PacketSummary {
        let (code, parameters) = try HCIEvent.split(bytes)
        let subevent = parameters.first
        guard code == .leMeta, subevent == LEMetaEvent.advertisingReportCode
                || subevent == LEMetaEvent.extendedAdvertisingReportCode else {
            _ = try HCIEvent(parsing: bytes)  // checked like any other event; it carries no beacons
            return PacketSummary(kind: kind, beaconCount: 0, advertisingDataOffset: bytes.startIndex)
        }
        var summary = PacketSummary(kind: kind, beaconCount: 0, advertisingDataOffset: bytes.startIndex)
        if subevent == LEMetaEvent.advertisingReportCode {
            var reports = try ReportReader<LEAdvertisingReport>(parameters.dropFirst(), structure: "LE Advertising Report")
            try forEachSighting(in: &reports, summary: &summary, body, others)
        } else {
            var reports = try ReportReader<LEExtendedAdvertisingReport>(parameters.dropFirst(),
                                                                        structure: "LE Extended Advertising Report")
            try forEachSighting(in: &reports, summary: &summary, body, others)
        }
        return summary
    }

    private static func forEachSighting<R>(in reports: inout ReportReader<R>, summary: inout PacketSummary,
                                           _ body: (BeaconSighting) -> Void,
                                           _ others: Others?) throws(CodecError) {
        var first = true
        while let report = try reports.next() {
            if first { summary.advertisingDataOffset = report.data.startIndex }
            first = false
            try sightings(inAdvertisingData: report.data, summary: &summary, address: report.address,
                          addressType: report.addressType, rssi: report.rssi, reportedTxPower: report.reportedTxPower,
                          body, others)
        }
    }

    /// The beacons in one advertising data, or, where it holds none and `others` is given,
    /// the advertising data itself; counted in `summary`.
    private static func sightings(inAdvertisingData data: ArraySlice<UInt8>, summary: inout PacketSummary,
                                  address: BluetoothAddress? = nil, addressType: AddressType? = nil, rssi: Int8? = nil,
                                  reportedTxPower: Int8? = nil, _ body: (BeaconSighting) -> Void,
                                  _ others: Others?) throws(CodecError) {
        let found = try forEachSighting(inAdvertisingData: data, address: address, addressType: addressType, rssi: rssi,
                                        reportedTxPower: reportedTxPower, body)
        summary.beaconCount += found
        guard let others, found == 0 || others.always else { return }
        let parsed = try AdvertisingData(parsing: data)
        // Data that is all padding says nothing, unless a report's sender and RSSI come with it.
        guard !parsed.structures.isEmpty || address != nil else { return }
        others.call(AdvertisementSighting(data: parsed, address: address, addressType: addressType, rssi: available(rssi)))
        if found == 0 { summary.otherCount += 1 }
    }

    private static func decodeCommand(_ bytes: ArraySlice<UInt8>, kind: PacketKind, _ body: (BeaconSighting) -> Void,
                                      _ others: Others?) throws(CodecError) -> PacketSummary {
        var reader = ByteReader(bytes, structure: kind.rawValue)
        let opcode = HCIOpcode(try reader.uint16LE("opcode"))
        _ = try reader.uint8("parameter length")
        return try decodeParameters(reader.rest(), of: opcode, kind: kind, start: bytes.startIndex, body, others)
    }

    /// Decodes a command's parameters alone, as `decode(_:each:others:)` decodes the command,
    /// every offset counted from the first parameter byte (as a user counts the bytes of an
    /// `hcitool cmd` line).
    public static func decode(parameters: [UInt8], of opcode: HCIOpcode,
                              each body: (BeaconSighting) -> Void) throws(CodecError) -> PacketSummary {
        try decodeParameters(parameters[...], of: opcode, kind: .hciCommand, start: 0, body, nil)
    }

    /// As `decode(parameters:of:each:)`, calling `others` with advertising data that holds no beacon.
    public static func decode(parameters: [UInt8], of opcode: HCIOpcode, each body: (BeaconSighting) -> Void,
                              always: Bool = false, others: (AdvertisementSighting) -> Void) throws(CodecError) -> PacketSummary {
        try withoutActuallyEscaping(others) { (others) throws(CodecError) in
            try decodeParameters(parameters[...], of: opcode, kind: .hciCommand, start: 0, body,
                                 Others(call: others, always: always))
        }
    }

    private static func decodeParameters(_ parameters: ArraySlice<UInt8>, of opcode: HCIOpcode, kind: PacketKind,
                                         start: Int, _ body: (BeaconSighting) -> Void, _ others: Others?) throws(CodecError) -> PacketSummary {
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
            return PacketSummary(kind: kind, beaconCount: 0, advertisingDataOffset: start)
        }
        var summary = PacketSummary(kind: kind, beaconCount: 0, advertisingDataOffset: dataStart)
        try sightings(inAdvertisingData: parameters[dataStart..<(dataStart + dataLength)], summary: &summary, body, others)
        return summary
    }

    /// Calls `body` with every beacon in advertising data, with the sender's details when a
    /// report gave them, and returns how many there were.
    /// - Throws: `CodecError` as `Beacon.forEachBeacon(inAdvertisingData:_:)` does.
    @discardableResult
    public static func forEachSighting(inAdvertisingData data: ArraySlice<UInt8>, address: BluetoothAddress? = nil,
                                       addressType: AddressType? = nil, rssi: Int8? = nil,
                                       reportedTxPower: Int8? = nil,
                                       _ body: (BeaconSighting) -> Void) throws(CodecError) -> Int {
        let rssi = available(rssi)
        let reported = available(reportedTxPower)
        if let (beacon, advertised) = IBeacon.quickScan(data) {
            body(BeaconSighting(beacon: .iBeacon(beacon), address: address, addressType: addressType, rssi: rssi,
                                txPower: reported ?? advertised))
            return 1
        }
        // The first walk checks the whole data (nothing is reported from malformed data) and
        // finds the advertised TX power, which may come after the beacon.
        let advertised = try ADStructureReader.txPowerLevel(in: data)
        let txPower = reported ?? advertised
        var found = 0
        try Beacon.forEachBeacon(inAdvertisingData: data) { beacon in
            found += 1
            body(BeaconSighting(beacon: beacon, address: address, addressType: addressType, rssi: rssi, txPower: txPower))
        }
        return found
    }

    /// An RSSI or TX power as reported, nil for 127 ("not available").
    @inline(__always)
    private static func available(_ reported: Int8?) -> Int8? {
        reported.flatMap { $0 == LEAdvertisingReport.rssiNotAvailable ? nil : $0 }
    }
}
