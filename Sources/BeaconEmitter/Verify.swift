// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import ArgumentParser
import BeaconHost
import BeaconReports

/// `beacon-emit verify`: emit on one device, scan on another, and prove the bytes arrive.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Emit a beacon on --device and check it arrives byte for byte at --scanner.",
        discussion: """
            Exit 0 when the exact advertising data arrives within --timeout, printing the latency \
            from advertising enabled to the first report; 1 otherwise, saying what arrived instead \
            (nothing, or the closest mismatch). Without --device nothing is emitted: verify then \
            checks a beacon something else is sending. Both devices may be `virtual` (two devices \
            on one private virtual radio).
            """
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Beacon") var beacon: BeaconOptions

    @OptionGroup var scanning: ScannerOptions

    @Option(help: ArgumentHelp("Seconds to wait for the advertisement.", valueName: "seconds"))
    var timeout: Double = 10

    @Option(help: ArgumentHelp("Count only reports from this advertiser (AA:BB:CC:DD:EE:FF); repeat for several.",
                               valueName: "address"),
            transform: parsed(BluetoothAddress.init(parsing:)))
    var address: [BluetoothAddress] = []

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        if beacon.isEmpty { throw ValidationError("describe the beacon to verify: --uuid UUID --major N --minor N, ...") }
        if !(timeout > 0 && timeout <= 3600) { throw ValidationError("--timeout must be from 0 to 3600 seconds") }
    }

    func run() throws {
        let described = try beacon.makeBeacon()
        let expected = described.advertisingData.bytes
        let outcome: VerifyOutcome
        do {
            outcome = try verify(described, expected: expected)
        } catch {
            throw fail(error)
        }
        print(json ? outcome.json(expected: expected) : outcome.text(expected: expected))
        if !outcome.passed { throw ExitCode(1) }
    }

    private func verify(_ described: Beacon, expected: [UInt8]) throws(HostError) -> VerifyOutcome {
        let rig = try deviceOptions.openWithScanner(scanning.scanner, advertising: described, legacy: scanning.legacy)
        defer { rig.close() }
        defer { ScanSummary.skipped(rig.scanner.controller) }
        let scan = rig.scanner
        let enabled = ContinuousClock.now
        let deadline = enabled + .milliseconds(Int64(timeout * 1000))
        var closest: ScanReport? = nil
        var reports = 0
        let from = ScanFilter(addresses: Set(address))
        while ContinuousClock.now < deadline {
            guard let report = try scan.nextReport(timeout: ContinuousClock.now.duration(to: deadline)) else { break }
            guard from.accepts(address: report.address) else { continue }
            reports += 1
            if report.data == expected {
                return VerifyOutcome(passed: true, report: report, latency: enabled.duration(to: .now), reports: reports)
            }
            if closest.map({ Self.similarity($0.data, expected) < Self.similarity(report.data, expected) }) ?? true {
                closest = report
            }
        }
        return VerifyOutcome(passed: false, report: closest, latency: nil, reports: reports)
    }

    /// Bytes equal at the same position: how close a mismatch came.
    static func similarity(_ data: [UInt8], _ expected: [UInt8]) -> Int {
        zip(data, expected).filter { $0 == $1 }.count - abs(data.count - expected.count)
    }
}

/// `--scanner` and `--legacy`: the second device, and how the first advertises (`verify`, `calibrate`).
struct ScannerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The scanning controller (same forms as --device).", valueName: "device"),
            transform: ScannerOptions.device)
    var scanner: DeviceSpecification

    @Flag(help: "Use legacy advertising commands on --device.")
    var legacy = false

    /// `--scanner`, parsed at parse time, the message naming the option.
    static func device(_ text: String) throws -> DeviceSpecification {
        do {
            return try DeviceSpecification(parsing: text)
        } catch {
            guard case let .invalidDevice(_, reason) = error else { throw ValidationError(error.description) }
            throw ValidationError("--scanner \(text): \(reason)")
        }
    }
}

/// What `verify` found.
struct VerifyOutcome {
    var passed: Bool
    /// The matching report, or the closest mismatch.
    var report: ScanReport?
    var latency: Duration?
    var reports: Int

    func text(expected: [UInt8]) -> String {
        if passed, let report, let latency {
            return "verified: \(expected.count) bytes arrived intact from \(report.address), "
                + "\(EmitterPrinter.milliseconds(latency)) ms after advertising was enabled"
        }
        guard let report else {
            return "verify failed: nothing arrived within the timeout (\(reports) reports); expected \(HexText.format(expected))"
        }
        let difference = zip(report.data, expected).enumerated().first { $0.element.0 != $0.element.1 }
        let at = difference.map { "first difference at byte \($0.offset): expected 0x\(HexText.format([$0.element.1])), "
            + "saw 0x\(HexText.format([$0.element.0]))" } ?? "lengths differ: \(report.data.count) bytes, expected \(expected.count)"
        let seen = (try? report.sightings().first).flatMap { $0.map { SightingFormatter.text(BeaconSighting(beacon: $0.beacon)) } }
        let wanted = (try? PacketDecoder.decode(expected).sightings.first).flatMap {
            $0.map { SightingFormatter.text(BeaconSighting(beacon: $0.beacon)) }
        }
        return "verify failed: the closest of \(reports) reports came from \(report.address): "
            + "\(HexText.format(report.data)) (\(seen ?? "no beacon")); expected \(HexText.format(expected)) "
            + "(\(wanted ?? "no beacon")); \(at)"
    }

    func json(expected: [UInt8]) -> String {
        var object = JSONObject()
        object.add("event", passed ? "verified" : "failed")
        object.add("expected", HexText.format(expected))
        if let report {
            object.add(passed ? "received" : "closest", HexText.format(report.data))
            object.add("address", report.address.description)
        } else {
            object.addNull("closest")
        }
        if let latency { object.add("latencyMs", number: EmitterPrinter.milliseconds(latency)) }
        object.add("reports", reports)
        return object.line
    }
}
