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

/// One line of `scan` output, with everything needed to write it: what the scan decided
/// (the tracker's distance, the error of data that did not decode) taken when it decided.
enum ScanLine {
    case beacon(BeaconSighting, accuracy: Double, data: [UInt8], unixTime: Double)
    case unknown(ScanReport, error: CodecError?, unixTime: Double)

    /// Writes the line, as JSON or as text, to `output`.
    func write(to output: OutputBuffer, json: Bool) {
        switch self {
        case let .beacon(sighting, accuracy, data, unixTime):
            if json {
                output.appendJSONLine { object in
                    SightingFormatter.add(sighting, to: &object)
                    if sighting.txPower == nil { object.addNull("txPower") }
                    if accuracy < 0 {
                        object.add("accuracy", number: "-1")
                    } else {
                        object.add("accuracy", hundredths: Self.hundredths(accuracy))
                    }
                    object.add("proximity", literal: Proximity(accuracy: accuracy).literal)
                    object.add("data", hex: data)
                    object.add("timestamp", timestamp: unixTime)
                }
            } else {
                let distance = accuracy < 0
                    ? "distance unknown" : "~\(Self.metres(accuracy)) m \(Proximity(accuracy: accuracy).rawValue)"
                output.append(line: "\(Timestamp.iso8601(unixTime)) \(SightingFormatter.text(sighting)) \(distance) "
                    + "data=\(HexText.format(data))")
            }
        case let .unknown(report, error, unixTime):
            if json {
                output.appendJSONLine { object in
                    object.add("type", literal: "unknown")
                    object.add("address", address: report.address)
                    object.add("addressType", addressType: report.addressType)
                    if let rssi = report.rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
                    if let tx = report.txPower { object.add("txPower", tx) } else { object.addNull("txPower") }
                    object.add("data", hex: report.data)
                    if let error { object.add("error", error.description) }
                    object.add("timestamp", timestamp: unixTime)
                }
            } else {
                output.append(line: "\(Timestamp.iso8601(unixTime)) unknown address=\(report.address) (\(report.addressType)) "
                    + "rssi=\(report.rssi.map { "\($0)dBm" } ?? "unavailable") data=\(HexText.format(report.data))"
                    + (error.map { " (\($0))" } ?? ""))
            }
        }
    }

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
/// the caller goes on reading and tracking reports: a replay's two halves on two cores. At
/// most two batches wait, so memory stays bounded however long the capture.
final class ScanLineWriter: @unchecked Sendable {
    private let json: Bool
    /// Changed only on `queue`.
    private let output = OutputBuffer(descriptor: STDOUT_FILENO)
    private let queue = DispatchQueue(label: "beacon-emit.scan-output")
    private let waiting = DispatchSemaphore(value: 2)
    private var batch: [ScanLine] = []
    private static let batchSize = 2048

    init(json: Bool) {
        self.json = json
        batch.reserveCapacity(Self.batchSize)
    }

    func append(_ line: ScanLine) {
        batch.append(line)
        if batch.count >= Self.batchSize { submit() }
    }

    /// Hands over what is collected and waits until every line handed over is written.
    func drain() {
        submit()
        queue.sync {}
    }

    private func submit() {
        guard !batch.isEmpty else { return }
        nonisolated(unsafe) let lines = batch
        batch = []
        batch.reserveCapacity(Self.batchSize)
        waiting.wait()
        queue.async { [self] in
            for line in lines { line.write(to: output, json: json) }
            output.flush()
            waiting.signal()
        }
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
