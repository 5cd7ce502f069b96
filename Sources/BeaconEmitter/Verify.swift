// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import ArgumentParser
import BeaconHost
import BeaconReports
import LinuxSystem

/// `beacon-emit verify`: emit on one device, scan on another, and prove the beacon arrives.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Emit a beacon on --device and check it arrives at --scanner: found by its identifiers, or byte for byte.",
        discussion: """
            A beacon with identifiers (iBeacon, AltBeacon, Eddystone-UID and -URL) is found by them, and each \
            field of its advertising data that differs from what the options describe is reported: a field \
            stated by an option (--measured-power, --flags, --name, --manufacturer-data, --service-data, \
            --service-uuid, --company-id) fails, the others are told. --exact, and a beacon without \
            identifiers (--ad, TLM), compare the whole advertising data byte for byte. Exit 0 when it \
            arrives within --timeout, printing the latency from advertising enabled to the first report; 1 \
            otherwise, saying what arrived instead (nothing, the closest mismatch, or the fields that differ). \
            Without --device nothing is emitted: verify then checks a beacon something else is sending. Both \
            devices may be `virtual` (two devices on one private virtual radio). --junit FILE is written \
            whatever the outcome.
            """ + guide("scanning.md#verify") + HelpExamples.text("verify")
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

    @Flag(help: "Compare the whole advertising data byte for byte, not the beacon found by its identifiers.")
    var exact = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    @Option(help: ArgumentHelp("Also write a JUnit XML report to this file (on every outcome).", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("The JUnit suite's name (default: the beacon's identifiers).", valueName: "name"))
    var junitName: String?

    func validate() throws {
        if beacon.isEmpty { throw ValidationError("describe the beacon to verify: --uuid UUID --major N --minor N, ...") }
        if !(timeout > 0 && timeout <= 3600) { throw ValidationError("--timeout must be from 0 to 3600 seconds") }
    }

    /// What the options state besides the identifiers: those fields are checked.
    private var stated: BeaconComparison.Stated {
        BeaconComparison.Stated(measuredPower: beacon.measuredPower != nil, flags: beacon.flags != nil, name: beacon.name != nil,
                                manufacturerData: !beacon.manufacturerData.isEmpty, serviceData: !beacon.serviceData.isEmpty,
                                serviceUUIDs: !beacon.serviceUuid.isEmpty, company: beacon.companyId != nil)
    }

    func run() throws {
        let described = try beacon.makeBeacon()
        let expected = described.advertisingData.bytes
        let byIdentity = !exact && BeaconComparison.hasIdentity(described)
        let suite = "beacon-emit verify " + (junitName ?? (byIdentity ? AuditReport.identity(described) : HexText.format(expected)))
        let outcome: VerifyOutcome
        do {
            outcome = try verify(described, expected: expected, byIdentity: byIdentity)
        } catch {
            if let junit { try JUnitFile.write(.error(suite: suite, error.message), to: junit) }
            throw fail(error)
        }
        print(json ? outcome.json(expected: expected) : outcome.text(expected: expected))
        if let junit { try JUnitFile.write(outcome.suite(named: suite, expected: expected, timeout: timeout), to: junit) }
        if !outcome.passed { throw ExitCode(1) }
    }

    private func verify(_ described: Beacon, expected: [UInt8], byIdentity: Bool) throws(HostError) -> VerifyOutcome {
        // A signal ends the wait (the report says so, advertising goes off), not the process.
        let interrupt = SignalWatcher.install()
        let rig = try deviceOptions.openWithScanner(scanning.scanner, advertising: described, legacy: scanning.legacy)
        defer { rig.close() }
        defer { ScanSummary.skipped(rig.scanner.controller) }
        let enabled = ContinuousClock.now
        var closest: ScanReport? = nil
        var mismatch: (report: ScanReport, differences: [BeaconComparison.Difference])? = nil
        var reports = 0
        var verified: VerifyOutcome? = nil
        let from = ScanFilter(addresses: Set(address))
        let identity = byIdentity ? AuditReport.identity(described) : nil
        try rig.scanner.feed(duration: timeout, interrupt: interrupt, handle: { timed in
            let report = timed.report
            guard from.accepts(address: report.address), !report.isScanResponse else { return true }
            reports += 1
            if !byIdentity {
                if report.data == expected {
                    verified = VerifyOutcome(passed: true, report: report, latency: enabled.duration(to: .now), reports: reports)
                    return false
                }
            } else if BeaconComparison.find(described, in: report.data) != nil {
                let differences = BeaconComparison.differences(described: described, heard: report.data, stated: stated)
                if !differences.contains(where: \.stated) {
                    verified = VerifyOutcome(passed: true, report: report, latency: enabled.duration(to: .now), reports: reports,
                                             identity: identity, differences: differences)
                    return false
                }
                if mismatch == nil { mismatch = (report, differences) }
                return true
            }
            if closest.map({ Self.similarity($0.data, expected) < Self.similarity(report.data, expected) }) ?? true {
                closest = report
            }
            return true
        }, tick: { _ in })
        if let verified { return verified }
        let waited = enabled.duration(to: .now)
        let interrupted = waited < .milliseconds(Int64(timeout * 1000) - 50)
        if let mismatch {
            return VerifyOutcome(passed: false, report: mismatch.report, latency: nil, reports: reports, identity: identity,
                                 differences: mismatch.differences, found: true)
        }
        return VerifyOutcome(passed: false, report: closest, latency: nil, reports: reports, identity: identity,
                             interruptedAfter: interrupted ? waited : nil)
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
            guard case let .invalidDevice(_, reason) = error else { throw ValidationError(error.message) }
            throw ValidationError("--scanner \(text): \(reason)")
        }
    }
}

