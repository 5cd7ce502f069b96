// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import ArgumentParser
import BeaconHost
import BeaconMetrics
import BeaconReports
import BeaconRig
import BeaconTracking
import Foundation

/// `beacon-emit run SCENARIO`: a scripted test rig.
struct Run: ParsableCommand, ScenarioLaunching {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario: beacons advertised, changed in place and stopped on a timeline, checked by a second device.",
        discussion: """
            SCENARIO is a YAML or JSON file: 'beacons' (names to fields, the --beacon keys), \
            optional 'regions' (uuid, major, minor), 'device', 'scanner' (a device, or 'peer': \
            a second device on the same virtual radio), 'interval' (ms), 'exitAfter' (seconds, \
            default 30), 'rotation' (ms each, for beacons beyond the controller's sets, which \
            take turns), and 'steps': advertise, update, stop, wait, expect (seen / notSeen / \
            region state or event, within a time), repeat, ramp (TX power), replay (a capture's \
            advertisers, as beacon-emit replay puts them on the air). The whole file is \
            checked before anything starts. An update changes a beacon's data on its running \
            advertising set, with no gap on the air. Prints one line per step and per \
            expectation, then a summary; exits 1 when an expectation fails (advertising is off \
            by then). examples/ has scenarios for the classic app tests. A scenario with \
            'hosts' runs ssh here, with its options: run only files you would run as a script; \
            --check lists what a file starts on this machine.
            """ + guide("test-rigs.md") + HelpExamples.text("run")
    )

    @Argument(help: "The scenario file (YAML or JSON).")
    var scenario: String

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup var accessOptions: AccessOptions

    @Option(help: ArgumentHelp("The observing device, overriding the scenario's 'scanner' ('peer': a second device on the same virtual radio).",
                               valueName: "device"))
    var scanner: String?

    @Option(help: ArgumentHelp("Also write a JUnit XML report of the expectations to this file.", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Also write the run as one self-contained HTML page to this file: its timeline (beacons on the air, "
                               + "sightings, regions, phones, steps, disruptions, expectations) and the expectations' table.",
                               valueName: "file.html"))
    var report: String?

    @Flag(help: "Print events as JSON lines.")
    var json = false

    @Option(help: ArgumentHelp(
        "Serve Prometheus metrics at GET /metrics on this port (loopback) or ADDRESS:PORT while the scenario runs: "
        + "its beacons on the air, disruptions and restore times, the process (as advertise --metrics).",
        valueName: "address:port"), transform: parsed(MetricsAddress.init(parsing:)))
    var metrics: MetricsAddress?

    @Flag(help: ArgumentHelp("Let the scenario's hosts give any ssh option, not only -i, -p, -l and -o Port, User, IdentityFile, "
                             + "IdentitiesOnly, ConnectTimeout and ServerAlive*: some run or load a program on this machine "
                             + "(--check names them)."))
    var allowSshOptions = false

    @Flag(help: ArgumentHelp("Run the scenario's phone commands even when the file is not yours (or root's) or others "
                             + "can change it: a scenario's phones are shell commands, run as you (--check lists them)."))
    var allowCommands = false

    @Flag(help: "Only check the scenario (everything that is checked before a run), say what it holds and what it would run on this machine.")
    var check = false

    /// The JUnit suite's name: the scenario file's, without its extension.
    private var suiteName: String { URL(fileURLWithPath: scenario).deletingPathExtension().lastPathComponent }

    /// `--junit` (and `--report`) for a run that ended before any expectation: an error saying why.
    private func writeJUnitError(_ message: String) throws {
        try ReportFile.write(ScenarioReport.html(title: suiteName, error: message, startedUnix: Date().timeIntervalSince1970),
                             to: report)
        guard let junit else { return }
        try JUnitFile.write(.error(suite: suiteName, message), to: junit)
    }

    func run() throws {
        var loaded: Scenario
        do {
            loaded = try ScenarioParser.load(path: scenario, allowingAnySSHOption: allowSshOptions,
                                             commandsFor: check || allowCommands ? nil : CurrentProcess.effectiveUserID)
        } catch {
            Console.error("\(error)")
            try writeJUnitError("\(error)")
            throw error.unreadable ? ExitStatus.ioError : ExitStatus.dataError
        }
        if let scanner { loaded.scanner = scanner }
        if check {
            let hosts = loaded.hosts.isEmpty ? "" : ", \(loaded.hosts.count) host\(loaded.hosts.count == 1 ? "" : "s")"
            print("\(scenario): \(loaded.beacons.count) beacon\(loaded.beacons.count == 1 ? "" : "s"), "
                  + "\(loaded.steps.count) step\(loaded.steps.count == 1 ? "" : "s")\(hosts): valid")
            // A scenario is code: what it would start on this machine, for whoever reviews it.
            for program in loaded.localPrograms {
                print("\(scenario):\(program.place.map { "\($0.line):\($0.column):" } ?? "") \(program)")
            }
            return
        }
        let printer = ScenarioPrinter(json: json)
        let outcome: ScenarioOutcome
        do {
            outcome = try runScenario(loaded, printer: printer, metrics: metrics)
        } catch let error as RemoteBoxError {
            Console.error("\(error)")
            try writeJUnitError("\(error)")
            throw ExitCode(69)
        } catch let error as HostError {
            try writeJUnitError(error.message)
            throw fail(error)
        }
        printer.summary(outcome)
        // A run that holds an identity key (its beacons' identifiers computed here) writes its
        // report for its owner alone.
        try ReportFile.write(ScenarioReport.html(title: suiteName, outcome: outcome, startedUnix: printer.startedUnix), to: report,
                             ownerOnly: loaded.beacons.contains { $0.beacon.renewsAddressAsItMoves })
        if let junit {
            do {
                try JUnitReport.xml(suite: suiteName, outcome: outcome).write(toFile: junit, atomically: true, encoding: .utf8)
            } catch {
                Console.error("--junit \(junit): cannot write the report: \(error.localizedDescription)")
                throw ExitStatus.ioError
            }
        }
        if let error = outcome.error { throw fail(error) }
        if !outcome.passed { throw ExitCode.failure }
    }

}

