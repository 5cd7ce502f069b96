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

    public init(address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8? = nil, data: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    /// A report as read from an event's bytes (`LEMetaEvent.advertisingReports(inEvent:into:)`).
    public init(_ fields: AdvertisingReportFields) {
        self.init(address: fields.address, addressType: fields.addressType, rssi: Self.available(fields.rssi),
                  txPower: fields.reportedTxPower.flatMap(Self.available), data: Array(fields.data))
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
                           data: Array($0.data))
            }
        case let .leMeta(.extendedAdvertisingReport(reports)):
            return reports.map {
                ScanReport(address: $0.address, addressType: $0.addressType, rssi: $0.rssi == missing ? nil : $0.rssi,
                           txPower: $0.txPower == missing ? nil : $0.txPower, data: Array($0.data))
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

/// Scanning on a controller with legacy scan commands (which also report legacy PDUs sent
/// from extended advertising sets, the kind beacons use).
public final class AdvertisementScanner {
    public struct Options: Sendable {
        public var active: Bool
        /// 0.625 ms units.
        public var intervalUnits: UInt16
        public var windowUnits: UInt16
        /// Let the controller drop duplicate reports (ranging and monitoring want them all).
        public var controllerFiltersDuplicates: Bool

        public init(active: Bool = false, intervalUnits: UInt16 = 0x0010, windowUnits: UInt16 = 0x0010,
                    controllerFiltersDuplicates: Bool = false) {
            self.active = active
            self.intervalUnits = intervalUnits
            self.windowUnits = windowUnits
            self.controllerFiltersDuplicates = controllerFiltersDuplicates
        }
    }

    public let controller: HCIController
    private var queued: [ScanReport] = []
    /// Whether the scan runs with the extended scanning commands.
    public private(set) var usesExtendedCommands = false

    public init(controller: HCIController) {
        self.controller = controller
    }

    /// Sets the scan up and enables it. Owned controllers are reset first and scanned with
    /// legacy commands; kernel adapters with the extended commands where they have them,
    /// because the kernel itself drives such controllers with extended commands and the
    /// controller then refuses legacy ones (0x0C).
    /// - Parameter legacy: use the legacy commands even where extended ones exist.
    /// - Throws: `HostError` naming a refused step.
    public func start(options: Options = Options(), ownsController: Bool = true, legacy: Bool = false) throws(HostError) {
        let context = "interval \(options.intervalUnits) x 0.625 ms, window \(options.windowUnits) x 0.625 ms"
        if ownsController {
            try ControllerInfo.initialize(controller)
        } else if !legacy {
            usesExtendedCommands = try controller.send(ReadLocalSupportedCommands()).supportsExtendedScanning
        }
        if usesExtendedCommands {
            let phy = LESetExtendedScanParameters.PHYParameters(scanType: options.active ? .active : .passive,
                                                                interval: options.intervalUnits,
                                                                window: options.windowUnits)
            try controller.sendDisable(LESetExtendedScanEnable(enable: false))
            do {
                try controller.send(try LESetExtendedScanParameters(phys: [phy]), context: context)
            } catch let error as HostError {
                throw error
            } catch {
                throw .unsupported("\(error)")
            }
            try controller.send(LESetExtendedScanEnable(enable: true,
                                                        filterDuplicates: options.controllerFiltersDuplicates ? 1 : 0))
        } else {
            try controller.sendDisable(LESetScanEnable(enable: false))
            try controller.send(LESetScanParameters(scanType: options.active ? .active : .passive,
                                                    interval: options.intervalUnits, window: options.windowUnits),
                                context: context)
            try controller.send(LESetScanEnable(enable: true, filterDuplicates: options.controllerFiltersDuplicates))
        }
    }

    /// The next report, or nil on timeout or interrupt.
    /// - Throws: `HostError` when the link fails.
    public func nextReport(timeout: Duration, interrupt: Int32? = nil) throws(HostError) -> ScanReport? {
        if !queued.isEmpty { return queued.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let event = try controller.nextEvent(timeout: remaining, interrupt: interrupt) else {
                return nil
            }
            queued = ScanReport.reports(in: event)
            if !queued.isEmpty { return queued.removeFirst() }
        }
    }

    /// Stops scanning (best effort).
    public func stop() {
        if usesExtendedCommands {
            _ = try? controller.send(LESetExtendedScanEnable(enable: false))
        } else {
            _ = try? controller.send(LESetScanEnable(enable: false))
        }
    }

    /// Stops scanning and closes the link.
    public func close() {
        stop()
        controller.transport.close()
    }
}
