// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A report as `scan` handles it, its data wherever it was read (a capture's buffer, a live
/// report): valid only while it is handled.
struct ReportView {
    var address: BluetoothAddress
    var addressType: AddressType
    var rssi: Int8?
    var txPower: Int8?
    var data: ArraySlice<UInt8>
    var isScanResponse = false
    /// The PHYs of an extended report (nil: legacy, LE 1M).
    var phys: ReportedPHYs?

    init(_ report: ScanReport) {
        self.init(address: report.address, addressType: report.addressType, rssi: report.rssi, txPower: report.txPower,
                  data: report.data[...])
        isScanResponse = report.isScanResponse
        phys = report.phys
    }

    /// A report's fields as the controller gave them (127: not available), with its data from
    /// wherever it is kept.
    init(_ fields: AdvertisingReportFields, data: ArraySlice<UInt8>) {
        self.init(address: fields.address, addressType: fields.addressType, rssi: ScanReport.available(fields.rssi),
                  txPower: fields.reportedTxPower.flatMap(ScanReport.available), data: data)
        isScanResponse = fields.isScanResponse
        phys = fields.phys
    }

    init(address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8?, data: ArraySlice<UInt8>) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }
}

/// How `scan` writes a line: a beacon with its distance, or a report that held none.
enum ScanLine {
    static func writeBeacon(_ sighting: BeaconSighting, accuracy: Double?, data: some Collection<UInt8>,
                            phys: ReportedPHYs?, unixTime: Double, to output: inout OutputBuffer, json: Bool) {
        let hundredths = accuracy.flatMap(Distance.hundredths)
        if json {
            output.appendJSONLine { object in
                SightingFormatter.add(sighting, to: &object)
                if sighting.txPower == nil { object.addNull("txPower") }
                if let hundredths {
                    object.add("accuracy", hundredths: hundredths)
                } else {
                    object.addNull("accuracy")
                }
                object.add("proximity", literal: Proximity(accuracy: accuracy).literal)
                add(phys, to: &object)
                object.add("data", hex: data)
                object.add("timestamp", timestamp: unixTime)
            }
        } else {
            let distance = hundredths.map { "~\(Distance.metres(hundredths: $0)) m \(Proximity(accuracy: accuracy).rawValue)" }
                ?? "distance ?"
            output.append(line: "\(Timestamp.iso8601(unixTime)) \(SightingFormatter.text(sighting)) \(distance) "
                + (phys.map { "phy=\($0.text) " } ?? "") + "data=\(HexText.format(data))")
        }
    }

    static func writeUnknown(_ report: ReportView, error: CodecError?, unixTime: Double, to output: inout OutputBuffer,
                             json: Bool) {
        if json {
            output.appendJSONLine { object in
                object.add("type", literal: "unknown")
                object.add("address", address: report.address)
                object.add("addressType", addressType: report.addressType)
                if let rssi = report.rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
                if let txPower = report.txPower { object.add("txPower", txPower) } else { object.addNull("txPower") }
                add(report.phys, to: &object)
                object.add("data", hex: report.data)
                if report.isScanResponse { object.add("scanResponse", true) }
                if let error { object.add("error", error.description) }
                object.add("timestamp", timestamp: unixTime)
            }
        } else {
            output.append(line: "\(Timestamp.iso8601(unixTime)) \(report.isScanResponse ? "scan-response" : "unknown") "
                + "address=\(report.address) (\(report.addressType)) "
                + "rssi=\(report.rssi.map { "\($0)dBm" } ?? "unavailable") "
                + (report.phys.map { "phy=\($0.text) " } ?? "") + "data=\(HexText.format(report.data))"
                + (error.map { " (\($0))" } ?? ""))
        }
    }
}

extension ScanLine {
    /// The first of the app's layouts' beacons in a report's data, on a line of its own; nothing
    /// where none reads it.
    static func writeLayout(_ layouts: [(name: String, layout: BeaconLayout)], report: ReportView, unixTime: Double,
                            to output: inout OutputBuffer, json: Bool) {
        guard let beacon = LayoutBeacon.first(of: layouts, inData: report.data) else { return }
        let sighting = BeaconSighting(beacon: beacon, address: report.address, addressType: report.addressType, rssi: report.rssi)
        if json {
            output.appendJSONLine { object in
                SightingFormatter.add(sighting, to: &object)
                object.add("data", hex: report.data)
                object.add("timestamp", timestamp: unixTime)
            }
        } else {
            output.append(line: "\(Timestamp.iso8601(unixTime)) \(SightingFormatter.text(sighting)) data=\(HexText.format(report.data))")
        }
    }