/// A command that runs a scenario on this machine's device (`run`, `replay`): the device and
/// the way in, from its options.
protocol ScenarioLaunching {
    var deviceOptions: DeviceOptions { get }
    var accessOptions: AccessOptions { get }
}

extension ScenarioLaunching {
    /// Opens the device (and the scanner, and the boxes' sessions), runs the steps, closes them.
    /// - Parameter fitting: where the scenario depends on how many beacons can be on the air at
    ///   once (`replay`'s turns), whether each can have a TX power or an address of its own,
    ///   makes it anew for what the opened device can do, before anything is sent.
    /// - Parameter metrics: where to serve the run's Prometheus metrics (nil: nowhere); opened
    ///   first, so that a port in use stops the run before anything is sent.
    func runScenario(_ scenario: Scenario, printer: ScenarioPrinter, metrics: MetricsAddress? = nil,
                     fitting: ((BeaconAdvertisement) throws -> Scenario)? = nil) throws -> ScenarioOutcome {
        var scenario = scenario
        // The device's options: the option's device, else the scenario's (read where a device is used).
        func chosenDevice() throws(HostError) -> DeviceOptions {
            var options = deviceOptions
            if options.device == nil, let device = scenario.device {
                do {
                    options.device = try DeviceSpecification(parsing: device)
                } catch {
                    throw HostError.unsupported("device: \(error.description)")
                }
            }
            return options
        }
        let exporter = try metrics.flatMap { (address) throws(HostError) in
            try MetricsExporter.open(address, device: try chosenDevice().specification, progress: printer.progress)
        }
        defer { exporter?.endpoint.close() }
        let interrupt = SignalWatcher.install()
        // The boxes first: one that cannot be reached stops the run before anything is on the air.
        let boxes = try RemoteBoxes.open(scenario.hosts, progress: printer.progress)
        defer { RemoteBoxes.close(boxes.values) }
        guard scenario.hasLocalBeacons else {
            let scanner = try openScanner(scenario.scanner, beside: nil, device: nil)
            defer { scanner?.close() }
            return run(scenario, local: nil, boxes: boxes, scanner: scanner, interrupt: interrupt, printer: printer,
                       exporter: exporter)
        }
        let options = try chosenDevice()
        let specification = options.specification
        if specification == .virtual {
            // A way in that does not go with the device is refused before the namespace is entered.
            _ = try AdvertisingLaunch.resolve(accessOptions.access, device: specification)
            try VirtualController.enterPrivateNamespace(arguments: CommandLine.arguments, progress: printer.progress)
        }
        let trace: ((String) -> Void)? = deviceOptions.verbose ? { printer.progress("  " + $0) } : nil
        // The launch `advertise` goes through, with no beacons yet: each step to the trace, the
        // warnings to the progress, input nobody asked for to its count.
        let advertising = AdvertisingOptions(beacons: [], intervalUnits: scenario.intervalUnits,
                                         rotationPeriod: .milliseconds(Int64((scenario.rotation * 1000).rounded())))
        let advertisement = try BeaconAdvertisement.start(
            .init(device: specification, access: accessOptions.access, bringUp: options.up, options: advertising),
            opened: { connection, management in
                connection?.controller.trace = trace
                management?.client.trace = trace
            },
            report: { event in
                switch event {
                case let .step(text): trace?(text)
                case let .warning(text): printer.progress(text)
                case let .withheld(text): printer.progress("withheld: " + text)
                case let .ignored(what): Console.ignored(what)
                default: break
                }
            })
        let beacons = advertisement.stageRun()
        defer {
            beacons.close()
            advertisement.close()
        }
        printer.progress(advertisement.summary + (advertisement.access.map { " (--access \($0.rawValue))" } ?? ""))
        if let fitting { scenario = try fitting(advertisement) }
        let scanner = try openScanner(scenario.scanner, beside: advertisement.connection, device: specification)
        defer { scanner?.close() }
        let stage = SetStage(run: beacons, rotationPeriod: scenario.rotation, intervalUnits: scenario.intervalUnits)
        stage.note = printer.progress
        return run(scenario, local: stage, boxes: boxes, scanner: scanner, interrupt: interrupt, printer: printer,
                   exporter: exporter)
    }

