// SPDX-License-Identifier: GPL-2.0-or-later

/// Any beacon payload this codec understands, or (to advertise, never decoded from the air)
/// any advertising data at all.
public enum Beacon: Hashable, Sendable {
    case iBeacon(IBeacon)
    case altBeacon(AltBeacon)
    case eddystone(EddystoneFrame)
    /// Advertising data given whole (`--ad`) or put together from building blocks
    /// (`AdvertisingDataBuilder`), with a scan response where there is one: advertised byte
    /// for byte. Decoding finds the beacons in it, never this case.
    case custom(CustomAdvertisement)
    /// A beacon of a format registered from outside the codec (`BeaconFormats.register`).
    case registered(RegisteredBeacon)

    /// Every beacon in advertising data, in the order of the structures that carry them.
    ///
    /// A structure counts as a beacon when it carries the format's signature (Apple's company ID
    /// and type 0x02, the AltBeacon code BE AC, service data for 0xFEAA). Other structures are
    /// ignored; a structure with a signature but a malformed body throws.
    /// - Throws: `CodecError` at the first byte of a beacon structure that does not fit its format.
    public static func beacons(in data: AdvertisingData) throws(CodecError) -> [Beacon] {
        var found: [Beacon] = []
        for structure in data.structures {
            if let beacon = try beacon(in: structure) { found.append(beacon) }
        }
        return found
    }

    /// Calls `body` with every beacon in advertising data, in order, without collecting them.
    /// - Throws: `CodecError` at the first structure that does not fit (advertising data or a
    ///   beacon's format), after `body` has seen the beacons before it.
    public static func forEachBeacon(inAdvertisingData bytes: ArraySlice<UInt8>,
                                     _ body: (Beacon) -> Void) throws(CodecError) {
        var structures = ADStructureReader(bytes)
        while let structure = try structures.next() {
            if let beacon = try beacon(in: structure) { body(beacon) }
        }
    }

    /// The beacon one AD structure carries, or nil when it carries none.
    /// - Throws: `CodecError` when the structure has a beacon's signature but not its layout.
    public static func beacon(in structure: ADStructure) throws(CodecError) -> Beacon? {
        if structure.type == .manufacturerSpecificData {
            return try beacon(inManufacturerData: structure.data)
        }
        if let (uuid, payload) = structure.serviceData16, uuid == EddystoneFrame.serviceUUID {
            return .eddystone(try EddystoneFrame(parsing: payload))
        }
        return try BeaconFormats.decode(structure)
    }

    /// The beacon in manufacturer specific data (company ID first), or nil when it carries none.
    /// - Throws: `CodecError` when the data has a beacon's signature but not its layout.
    public static func beacon(inManufacturerData data: ArraySlice<UInt8>) throws(CodecError) -> Beacon? {
        let s = data.startIndex
        if data.count >= 3, data[s] == 0x4C, data[s + 1] == 0x00, data[s + 2] == IBeacon.typeByte {
            return .iBeacon(try IBeacon(parsingManufacturerData: data))
        }
        if AltBeacon.hasBeaconCode(data) {
            return .altBeacon(try AltBeacon(parsingManufacturerData: data))
        }
        guard BeaconFormats.mayDecode else { return nil }
        return try BeaconFormats.decode(ADStructure(type: .manufacturerSpecificData, slice: data))
    }

    /// The advertising data a transmitter sends for this beacon.
    public var advertisingData: AdvertisingData {
        switch self {
        case let .iBeacon(beacon): beacon.advertisingData
        case let .altBeacon(beacon): beacon.advertisingData
        case let .eddystone(frame): frame.advertisingData
        case let .custom(custom): custom.data
        case let .registered(beacon): beacon.value.advertisingData
        }
    }

    /// Whether its data needs extended advertising PDUs (more than the 31 bytes a legacy PDU holds).
    public var needsExtendedPDU: Bool { advertisingData.bytes.count > AdvertisingData.legacyMaximumLength }

    /// What a scanner that asks (active scanning) gets besides; nil: nothing (the advertising
    /// need not be scannable for this beacon).
    public var scanResponseData: AdvertisingData? {
        if case let .custom(custom) = self { custom.scanResponse } else { nil }
    }

    /// The calibrated RSSI at 1 m, the figure ranging uses (Eddystone's 0 m figure less 41 dB,
    /// which can be below what an Int8 holds: -90 dBm at 0 m is -131 at 1 m, never clamped).
    public var measuredPower: Int? { format.measuredPowerAt1m }
}

/// Any advertising data to send, and the scan response that goes with it.
public struct CustomAdvertisement: Hashable, Sendable {
    public var data: AdvertisingData
    /// Sent to scanners that ask (advertising is then scannable); nil for none.
    public var scanResponse: AdvertisingData?

    public init(data: AdvertisingData, scanResponse: AdvertisingData? = nil) {
        self.data = data
        self.scanResponse = scanResponse
    }
}

extension CustomAdvertisement: BeaconFormat {
    public var formatName: StaticString { "custom" }
    public var displayName: StaticString { "Custom" }
    public var identity: String { "advertising data" }
    public var measuredPowerAt1m: Int? { nil }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("data", .hex(data.bytes))
        if let scanResponse { writer.field("scanResponse", .hex(scanResponse.bytes)) }
    }

    public var descriptionFields: [String: String] {
        var fields = ["ad": HexText.format(data.bytes)]
        if data.bytes.count > AdvertisingData.legacyMaximumLength { fields["extended-pdu"] = "true" }
        if let scanResponse { fields["scan-response"] = HexText.format(scanResponse.bytes) }
        return fields
    }
}