    /// An extended report's PHYs: `"primaryPHY":"coded","secondaryPHY":"coded"` (nothing for a legacy report).
    static func add(_ phys: ReportedPHYs?, to object: inout JSONObject) {
        guard let phys else { return }
        add("primaryPHY", phys.primary, to: &object)
        add("secondaryPHY", phys.secondary, to: &object)
    }

    private static func add(_ key: StaticString, _ phy: UInt8, to object: inout JSONObject) {
        if let name = ReportedPHYs.definedName(phy) {
            object.add(key, literal: name)
        } else {
            object.add(key, ReportedPHYs.name(phy))
        }
    }
}

/// The lines a batch of a capture gives, by reference into the batch (which holds the reports,
/// their data and their beacons): what tracking decided, and nothing copied.
struct ReplayLines {
    enum Line {
        case beacon(report: Int, sighting: Int, accuracy: Double?, unixTime: Double)
        case unknown(report: Int, unixTime: Double)
        /// The first of the app's layouts' beacons in the report's data (`scan --layout`).
        case layout(report: Int, unixTime: Double)
    }

    let batch: CaptureReader.Batch
    /// The app's layouts, by name, in the order they are tried.
    var layouts: [(name: String, layout: BeaconLayout)] = []
    var lines: [Line] = []

    func write(to output: inout OutputBuffer, json: Bool) {
        for line in lines {
            switch line {
            case let .beacon(report, sighting, accuracy, unixTime):
                ScanLine.writeBeacon(batch.sightings[sighting], accuracy: accuracy, data: batch.bytes[batch.dataRanges[report]],
                                     phys: batch.reports[report].phys, unixTime: unixTime, to: &output, json: json)
            case let .unknown(report, unixTime):
                ScanLine.writeUnknown(batch.report(report), error: batch.failures[report], unixTime: unixTime,
                                      to: &output, json: json)
            case let .layout(report, unixTime):
                ScanLine.writeLayout(layouts, report: batch.report(report), unixTime: unixTime, to: &output, json: json)
            }
        }
    }
}

/// How `scan` writes distances.
enum Distance {
    /// Metres rounded to hundredths, or nil for a value that is no distance (negative, not
    /// finite, or beyond what the count holds; `Ranging` never gives one).
    static func hundredths(_ value: Double) -> UInt64? {
        let scaled = (value * 100).rounded()
        guard scaled >= 0, scaled < 0x1p63 else { return nil }
        return UInt64(scaled)
    }

    /// Metres with two decimals: 150 hundredths -> "1.50".
    static func metres(hundredths: UInt64) -> String {
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// Metres with two decimals, "?" for no distance (`hundredths(_:)`): 1.5 -> "1.50".
    static func metres(_ value: Double?) -> String {
        value.flatMap(hundredths).map { metres(hundredths: $0) } ?? "?"
    }
}

/// Writes batches of lines on a thread of its own, in the order they were handed over, while
/// the caller goes on tracking reports (and `CaptureReader` reads ahead): a replay's three
/// stages on as many cores as there are. At most six batches wait, so memory stays bounded
/// however long the capture.
final class ScanLineWriter: @unchecked Sendable {
    private let json: Bool
    /// Changed only on `queue`.
    private var output: OutputBuffer
    private let queue = DispatchQueue(label: "beacon-emit.scan-output")
    private let waiting = DispatchSemaphore(value: 6)
    init(json: Bool, descriptor: Int32) {
        self.json = json
        output = OutputBuffer(descriptor: descriptor)
    }

    /// Hands lines over to be written (waiting while six batches are still to be written).
    func submit(_ lines: ReplayLines) {
        guard !lines.lines.isEmpty else { return }
        waiting.wait()
        queue.async { [self] in
            lines.write(to: &output, json: json)
            output.flush()
            waiting.signal()
        }
    }

    /// Waits until every batch handed over is written.
    func drain() {
        queue.sync {}
    }
}

extension Proximity {
    /// The raw value, known at compile time (written into JSON without a string).
    var literal: StaticString {
        switch self {
        case .immediate: "immediate"
        case .near: "near"
        case .far: "far"
        case .unknown: "unknown"
        }
    }
}