    func run(_ scenario: Scenario, local: SetStage?, boxes: [String: RemoteBox], scanner: AdvertisementScanner?,
             interrupt: Int32?, printer: ScenarioPrinter, exporter: MetricsExporter? = nil) -> ScenarioOutcome {
        let stage: ScenarioStage
        if let local, boxes.isEmpty {
            stage = local
        } else {
            stage = HostedStage(local: local, boxes: boxes, hosts: scenario.beaconHosts, fieldsOf: BeaconDescription.fields(of:),
                                interrupt: interrupt)
        }
        var report = printer.handle
        if let exporter {
            // The stage's beacons, and what its supervisor reports.
            exporter.metrics.sample = { EmitterMetrics.Sample(beacons: local?.onAir.count ?? 0) }
            report = { event in
                if case let .supervision(happened, _, _, _) = event { exporter.metrics.note(happened) }
                printer.handle(event)
            }
        }
        // The phones' logs end the wait as their lines come, as the stage's descriptors do.
        let phones = scenario.phones.map(PhoneLog.init)
        return ScenarioRunner(scenario: scenario, stage: stage,
                       observer: LiveObserver(scanner: scanner, interrupt: interrupt,
                                              wake: { stage.wakeDescriptors + phones.flatMap(\.descriptors) },
                                              beside: exporter.map { [$0.endpoint] } ?? []),
                       makeBeacon: BeaconDescription.beacon(fromFields:parameters:), phones: phones, report: report).run()
    }

    /// The second device, scanning: `peer` is a second controller on the same virtual radio.
    func openScanner(_ text: String?, beside connection: ControllerConnection?,
                             device: DeviceSpecification?) throws(HostError) -> AdvertisementScanner? {
        guard let text else { return nil }
        let controller: HCIController
        var owned = true
        if text == "peer" {
            switch device {
            case .virtual:
                guard let connection else { throw .unsupported("scanner: peer needs the virtual device's radio") }
                controller = try connection.openVirtualPeer()
            case let .tcp(host, port)?:
                controller = try ControllerConnection.open(.tcp(host: host, port: port)).controller
            default:
                throw .unsupported("scanner: peer needs a virtual radio (device virtual or tcp:HOST:PORT to rootcanal); "
                                   + "name the scanning device instead (hci1)")
            }
        } else {
            let specification: DeviceSpecification
            do {
                specification = try DeviceSpecification(parsing: text)
            } catch {
                throw .unsupported("scanner: \(error.description)")
            }
            let scanning = try ControllerConnection.open(specification)
            controller = scanning.controller
            owned = scanning.ownsController
        }
        let scanner = AdvertisementScanner(controller: controller)
        scanner.log = { Console.error($0, priority: .warning) }
        do {
            try scanner.start(ownsController: owned)
        } catch {
            scanner.close()
            throw error
        }
        return scanner
    }
}

