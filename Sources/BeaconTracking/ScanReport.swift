// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One advertising report, legacy or extended, in one shape.
public struct ScanReport: Sendable, Hashable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// dBm; nil when the controller reports 127 ("not available").
    public var rssi: Int8?
    /// dBm from an extended report; nil when absent.
    public var txPower: Int8?
    public var data: [UInt8]
    /// Whether this is a scan response (an active scan's answer), not the advertising itself.
    public var isScanResponse: Bool
    /// The kind of PDU reported (connectable, scannable, legacy or extended); nil where the
    /// source does not say (another tool's text).
    public var kind: AdvertisingPDUKind?
    /// The PHYs of an extended report; nil for a legacy one (LE 1M) or where the source does not say.
    public var phys: ReportedPHYs?

    public init(address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8? = nil, data: [UInt8],
                isScanResponse: Bool = false, kind: AdvertisingPDUKind? = nil, phys: ReportedPHYs? = nil) {
        self.phys = phys
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
        self.isScanResponse = isScanResponse || kind?.contains(.scanResponse) == true
        self.kind = kind
    }

    /// A report as read from an event's bytes (`LEMetaEvent.advertisingReports(inEvent:into:)`).
    public init(_ fields: AdvertisingReportFields) {
        self.init(address: fields.address, addressType: fields.addressType, rssi: Self.available(fields.rssi),
                  txPower: fields.reportedTxPower.flatMap(Self.available), data: Array(fields.data),
                  kind: fields.kind, phys: fields.phys)
    }

    /// An RSSI or TX power as reported, nil for 127 ("not available").
    public static func available(_ reported: Int8) -> Int8? {
        reported == LEAdvertisingReport.rssiNotAvailable ? nil : reported
    }

    /// The reports an event carries (none for other events).
    public static func reports(in event: HCIEvent) -> [ScanReport] {
        let missing = LEAdvertisingReport.rssiNotAvailable
        switch event {
        case let .leMeta(.advertisingReport(reports)):
            return reports.map {
                ScanReport(address: $0.address, addressType: $0.addressType, rssi: $0.rssi == missing ? nil : $0.rssi,
                           data: Array($0.data), kind: $0.kind)
            }
        case let .leMeta(.extendedAdvertisingReport(reports)):
            return reports.map {
                ScanReport(address: $0.address, addressType: $0.addressType, rssi: $0.rssi == missing ? nil : $0.rssi,
                           txPower: $0.txPower == missing ? nil : $0.txPower, data: Array($0.data), kind: $0.kind,
                           phys: $0.phys)
            }
        default:
            return []
        }
    }

    /// The beacons in the report's data with the sender's details; a report whose data does
    /// not parse throws, so the caller can show it raw.
    public func sightings() throws(CodecError) -> [BeaconSighting] {
        var found: [BeaconSighting] = []
        try sightings(into: &found)
        return found
    }

    /// `sightings()`, and after them the first of `layouts`' beacons in the data (a watcher of
    /// beacons of an app's layout it sent itself: `LayoutBeacon.layouts(of:)`).
    public func sightings(reading layouts: [(name: String, layout: BeaconLayout)]) throws(CodecError) -> [BeaconSighting] {
        var found = try sightings()
        if let beacon = LayoutBeacon.first(of: layouts, inData: data[...]) {
            found.append(BeaconSighting(beacon: beacon, address: address, addressType: addressType, rssi: rssi, txPower: txPower))
        }
        return found
    }

    /// `sightings()` into an array the caller reuses (emptied first; left empty when it throws).
    public func sightings(into found: inout [BeaconSighting]) throws(CodecError) {
        try Self.sightings(inData: data[...], address: address, addressType: addressType, rssi: rssi, txPower: txPower,
                           into: &found)
    }

    /// The sightings of a report given as its parts (its data wherever it was read), into an
    /// array the caller reuses: emptied first, left empty when the data does not parse.
    public static func sightings(inData data: ArraySlice<UInt8>, address: BluetoothAddress, addressType: AddressType,
                                 rssi: Int8?, txPower: Int8?, into found: inout [BeaconSighting]) throws(CodecError) {
        found.removeAll(keepingCapacity: true)
        try appendSightings(inData: data, address: address, addressType: addressType, rssi: rssi, txPower: txPower,
                            to: &found)
    }

    /// `sightings(inData:...)` appended to an array that holds other reports' sightings before
    /// them (a batch of a capture), left as it was when the data does not parse.
    public static func appendSightings(inData data: ArraySlice<UInt8>, address: BluetoothAddress,
                                       addressType: AddressType, rssi: Int8?, txPower: Int8?,
                                       to found: inout [BeaconSighting]) throws(CodecError) {
        let start = found.count
        do throws(CodecError) {
            try PacketDecoder.forEachSighting(inAdvertisingData: data, address: address, addressType: addressType,
                                              rssi: rssi, reportedTxPower: txPower) { found.append($0) }
        } catch {
            found.removeSubrange(start...)
            throw error
        }
    }
}