/// What `verify` found.
struct VerifyOutcome {
    var passed: Bool
    /// The matching report (the beacon found, or the exact data), or the closest mismatch.
    var report: ScanReport?
    var latency: Duration?
    var reports: Int
    /// By identity: the beacon's identifiers in words; nil: byte for byte.
    var identity: String? = nil
    /// By identity: what differs in the beacon found.
    var differences: [BeaconComparison.Difference] = []
    /// By identity: the beacon was heard, but a field stated differs.
    var found = false
    /// A signal ended the wait this long after advertising was enabled.
    var interruptedAfter: Duration? = nil

    private static func words(_ differences: [BeaconComparison.Difference]) -> String {
        differences.map { "\($0.field): expected \($0.expected), heard \($0.heard)" }.joined(separator: "; ")
    }

    func text(expected: [UInt8]) -> String {
        if passed, let report, let latency {
            let after = "\(EmitterPrinter.milliseconds(latency)) ms after advertising was enabled"
            guard let identity else {
                return "verified: \(expected.count) bytes arrived intact from \(report.address), \(after)"
            }
            let told = differences.isEmpty ? "; its advertising data as described"
                : "; not stated, and not as described: \(Self.words(differences))"
            return "verified: \(identity) arrived from \(report.address), \(after)\(told)"
        }
        if found, let report, let identity {
            let failing = differences.filter(\.stated), told = differences.filter { !$0.stated }
            return "verify failed: \(identity) arrived from \(report.address), but what the options state differs: "
                + Self.words(failing) + (told.isEmpty ? "" : "; also not as described: \(Self.words(told))")
        }
        let within = interruptedAfter.map { "before a signal ended the wait after \(EmitterPrinter.milliseconds($0)) ms" }
            ?? "within the timeout"
        let nothing = identity.map { "no \($0) arrived \(within)" } ?? "nothing arrived \(within)"
        guard let report else {
            return "verify failed: \(nothing) (\(reports) reports); expected \(HexText.format(expected))"
        }
        let difference = zip(report.data, expected).enumerated().first { $0.element.0 != $0.element.1 }
        let at = difference.map { "first difference at byte \($0.offset): expected 0x\(HexText.format([$0.element.1])), "
            + "saw 0x\(HexText.format([$0.element.0]))" } ?? "lengths differ: \(report.data.count) bytes, expected \(expected.count)"
        let seen = (try? report.sightings().first).flatMap { $0.map { SightingFormatter.text(BeaconSighting(beacon: $0.beacon)) } }
        let wanted = (try? PacketDecoder.decode(expected).sightings.first).flatMap {
            $0.map { SightingFormatter.text(BeaconSighting(beacon: $0.beacon)) }
        }
        return "verify failed: " + (identity.map { "no \($0) arrived; " } ?? "")
            + "the closest of \(reports) reports came from \(report.address): "
            + "\(HexText.format(report.data)) (\(seen ?? "no beacon")); expected \(HexText.format(expected)) "
            + "(\(wanted ?? "no beacon")); \(at)"
    }

    func json(expected: [UInt8]) -> String {
        var object = JSONObject()
        object.add("event", passed ? "verified" : "failed")
        object.add("mode", identity == nil ? "exact" : "identity")
        if let identity { object.add("beacon", identity) }
        object.add("expected", HexText.format(expected))
        if let report {
            object.add(passed || found ? "received" : "closest", HexText.format(report.data))
            object.add("address", report.address.description)
        } else {
            object.addNull("closest")
        }
        if identity != nil {
            object.add("differences", objects: differences) { difference, item in
                item.add("field", difference.field)
                item.add("expected", difference.expected)
                item.add("heard", difference.heard)
                item.add("stated", difference.stated)
            }
        }
        if let latency { object.add("latencyMs", number: EmitterPrinter.milliseconds(latency)) }
        object.add("reports", reports)
        return object.line
    }

    /// The JUnit suite: `heard` (the beacon, or the exact data, arrived), then `fields` (by
    /// identity: what the options state) or `bytes` (byte for byte).
    func suite(named name: String, expected: [UInt8], timeout: Double) -> JUnitSuite {
        let heard = passed || found
        let text = self.text(expected: expected)
        var cases = [JUnitSuite.Case("heard", heard ? .passed : .failed(text), output: report.map { "from \($0.address)" })]
        if identity != nil {
            let told = differences.filter { !$0.stated }
            cases.append(.init("fields", !heard ? .skipped("not heard") : passed ? .passed : .failed(text),
                               output: told.isEmpty ? nil : "not stated, not as described: " + Self.words(told)))
        } else {
            cases.append(.init("bytes", passed ? .passed : .skipped("not heard")))
        }
        let seconds = (latency ?? interruptedAfter)?.inSeconds ?? timeout
        return JUnitSuite(name: name, cases: cases, time: seconds)
    }
}