/// Prints a run's events: lines, or JSON lines.
final class ScenarioPrinter {
    let json: Bool
    let startedUnix = Date().timeIntervalSince1970

    init(json: Bool) {
        self.json = json
    }

    func progress(_ text: String) {
        Console.error(text)
    }

    func handle(_ event: ScenarioEvent) {
        switch event {
        case let .step(number, round, place, text, at): printStep(number, round, place, text, at)
        case let .expectation(result): printExpectation(result)
        case let .updateArrived(beacon, at, afterUpdate, gap): printUpdateArrived(beacon, at, afterUpdate, gap)
        case let .applied(number, round, hosts, at): printApplied(number, round, hosts, at)
        case let .supervision(event, number, round, at): printSupervision(event, number, round, at)
        case let .region(name, event): printRegion(name, event)
        case let .phone(line): printPhoneLine(line)
        }
        fflushStandardOutput()
    }

    /// A step as it starts.
    private func printStep(_ number: String, _ round: String?, _ place: Scenario.Place, _ text: String, _ at: Double) {
        if json {
            line(at) { object in
                object.add("event", literal: "step")
                object.add("step", number)
                if let round { object.add("round", round) }
                object.add("line", place.line)
                object.add("action", text)
            }
        } else {
            // (A plan's steps, replay's, have no line of a file.)
            print("\(prefix(at)) step \(number)\(round.map { " (round \($0))" } ?? "")"
                  + (place.line > 0 ? " line \(place.line)" : "") + ": \(text)")
        }
    }

    /// An expectation judged.
    private func printExpectation(_ result: ScenarioResult) {
        if json {
            line(result.ended) { object in
                object.add("event", literal: "expectation")
                object.add("step", result.number)
                if let round = result.round { object.add("round", round) }
                object.add("line", result.place.line)
                object.add("expectation", result.text)
                object.add("result", literal: result.passed ? "pass" : "fail")
                object.add("detail", result.detail)
                if let phone = result.phone {
                    object.add("phone", phone.phone)
                    object.add("region", phone.region)
                    if let logLine = phone.logLine { object.add("logLine", logLine) } else { object.addNull("logLine") }
                    if let latency = phone.latency { object.add("latencyMs", Int((latency * 1000).rounded())) } else { object.addNull("latencyMs") }
                }
            }
        } else {
            print("\(prefix(result.ended)) \(result.passed ? "PASS" : "FAIL") step \(result.number) line \(result.place.line): "
                  + "\(result.text): \(result.detail)")
        }
    }

    /// An update heard at the scanner.
    private func printUpdateArrived(_ beacon: String, _ at: Double, _ afterUpdate: Double, _ gap: Double?) {
        if json {
            line(at) { object in
                object.add("event", literal: "update-arrived")
                object.add("beacon", beacon)
                object.add("afterUpdateMs", Int((afterUpdate * 1000).rounded()))
                if let gap { object.add("gapMs", Int((gap * 1000).rounded())) } else { object.addNull("gapMs") }
            }
        } else {
            print("\(prefix(at)) \(beacon): new data at the scanner \(Int((afterUpdate * 1000).rounded())) ms after the update"
                  + (gap.map { "; \(Int(($0 * 1000).rounded())) ms after the last old data" } ?? ""))
        }
    }

