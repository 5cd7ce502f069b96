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

/// `beacon-emit [advertise]`: turn the controller into one or more beacons until stopped.
struct Advertise: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertise beacons until SIGINT/SIGTERM or --duration, then turn advertising off.",
        discussion: """
            Describe one beacon with the beacon options, or several with repeated --beacon \
            KEY=VALUE,... (keys are the option names: uuid=...,major=1,minor=2; \
            type=altbeacon; url=https://...), or a JSON/YAML --config file with a 'beacons' list. \
            Several beacons get an extended advertising set each while the controller has sets; \
            the beacons beyond take turns (--rotation) on the last one. A --beacon or --config entry may \
            carry its own \(AnyBeaconSetting.helpList).

            On a kernel adapter, --access auto takes the kernel's management API (advertising instances \
            beside bluetoothd's, the address the kernel's choice) where it offers instances, raw HCI \
            otherwise or where the options need HCI-level control; user-channel takes the adapter from the \
            kernel while it runs. Everything a run would refuse whatever the controller is refused before \
            anything is sent (exit 64; --check stops there).

            While it runs, a controller reset, a Hardware Error, another program touching the beacons, the \
            adapter powered off, down or unplugged, or a link that drops costs one gap: the beacons are put \
            back once the adapter is usable (--fail-fast exits instead). At SIGINT, SIGTERM or --duration \
            advertising is turned off and the sets removed, then exit 0; --keep leaves it on for beacon-emit \
            stop. --control PATH takes live changes (beacon-emit control); --canary DEVICE proves the beacons \
            are heard.
            """ + guide("advertising.md") + HelpExamples.text("advertise")
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Beacon") var beacon: BeaconOptions

    @Option(name: .customLong("beacon"), help: ArgumentHelp("Another beacon, as KEY=VALUE,... (repeatable).",
                                                            valueName: "spec"))
    var beaconSpecifications: [String] = []

    @Option(help: ArgumentHelp("JSON or YAML file listing beacons.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp(
        "Advertise what a script of hcitool lines (hcitool -i hci0 cmd 0x08 0x0008 ...) sets up: its data, scan "
        + "response, interval, PDU type and random address, the way beacon-emit advertises (mgmt by default).",
        valueName: "file"))
    var hcitoolFile: String?

    @Option(help: ArgumentHelp("Advertising interval in ms; sent in 0.625 ms units.", valueName: "ms"))
    var interval: Double = 100

    @Flag(help: "Connectable advertising (ADV_IND) instead of non-connectable (ADV_NONCONN_IND).")
    var connectable = false

    @Option(help: ArgumentHelp("Advertise from a random address: 'static' or 'non-resolvable' (made up now) or "
                               + "AA:BB:CC:DD:EE:FF.",
                               valueName: "address"), transform: parsed(AdvertisingOptions.Address.init(randomAddress:)))
    var randomAddress: AdvertisingOptions.Address?

    @Option(parsing: .unconditional, help: ArgumentHelp("TX power in dBm, -127 to 20 (extended advertising).",
                                                        valueName: "dBm"))
    var txPower: Int?

    @Flag(help: "Use legacy advertising commands even where extended ones exist.")
    var legacy = false

    @Flag(help: "Use extended advertising commands (an advertising set with legacy PDUs).")
    var extended = false

    @Option(help: ArgumentHelp("The PHY: 1m, or coded (long range: extended PDUs on the LE Coded PHY, heard only by "
                               + "scanners that scan it, such as scan --phy coded).", valueName: "phy"))
    var phy: AdvertisingOptions.PHY = .le1M

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("With more beacons than sets, ms each beacon stays on the air.",
                               valueName: "ms"))
    var rotation: Double = 1000

    @Flag(help: "Leave advertising on when the program exits (set and forget).")
    var keep = false

    @OptionGroup var accessOptions: AccessOptions

    @Flag(help: ArgumentHelp(
        "Exit (status 69, or 74 for a closed link) when the adapter goes down, is powered off or goes away, "
        + "instead of waiting for it and putting the beacons back."))
    var failFast = false

    @Flag(help: ArgumentHelp(
        "At start, wait for a kernel adapter that is not there or not up yet, saying so, instead of exiting with "
        + "status 69 (the default under systemd, unless --fail-fast)."))
    var waitForAdapter = false

    @Flag(help: "Print events as JSON lines.")
    var json = false

    @Flag(help: "Only read the beacons (the options, --config) and say how many; advertise nothing (a configuration's check before it is installed).")
    var check = false

    @Option(help: ArgumentHelp(
        "Interleave an Eddystone-TLM frame with each Eddystone-UID or -URL beacon on its own set, one advertising "
        + "interval in ten, its counters moving (KEY=VALUE of --battery, --temperature, --pdu-count, --uptime).",
        valueName: "fields"))
    var interleaveTlm: String?

    @Option(help: ArgumentHelp(
        "Listen on this Unix socket (mode 0600, removed at exit) for JSON-line requests that add, remove, update, "
        + "list beacons and report status while advertising; see `beacon-emit control`.", valueName: "path"))
    var control: String?

    @Option(name: .customLong("control-group"), help: ArgumentHelp(
        "Give the --control socket to this group, mode 0660, so that its members (a login that runs `beacon-emit "
        + "control PATH --session`) may use it; the emitter must be a member.", valueName: "group"))
    var controlGroup: String?

    @Option(help: ArgumentHelp(
        "Serve Prometheus metrics at GET /metrics on this port (loopback) or ADDRESS:PORT (0.0.0.0:9464: every "
        + "interface): beacons on the air, disruptions and restore times, control requests, the canary, the process; "
        + "a configuration's 'metrics:' does the same.", valueName: "address:port"),
            transform: parsed(MetricsAddress.init(parsing:)))
    var metrics: MetricsAddress?

    @Option(help: ArgumentHelp(
        "Listen for the beacons on this second device while they advertise (another adapter, tcp:HOST:PORT, or "
        + "virtual with --device virtual): when each was last heard goes in the status, and a beacon not heard for "
        + "--canary-after is reprogrammed once and reported until it is heard again.", valueName: "device"),
            transform: parsed(DeviceSpecification.init(parsing:)))
    var canary: DeviceSpecification?

    @Option(help: ArgumentHelp(
        "With --canary, seconds a beacon may go unheard (default: ten intervals, at least 5 s, plus a round of "
        + "turns when beacons take turns).", valueName: "seconds"))
    var canaryAfter: Double?

    /// What `validate()` parsed (the beacons the options describe, the TLM frame to
    /// interleave), kept for `run()`: not an option, so the argument parser keeps its default
    /// and `validate()`'s change.
    private var parsedOnce: Parsed?

    /// The beacons of the options and each --beacon, and --interleave-tlm's frame, as parsed once.
    struct Parsed: Decodable {
        var described: [BeaconList.BeaconEntry]
        var interleaved: Beacon?

        init(described: [BeaconList.BeaconEntry], interleaved: Beacon?) {
            self.described = described
            self.interleaved = interleaved
        }

        /// Never decoded: the argument parser hands a plain property its default (nil).
        init(from decoder: any Decoder) throws {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "parsed by validate(), not decoded"))
        }
    }

    mutating func validate() throws {
        if hcitoolFile != nil {
            let others = [(!beacon.isEmpty || !beaconSpecifications.isEmpty || config != nil, "beacon options, --beacon or --config"),
                          (interval != 100, "--interval"), (connectable, "--connectable"),
                          (randomAddress != nil, "--random-address")]
            for (given, what) in others where given {
                throw ValidationError("--hcitool-file sets up the advertising itself: drop \(what)")
            }
        }
        if canaryAfter != nil && canary == nil { throw ValidationError("--canary-after needs --canary DEVICE") }
        if let canaryAfter, !(canaryAfter >= 1 && canaryAfter <= 86_400) {
            throw ValidationError("--canary-after must be from 1 to 86400 seconds, got \(canaryAfter)")
        }
        if let canary {
            // An adapter or a serial line is one controller; each connection to a virtual radio
            // (tcp:, virtual) is a device of its own.
            var sameController = canary == deviceOptions.specification
            if case .tcp = canary { sameController = false }
            if canary == .virtual { sameController = false }
            if sameController {
                throw ValidationError("--canary must be another device than --device: a controller does not hear its own "
                                      + "advertising")
            }
            if canary == .virtual && deviceOptions.specification != .virtual {
                throw ValidationError("--canary virtual needs --device virtual (a second device on its virtual radio); "
                                      + "otherwise name a second adapter or tcp:HOST:PORT")
            }
        }
        if legacy && extended { throw ValidationError("--legacy and --extended exclude each other") }
        if phy == .coded && legacy { throw ValidationError("--phy coded sends extended advertising: drop --legacy") }
        if controlGroup != nil && control == nil { throw ValidationError("--control-group needs --control PATH") }
        if metrics != nil && deviceOptions.specification == .virtual {
            throw ValidationError("--metrics does not go with --device virtual, which runs in a network namespace of its own "
                                  + "that no scraper reaches: use a controller, or tcp:HOST:PORT of a rootcanal of your own")
        }
        try accessOptions.check(deviceOptions.specification)
        if keep && accessOptions.access == .userChannel {
            throw ValidationError("--keep does not go with --access user-channel: the kernel takes the adapter back, "
                                  + "down, when beacon-emit exits; use --access mgmt (the default) or raw to keep beacons on")
        }
        guard let units = AdvertisingOptions.units(milliseconds: interval),
              AdvertisingOptions.intervalRange(legacy: legacy).contains(units) else {
            throw ValidationError("--interval must be from \(AdvertisingOptions.intervalRangeDescription(legacy: legacy)), "
                                  + "got \(interval)")
        }
        if let txPower, !(-127...20).contains(txPower) {
            throw ValidationError("--tx-power must be from -127 to 20 dBm, got \(txPower)")
        }
        try validateDuration(duration)
        if !(rotation >= 20 && rotation <= 3_600_000) {
            throw ValidationError("--rotation must be from 20 to 3600000 ms, got \(rotation)")
        }
        parsedOnce = Parsed(described: try describedBeacons(), interleaved: try interleavedFrame())
    }

    /// The TLM frame --interleave-tlm describes (`BeaconDescription.interleavedTelemetry`).
    func interleavedFrame() throws -> Beacon? {
        guard let interleaveTlm else { return nil }
        do {
            return try BeaconDescription.interleavedTelemetry(interleaveTlm)
        } catch {
            throw ValidationError("--interleave-tlm: \(error.message)")
        }
    }

    /// The beacons the options and each --beacon describe, in order (the --config file's come
    /// after them: `beacons()`). Parsing only: `validate()` calls it, once.
    /// - Throws: `ValidationError` naming the option, or when nothing describes a beacon.
    func describedBeacons() throws -> [BeaconList.BeaconEntry] {
        // `--layout NAME=LAYOUT` declares the name for --beacon layout=NAME and control requests.
        if let text = beacon.layout, case let (name?, layout)? = try? BeaconLayout.named(text) {
            try BeaconFormats.register(layout: layout, named: name)
        }
        var list: [BeaconList.BeaconEntry] = beacon.isEmpty ? [] : [(try beacon.makeBeacon(), .run)]
        for (index, specification) in beaconSpecifications.enumerated() {
            list += try BeaconList.beacons(fromSpecification: specification, label: "--beacon #\(index + 1)")
        }
        guard !list.isEmpty || config != nil || hcitoolFile != nil else {
            throw ValidationError("describe a beacon: --uuid UUID --major N --minor N (or --altbeacon, "
                                  + "--eddystone-uid, --eddystone-url URL, --eddystone-tlm), --beacon KEY=VALUE,..., "
                                  + "or --config FILE")
        }
        return list
    }

    /// Every beacon described, in order: the beacon options, each --beacon, the config file
    /// (read here, at start and at each reload, never in `validate()`).
    /// - Throws: `ValidationError` with the file's mistake at FILE:LINE:COLUMN.
    func beacons() throws -> [BeaconList.BeaconEntry] {
        try beaconsAndMetrics().entries
    }

    /// The beacons (`beacons()`) and the configuration's `metrics:` (nil: none), the file read once.
    private func beaconsAndMetrics() throws -> (entries: [BeaconList.BeaconEntry], metrics: String?) {
        let file = try config.map(BeaconList.configuration(fromFile:))
        return (try (parsedOnce?.described ?? describedBeacons()) + (file?.entries ?? []), file?.metrics)
    }

    func run() throws {
        let started = ContinuousClock.now
        Console.journal = JournalStream.isStandardError()
        let (options, scriptWarnings, metricsAddress) = try readOptions()
        do {
            try options.checkBeforeSending(access: accessOptions.access)
        } catch {
            Console.error(error.message)
            throw ExitStatus.usage
        }
        let beacons = options.beacons
        if check {
            print("\(hcitoolFile ?? config ?? "the options"): \(beacons.count) beacon\(beacons.count == 1 ? "" : "s"): valid")
            return
        }
        let interrupt = SignalWatcher.install()
        let printer = EmitterPrinter(json: json, verbose: deviceOptions.verbose, options: options)
        printer.service = ServiceNotifier()
        for warning in scriptWarnings { printer.handle(.warning(warning)) }
        for (index, beacon) in beacons.enumerated() where beacon.needsExtendedPDU {
            printer.handle(.warning("beacon \(index + 1): \(beacon.advertisingData.bytes.count) bytes go in extended "
                                    + "advertising PDUs: phones and apps that scan for legacy advertising will not see it"))
        }
        do {
            // Bound before advertising starts: a client that waits for "advertising on" finds it.
            let server = try openControl(printer: printer)
            defer { server?.close() }
            // Bound before anything is sent too: a port in use is an error now.
            let exporter = try MetricsExporter.open(metricsAddress, device: deviceOptions.specification, progress: printer.progress)
            defer { exporter?.endpoint.close() }
            guard waitForAdapterIfAsked(printer: printer, interrupt: interrupt) else { return }
            if deviceOptions.specification == .virtual {
                try VirtualController.enterPrivateNamespace(arguments: CommandLine.arguments, progress: printer.progress)
            }
            let configuration = BeaconAdvertisement.Configuration(device: deviceOptions.specification,
                                                                  access: accessOptions.access, bringUp: deviceOptions.up,
                                                                  options: options)
            let advertisement = try BeaconAdvertisement.start(configuration, started: started, opened: { hci, mgmt in
                printer.device = hci?.device.description ?? mgmt?.client.adapter ?? printer.device
                hci?.controller.reportUnsolicited = Console.ignored
                guard deviceOptions.verbose else { return }
                hci?.controller.trace = { printer.progress("  " + $0) }
                mgmt?.client.trace = { printer.progress("  " + $0) }
            }, report: printer.handle)
            for beacon in advertisement.live.running {
                if let address = beacon.ownAddress {
                    printer.progress("beacon \(beacon.id) advertises from \(address), an address of its own")
                }
            }
            if let connection = advertisement.connection, connection.virtualController != nil {
                try showVirtualRoundTrip(connection, expected: options.beacons, printer: printer)
            }
            let canarySource = try openCanary(advertisement, options: options, printer: printer)
            defer { canarySource?.close() }
            let (sources, report) = try openSources(advertisement.live, server: server, canary: canarySource, exporter: exporter,
                                                    options: options, device: advertisement.device, printer: printer)
            try advertisement.run(duration: runDuration, keep: keep, interrupt: interrupt, failFast: failFast,
                                  sources: sources, report: report)
        } catch {
            throw fail(error)
        }
    }

    /// The beacons and settings the options, a configuration or an hcitool script give, with
    /// the script's warnings and the metrics address; a mistake is said and its status thrown.
    private func readOptions() throws -> (options: AdvertisingOptions, warnings: [String], metrics: MetricsAddress?) {
        var options = AdvertisingOptions(
            beacons: [],
            intervalUnits: AdvertisingOptions.units(milliseconds: interval) ?? 160,
            connectable: connectable,
            address: randomAddress ?? .publicAddress,
            txPower: txPower.map { Int8($0) },
            mode: legacy ? .legacy : extended ? .extended : .automatic,
            rotationPeriod: .milliseconds(Int64(rotation)), phy: phy)
        var scriptWarnings: [String] = []
        var metricsAddress = metrics
        do {
            if let hcitoolFile {
                let scripted = try Self.scripted(hcitoolFile)
                options.beacons = scripted.options.beacons
                options.intervalUnits = scripted.options.intervalUnits
                options.connectable = scripted.options.connectable
                options.address = scripted.options.address
                scriptWarnings = scripted.warnings
            } else {
                let (entries, setting) = try beaconsAndMetrics()
                options.beacons = entries.map(\.beacon)
                options.beaconParameters = entries.map(\.parameters)
                metricsAddress = try self.metricsAddress(configured: setting)
            }
        } catch let error as UnreadableFile {
            Console.error(error.message)
            throw ExitStatus.ioError
        } catch let error as ConfigurationFileError {
            // The file's own mistake, at its place (65), or a file that cannot be read (74).
            Console.error(error.description)
            throw error.exitStatus
        } catch {
            // A beacon option's mistake: the options' usage would not help either.
            Console.error(BeaconOptions.message(for: error))
            throw ExitStatus.usage
        }
        return (options, scriptWarnings, metricsAddress)
    }

    /// What an hcitool script sets up (`AdvertisingOptions.from(hcitoolScript:file:)`).
    /// - Throws: `ValidationError` naming the file and what is wrong in it.
    static func scripted(_ path: String) throws -> (options: AdvertisingOptions, warnings: [String]) {
        // Read as a stream: a pipe (/dev/stdin) as well as a file.
        let handle: FileHandle
        do {
            handle = FileHandle(fileDescriptor: try FileSystem.openForReading(path, pipes: true), closeOnDealloc: true)
        } catch {
            throw UnreadableFile(message: "--hcitool-file \(path): cannot read the file: "
                                 + FileSystem.whyNotOpened(error, path: path, pipes: true))
        }
        defer { try? handle.close() }
        let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        do {
            return try AdvertisingOptions.from(hcitoolScript: try HcitoolScript(parsing: text), file: path)
        } catch let error as CodecError {
            throw ValidationError("--hcitool-file \(path): \(error)")
        } catch {
            throw ValidationError("--hcitool-file \(error)")
        }
    }

    /// Under a service manager (or with --wait-for-adapter), a kernel adapter that is not there
    /// or not up yet is waited for: the service is ready, its status says what it waits for.
    /// - Returns: false when a signal ended the wait.
    private func waitForAdapterIfAsked(printer: EmitterPrinter, interrupt: Int32) -> Bool {
        let device = deviceOptions.specification
        guard waitForAdapter || (printer.service != nil && !failFast) else { return true }
        let name: String
        switch device {
        case let .kernel(index): name = index.map { "hci\($0)" } ?? "an adapter"
        case let .adapter(address): name = "the adapter \(address)"
        default: return true
        }
        let waited = AdapterWait.untilUsable(
            device, bringingUp: deviceOptions.up, interrupt: interrupt,
            waiting: { missing in
                printer.device = name
                printer.notify("READY=1")
                printer.handle(.waiting(missing))
            },
            tick: { printer.notify("WATCHDOG=1") })
        if !waited { printer.handle(.stopped(reason: "stopped while waiting for the adapter", keptOn: false)) }
        return waited
    }

    private var runDuration: Duration? { duration.map { .milliseconds(Int64($0 * 1000)) } }

    /// The run loop's sources: with --control, the socket that changes the beacons while they
    /// advertise; for TLM beacons (or --interleave-tlm, or --control, which may add one), the
    /// telemetry that moves; and a report that keeps the control socket's status current.
    private func openSources(_ session: any LiveAdvertising, server: ControlServer?, canary: CanarySource?,
                             exporter: MetricsExporter?, options: AdvertisingOptions, device: String, printer: EmitterPrinter)
        throws(HostError) -> ([any RunLoopSource], (EmitterEvent) -> Void) {
        var report = printer.handle
        if let exporter {
            exporter.watch(session, server: server, canary: canary)
            report = { [report] event in
                report(event)
                exporter.metrics.note(event)
            }
        }
        if let server {
            let handler = ControlHandler(session: session)
            handler.device = device
            if let canary {
                handler.canary = (canary.device, { canary.states.map { ($0.lastHeard, $0.unheard) } })
            }
            server.attach(handler)
            handler.changed = { command, id, beacon in printer.controlChange(command, id: id, beacon: beacon) }
            if let exporter { handler.answered = exporter.noteControl }
            report = { [report] event in
                report(event)
                handler.note(event)
            }
        }
        if let canary {
            report = { [report] event in
                report(event)
                canary.note(event)
            }
            canary.report = report
        }
        var sources: [any RunLoopSource] = server.map { [$0] } ?? []
        if let canary { sources.append(canary) }
        if let exporter { sources.append(exporter.endpoint) }
        // TLM counters, rotating addresses, EIDs and interleaved telemetry: the beacons' motions,
        // on one schedule.
        let interleaving = parsedOnce?.interleaved ?? (try? interleavedFrame()) ?? nil
        sources.append(MotionSource(BeaconMotions(beacons: session, intervalUnits: options.intervalUnits,
                                                  interleaving: interleaving) { motion, text in
            switch motion {
            case let .content(name): printer.progress("\(name): " + text)
            case .address: printer.progress("moving: " + text)
            case .withheld: report(.withheld(text))
            }
        }))
        if let service = printer.service, let interval = service.watchdogInterval {
            sources.append(try WatchdogSource(notifier: service, interval: interval))
        }
        // SIGHUP reloads under systemd or with a configuration file to read again; otherwise it
        // keeps its usual meaning (the terminal went away: stop).
        if printer.service != nil || config != nil {
            sources.append(ReloadSource { [self] in reload(session, printer: printer) })
        }
        return (sources, report)
    }

    /// Reads the beacons again (the --config file) and changes advertising in place: changed
    /// beacons get new data on their sets, more are added, fewer removed. A configuration that
    /// does not read leaves the beacons as they were.
    private func reload(_ session: any LiveAdvertising, printer: EmitterPrinter) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        printer.notify("RELOADING=1", "MONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)")
        do {
            let entries = try beacons()
            let counts = try session.apply(entries.map(\.beacon), parameters: entries.map(\.parameters))
            printer.beacons = session.beacons
            printer.parameters = session.parameters
            printer.line("reloaded\(config.map { " " + $0 } ?? ""): \(counts.updated) changed in place, \(counts.added) added, "
                         + "\(counts.removed) removed; \(session.beacons.count) on the air", .notice)
        } catch let error as HostError {
            Console.error("reload: \(error.message); the beacons left are on the air")
        } catch {
            Console.error("reload: \(BeaconOptions.message(for: error)); the beacons stay as they were")
        }
        let count = session.beacons.count
        printer.notify("READY=1", ServiceNotifier.status("advertising \(count) beacon\(count == 1 ? "" : "s") on \(printer.device)"))
    }

    /// With --canary, the scanner on the second device, listening once the beacons are on the air.
    private func openCanary(_ advertisement: BeaconAdvertisement, options: AdvertisingOptions,
                            printer: EmitterPrinter) throws(HostError) -> CanarySource? {
        guard let canary else { return nil }
        let after = canaryAfter.map { Duration.milliseconds(Int64($0 * 1000)) }
            ?? CanaryWatch.defaultAfter(interval: .microseconds(Int64(options.intervalUnits) * 625),
                                        rotating: advertisement.plan?.rotating ?? false,
                                        beacons: options.beacons.count, rotation: options.rotationPeriod)
        let source = try CanarySource(device: canary, emitter: advertisement.connection,
                                      beacons: { [live = advertisement.live] in live.beacons }, after: after,
                                      log: printer.progress)
        printer.progress("canary: listening on \(source.device) for the beacons; a beacon not heard for "
                         + "\(EmitterPrinter.seconds(after)) s is reprogrammed once, then reported")
        return source
    }

    /// Where --metrics (or the configuration's `metrics:`, `configured`) asks for the endpoint;
    /// nil: nowhere.
    /// - Throws: `ConfigurationFileError` for a configuration's value that is no address.
    private func metricsAddress(configured: String?) throws -> MetricsAddress? {
        if let metrics { return metrics }
        guard let configured, let config else { return nil }
        do {
            return try MetricsAddress(parsing: configured)
        } catch {
            throw ConfigurationFileError(error: ScenarioError(file: config, place: nil, message: "metrics: \(error)"))
        }
    }

    /// With --control, its socket, bound; it answers once the beacons are on the air.
    private func openControl(printer: EmitterPrinter) throws(HostError) -> ControlServer? {
        guard let control else { return nil }
        do {
            let server = try ControlServer(path: control, group: controlGroup)
            printer.progress("control socket: \(control)\(controlGroup.map { ", group \($0)" } ?? "") "
                             + "(beacon-emit control \(control) list)")
            return server
        } catch {
            throw .unsupported(error.description)
        }
    }

    /// With `--device virtual`, a second device on the virtual radio scans and reports what arrived.
    private func showVirtualRoundTrip(_ connection: ControllerConnection, expected: [Beacon],
                                      printer: EmitterPrinter) throws(HostError) {
        let scanner = AdvertisementScanner(controller: try connection.openVirtualPeer())
        defer { scanner.close() }
        let enabled = ContinuousClock.now
        try scanner.start()
        let wanted = expected.map { $0.advertisingData.bytes }
        if let report = try scanner.firstReport(withData: wanted, within: .seconds(3)) {
            printer.received(report, after: enabled.duration(to: .now))
        } else {
            printer.progress("the virtual scanner saw nothing matching within 3 s")
        }
    }
}
extension AdvertisingOptions.PHY: ExpressibleByArgument {}
