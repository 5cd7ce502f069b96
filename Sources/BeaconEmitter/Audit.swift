// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports
import BeaconTracking
import Foundation
import LinuxSystem

/// `beacon-emit audit`: one advertiser measured and judged against its format's rules.
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Audit one advertiser: its interval, the share of its events heard, RSSI, PDU type, address and data, "
            + "judged against its beacon format's rules.",
        discussion: """
            Listens with --scanner for --duration seconds (or reads --replay FILE) to one advertiser: the one \
            at --address, the beacon with the identifiers given (--uuid/--major/--minor, --namespace/--instance, \
            --url; followed when its address changes), or else the strongest beacon heard. Prints a verdict, \
            each rule with what was seen and what its specification wants, and the measurements. The interval \
            is estimated through missed reports, the 0-10 ms random delay the standard adds to each event and \
            reports a busy host read late; --interval states what the device was configured with and makes the \
            rule a comparison. A rule that what was heard cannot judge (too few reports, a source without PDU \
            types) is inconclusive. Exits 0 when every rule passes (warnings pass), 1 when one fails or the \
            advertiser is not heard, 3 when none fails but one is inconclusive (0 with --allow-inconclusive). \
            --junit FILE is written whatever the outcome. --list-rules lists the rules.
            """ + guide("scanning.md#audit") + HelpExamples.text("audit")
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("The scanning device (as --device: hci1, tcp:HOST:PORT, serial:..., virtual).", valueName: "device"),
            transform: parsed(DeviceSpecification.init(parsing:)))
    var scanner: DeviceSpecification?

    @Option(help: ArgumentHelp("The advertiser at this address (AA:BB:CC:DD:EE:FF).", valueName: "address"),
            transform: parsed(BluetoothAddress.init(parsing:)))
    var address: BluetoothAddress?

    @Option(help: "The beacon of this UUID (iBeacon proximity UUID, AltBeacon id1).")
    var uuid: String?

    @Option(parsing: .unconditional, help: "With --uuid: this major (AltBeacon id2).")
    var major: Int?

    @Option(parsing: .unconditional, help: "With --major: this minor (AltBeacon id3).")
    var minor: Int?

    @Option(help: "The Eddystone-UID beacon of this namespace (20 hex digits).")
    var namespace: String?

    @Option(help: "With --namespace or alone: the Eddystone-UID instance (12 hex digits).")
    var instance: String?

    @Option(help: "The Eddystone-URL beacon of this URL.")
    var url: String?

    @OptionGroup var layout: LayoutRegionOptions

    @Option(help: ArgumentHelp("Seconds to listen.", valueName: "seconds"))
    var duration: Double = 30

    @Option(help: ArgumentHelp("Read a capture instead of a device: btsnoop, pcap or pcapng.", valueName: "file"))
    var replay: String?

    @Option(help: ArgumentHelp("Judge against this format's rules (default: the format heard).", valueName: "profile"))
    var profile: AuditProfile?

    @Option(help: ArgumentHelp("The interval the device was configured with: the interval rule compares with it.",
                               valueName: "ms"))
    var interval: Double?

    @Flag(help: "Print the audit as one JSON object.")
    var json = false

    @Option(help: ArgumentHelp("Also write a JUnit XML report, a test case per rule, to this file (on every outcome: "
                               + "not heard, a capture that cannot be read, a device that fails).", valueName: "file"))
    var junit: String?

    @Option(name: .customLong("report"), help: ArgumentHelp(
        "Also write the audit as one self-contained HTML page to this file: the gaps between reports as a histogram, "
        + "RSSI over time, events heard per second, the rules (on every outcome, as --junit).", valueName: "file.html"))
    var reportPath: String?

    @Option(help: ArgumentHelp("The JUnit suite's name (default: the beacon's identifiers, never a rotating address).",
                               valueName: "name"))
    var junitName: String?

    @Flag(help: "Exit 0, not 3, when no rule fails but one could not be judged.")
    var allowInconclusive = false

    @Flag(help: "List the rules: what each checks, its source, the profiles that apply it.")
    var listRules = false

    func validate() throws {
        if listRules { return }
        try validateDuration(duration)
        if scanner != nil && deviceOptions.device != nil { throw ValidationError("--scanner and --device name the same device: give one") }
        if replay != nil && (scanner != nil || deviceOptions.device != nil) {
            throw ValidationError("--replay reads a file instead of a device")
        }
        if let interval, !(interval >= 20 && interval <= 10240) {
            throw ValidationError("--interval must be from 20 to 10240 ms, got \(interval)")
        }
        _ = try choice()
    }

    /// The advertiser the options choose.
    func choice() throws -> AuditChoice {
        let region = try ScanFilterOptions.region(uuid: uuid, major: major, minor: minor)
        let namespace = try self.namespace.map { try hexBytes($0, "--namespace", count: 10) }
        let instance = try self.instance.map { try hexBytes($0, "--instance", count: 6) }
        let layout = try self.layout.region()
        let choice = AuditChoice(address: address, region: region, namespace: namespace, instance: instance, url: url,
                                 layout: layout)
        let ways = [address != nil, region != nil, namespace != nil || instance != nil, url != nil, layout != nil].filter { $0 }.count
        if ways > 1 {
            throw ValidationError("choose the advertiser one way: --address, --uuid, --namespace/--instance, --url or --layout")
        }
        return choice
    }

    func run() throws {
        let startedUnix = Date().timeIntervalSince1970
        if listRules {
            print(AuditRuleList.text)
            return
        }
        let choice = try choice()
        var collector = AuditCollector(choice: choice, profile: profile, configuredInterval: interval)
        let started = ContinuousClock.now
        func elapsed() -> Double { started.duration(to: .now).inSeconds }
        let source: String
        if let replay {
            do {
                let leftOut = try ReportFeed.replay(path: replay, includeBadCRC: capture.includeBadCRC, handle: { timed in
                    collector.add(timed.report, at: timed.elapsed)
                    return true
                }, tick: { _ in })
                capture.report(leftOut: leftOut, in: replay)
            } catch {
                Console.error("\(error)")
                try writeJUnit(.error(suite: suiteName(choice), "\(error)"))
                try ReportFile.write(AuditPage.html(name: suiteName(choice), error: "\(error)", startedUnix: startedUnix), to: reportPath)
                throw ExitCode(ReplayError.exitStatus(for: error))
            }
            source = "the capture \(replay): its timestamps (an HCI capture: when the controller reported; "
                + "a link-layer capture: the air)"
        } else {
            let device = scanner ?? deviceOptions.specification
            do {
                try listen(on: device, into: &collector)
            } catch {
                try writeJUnit(.error(suite: suiteName(choice), error.message, time: elapsed()))
                try ReportFile.write(AuditPage.html(name: suiteName(choice), error: error.message, startedUnix: startedUnix), to: reportPath)
                throw fail(error)
            }
            let listened = elapsed()
            source = "advertising reports from \(device): when the host read each one (a few ms after the air), "
                + "channels not reported" + (listened + 1 < duration ? "; interrupted after \(Int(listened)) s" : "")
        }
        guard let (address, result) = collector.result() else {
            let message = "audit: " + (collector.choice.byBeacon || collector.choice.address != nil
                ? "the advertiser chosen was not heard (\(collector.others) reports of others)"
                : "no advertiser heard") + (replay == nil ? " in \(duration) s" : " in \(replay!)")
            Console.error(message)
            try writeJUnit(JUnitSuite(name: suiteName(choice), cases: [.init("heard", .failed(message))], time: elapsed()))
            try ReportFile.write(AuditPage.html(name: suiteName(choice), error: message, startedUnix: startedUnix), to: reportPath)
            throw ExitCode(1)
        }
        let name = AuditReport.suiteName(name: junitName, chosen: choice.identity, heard: result.beacon, address: address)
        let report = AuditReport(address: address, result: result, source: source, name: name)
        print(json ? report.json : report.text)
        try writeJUnit(report.suite)
        try ReportFile.write(AuditPage.html(report, series: result.series, configuredMs: interval, startedUnix: startedUnix),
                             to: reportPath)
        if report.verdict == "fail" { throw ExitCode(1) }
        if report.verdict == "inconclusive" && !allowInconclusive {
            Console.error("audit: not judged: " + report.rules.filter { $0.verdict == "inconclusive" }.map(\.name)
                .joined(separator: ", ") + (report.neededSeconds.map { "; listen for about \(Int($0)) s" } ?? "")
                + " (exit 3; --allow-inconclusive to pass)")
            throw ExitStatus.inconclusive
        }
    }

    /// The suite's name before anything was heard: `--name`, or what chose the advertiser.
    private func suiteName(_ choice: AuditChoice) -> String {
        AuditReport.suiteName(name: junitName, chosen: choice.identity, heard: nil, address: nil)
    }

    /// Writes `--junit`, if asked for.
    private func writeJUnit(_ suite: JUnitSuite) throws {
        guard let junit else { return }
        try JUnitFile.write(suite, to: junit)
    }

    /// Scans `device` passively, every report kept, for `duration` seconds or until a signal.
    private func listen(on device: DeviceSpecification, into collector: inout AuditCollector) throws(HostError) {
        let interrupt = SignalWatcher.install()
        var options = deviceOptions
        options.device = device
        let connection = try options.open(progress: { Console.error($0) })
        defer { connection.close() }
        if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
        let scanner = AdvertisementScanner(controller: connection.controller)
        scanner.log = { Console.error($0, priority: .warning) }
        try scanner.start(options: .init(controllerFiltersDuplicates: false), ownsController: connection.ownsController)
        defer { scanner.stop() }
        Console.error("audit: listening on \(connection.device) for \(duration) s")
        var heard = 0
        var next = 5.0
        try scanner.feed(duration: duration, interrupt: interrupt, handle: { timed in
            collector.add(timed.report, at: timed.elapsed)
            heard += 1
            return true
        }, tick: { elapsed in
            if elapsed >= next {
                Console.error("audit: \(Int(elapsed)) s, \(heard) reports")
                next += 5
            }
        })
    }
}

extension AuditProfile: ExpressibleByArgument {
    public init?(argument: String) { self.init(named: argument) }
    public static var allValueStrings: [String] { AuditProfile.all.map(\.name) }
}

/// `--junit FILE`: a JUnit suite written out, or the reason it could not be (exit 74).
enum JUnitFile {
    static func write(_ suite: JUnitSuite, to path: String) throws {
        do {
            try suite.xml.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Console.error("--junit \(path): cannot write the report: \(error.localizedDescription)")
            throw ExitStatus.ioError
        }
    }
}

/// `audit --list-rules`.
enum AuditRuleList {
    static var text: String {
        AuditRuleInfo.all.map { rule in
            "\(rule.name)\n  checks:   \(rule.checks)\n  verdicts: \(rule.verdicts)\n  source:   \(rule.source)\n"
                + "  profiles: " + rule.profiles.map(\.name).joined(separator: ", ")
        }.joined(separator: "\n")
    }
}
