// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A report as `scan` handles it, its data wherever it was read (a capture's buffer, a live
/// report): valid only while it is handled.
struct ReportView {
    var address: BluetoothAddress
    var addressType: AddressType
    var rssi: Int8?
    var txPower: Int8?
    var data: ArraySlice<UInt8>

    init(_ report: ScanReport) {
        self.init(address: report.address, addressType: report.addressType, rssi: report.rssi, txPower: report.txPower,
                  data: report.data[...])
    }

    init(_ fields: AdvertisingReportFields) {
        self.init(address: fields.address, addressType: fields.addressType, rssi: ScanReport.available(fields.rssi),
                  txPower: fields.reportedTxPower.flatMap(ScanReport.available), data: fields.data)
    }

    init(address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8?, data: ArraySlice<UInt8>) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }
}

/// Lines of `scan` output waiting to be written, each with everything needed to write it: what
/// the scan decided (the tracker's distance, the error of data that did not decode) taken when
/// it decided, and the report's data copied into one buffer for the whole batch (no array per
/// report).
struct ScanBatch {
    enum Line {
        case beacon(BeaconSighting, accuracy: Double, data: Range<Int>, unixTime: Double)
        case unknown(BluetoothAddress, AddressType, rssi: Int8?, txPower: Int8?, data: Range<Int>,
                     error: CodecError?, unixTime: Double)
    }

    private(set) var lines: [Line] = []
    private(set) var bytes: [UInt8] = []

    var count: Int { lines.count }

    mutating func appendBeacon(_ sighting: BeaconSighting, accuracy: Double, report: ReportView, unixTime: Double) {
        lines.append(.beacon(sighting, accuracy: accuracy, data: keep(report.data), unixTime: unixTime))
    }

    mutating func appendUnknown(_ report: ReportView, error: CodecError?, unixTime: Double) {
        lines.append(.unknown(report.address, report.addressType, rssi: report.rssi, txPower: report.txPower,
                              data: keep(report.data), error: error, unixTime: unixTime))
    }

    mutating func removeAll() {
        lines.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }

    private mutating func keep(_ data: ArraySlice<UInt8>) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: data)
        return start..<bytes.count
    }

    /// Writes every line, as JSON or as text, to `output`.
    func write(to output: OutputBuffer, json: Bool) {
        for line in lines { Self.write(line, data: bytes, to: output, json: json) }
    }

    private static func write(_ line: Line, data bytes: [UInt8], to output: OutputBuffer, json: Bool) {
        switch line {
        case let .beacon(sighting, accuracy, range, unixTime):
            let data = bytes[range]
            if json {
                output.appendJSONLine { object in
                    SightingFormatter.add(sighting, to: &object)
                    if sighting.txPower == nil { object.addNull("txPower") }
                    if accuracy < 0 {
                        object.add("accuracy", number: "-1")
                    } else {
                        object.add("accuracy", hundredths: Distance.hundredths(accuracy))
                    }
                    object.add("proximity", literal: Proximity(accuracy: accuracy).literal)
                    object.add("data", hex: data)
                    object.add("timestamp", timestamp: unixTime)
                }
            } else {
                let distance = accuracy < 0
                    ? "distance unknown" : "~\(Distance.metres(accuracy)) m \(Proximity(accuracy: accuracy).rawValue)"
                output.append(line: "\(Timestamp.iso8601(unixTime)) \(SightingFormatter.text(sighting)) \(distance) "
                    + "data=\(HexText.format(data))")
            }
        case let .unknown(address, addressType, rssi, txPower, range, error, unixTime):
            let data = bytes[range]
            if json {
                output.appendJSONLine { object in
                    object.add("type", literal: "unknown")
                    object.add("address", address: address)
                    object.add("addressType", addressType: addressType)
                    if let rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
                    if let txPower { object.add("txPower", txPower) } else { object.addNull("txPower") }
                    object.add("data", hex: data)
                    if let error { object.add("error", error.description) }
                    object.add("timestamp", timestamp: unixTime)
                }
            } else {
                output.append(line: "\(Timestamp.iso8601(unixTime)) unknown address=\(address) (\(addressType)) "
                    + "rssi=\(rssi.map { "\($0)dBm" } ?? "unavailable") data=\(HexText.format(data))"
                    + (error.map { " (\($0))" } ?? ""))
            }
        }
    }
}

/// How `scan` writes distances.
enum Distance {
    /// Metres rounded to hundredths (a non-negative distance).
    static func hundredths(_ value: Double) -> UInt64 {
        UInt64((value * 100).rounded())
    }

    /// Metres with two decimals: 1.5 -> "1.50".
    static func metres(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// Writes batches of lines on a thread of its own, in the order they were handed over, while
/// the caller goes on tracking reports (and `CaptureReader` reads ahead): a replay's three
/// stages on as many cores as there are. At most two batches wait, so memory stays bounded
/// however long the capture.
final class ScanLineWriter: @unchecked Sendable {
    private let json: Bool
    /// Changed only on `queue`.
    private let output = OutputBuffer(descriptor: STDOUT_FILENO)
    private let queue = DispatchQueue(label: "beacon-emit.scan-output")
    private let waiting = DispatchSemaphore(value: 2)
    static let batchSize = 2048

    init(json: Bool) {
        self.json = json
    }

    /// Hands a batch over to be written (waiting while two are still to be written).
    func submit(_ batch: ScanBatch) {
        guard batch.count > 0 else { return }
        waiting.wait()
        queue.async { [self] in
            batch.write(to: output, json: json)
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