    /// A step applied on other machines.
    private func printApplied(_ number: String, _ round: String?, _ hosts: [(host: String, seconds: Double)], _ at: Double) {
        let last = hosts.map(\.seconds).max() ?? 0
        if json {
            line(at) { object in
                object.add("event", literal: "applied")
                object.add("step", number)
                if let round { object.add("round", round) }
                object.add("hosts", objects: hosts) { entry, item in
                    item.add("host", entry.host)
                    item.add("ms", number: String(format: "%.1f", entry.seconds * 1000))
                }
                object.add("lastMs", number: String(format: "%.1f", last * 1000))
            }
        } else {
            print("\(prefix(at)) step \(number)\(round.map { " (round \($0))" } ?? "") applied: "
                  + hosts.map { "\($0.host) \(String(format: "%.1f", $0.seconds * 1000)) ms" }.joined(separator: ", "))
        }
    }

    /// What the supervision reported.
    private func printSupervision(_ event: EmitterEvent, _ number: String, _ round: String?, _ at: Double) {
        guard let text = ScenarioRunner.text(event) else { return }
        if json {
            line(at) { object in
                switch event {
                case let .offAir(disruption):
                    object.add("event", literal: "off-air")
                    object.add("cause", disruption.code)
                case let .restored(cause, gap, _):
                    object.add("event", literal: "restored")
                    object.add("cause", cause.code)
                    object.add("gapMs", Int((gap.inSeconds * 1000).rounded()))
                case .waiting: object.add("event", literal: "waiting")
                case .restoreFailed: object.add("event", literal: "restore-failed")
                default: object.add("event", literal: "warning")
                }
                object.add("step", number)
                if let round { object.add("round", round) }
                object.add("detail", text)
            }
        } else {
            print("\(prefix(at)) step \(number)\(round.map { " (round \($0))" } ?? ""): \(text)")
        }
    }

    /// A line of a phone's log: every one in JSON (one timeline of rig and app); in text, those
    /// the phone's patterns matched.
    private func printPhoneLine(_ phoneLine: PhoneLine) {
        if json {
            line(phoneLine.at) { object in
                object.add("event", literal: "phone")
                object.add("phone", phoneLine.phone)
                object.add("logLine", phoneLine.text)
                if let transition = phoneLine.transition { object.add("says", transition.rawValue) }
                if let region = phoneLine.region { object.add("region", region) }
            }
        } else if let transition = phoneLine.transition {
            print("\(prefix(phoneLine.at)) phone \(phoneLine.phone): \(transition.rawValue)"
                  + (phoneLine.region.map { " \($0)" } ?? "") + ": \(phoneLine.text)")
        }
    }

    /// A region's change.
    private func printRegion(_ name: String, _ event: RegionMonitor.Event) {
        let (state, at): (String, Double) = switch event {
        case let .initialState(state, at): ("initial state \(state.rawValue)", at)
        case let .enter(at): ("enter", at)
        case let .exit(at): ("exit", at)
        }
        if json {
            line(at) { object in
                object.add("event", literal: "region")
                object.add("region", name)
                object.add("state", state)
            }
        } else {
            print("\(prefix(at)) region \(name): \(state)")
        }
    }

    func summary(_ outcome: ScenarioOutcome) {
        let passed = outcome.results.count - outcome.failures
        let ending = outcome.error.map { "ended by an error: \($0)" } ?? (outcome.interrupted ? "interrupted by a signal" : nil)
        if json {
            line(outcome.duration) { object in
                object.add("event", literal: "summary")
                object.add("expectations", outcome.results.count)
                object.add("passed", passed)
                object.add("failed", outcome.failures)
                object.add("result", literal: outcome.passed ? "pass" : "fail")
                if let ending { object.add("ended", ending) }
            }
        } else {
            print("\(outcome.results.count) expectation\(outcome.results.count == 1 ? "" : "s"): \(passed) passed, "
                  + "\(outcome.failures) failed, in \(String(format: "%.1f", outcome.duration)) s"
                  + (ending.map { "; \($0)" } ?? ""))
        }
        fflushStandardOutput()
    }

    private func prefix(_ at: Double) -> String {
        "\(Timestamp.iso8601(startedUnix + at)) +\(String(format: "%.3f", at))s"
    }

    private func line(_ at: Double, _ fill: (inout JSONObject) -> Void) {
        var object = JSONObject()
        fill(&object)
        object.add("at", number: String(format: "%.3f", at))
        object.add("timestamp", timestamp: startedUnix + at)
        print(object.line)
    }
}
