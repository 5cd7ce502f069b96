// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem
import Yams


/// Reads a scenario from YAML or JSON (JSON is YAML), checking all of it before anything runs:
/// unknown keys, wrong types, beacons and regions that are not declared, fields that do not
/// make a beacon (after each update too), advertising a beacon already on the air, stopping
/// one that is not, and expectations without a scanner.
public struct ScenarioParser {
    let file: String
    let mode: UInt32?
    /// Whether a host may give any ssh option (`run --allow-ssh-options`), not only those
    /// `SSHOptionPolicy` takes.
    public var allowsAnySSHOption = false
    /// The file's `layouts:` (an app's android-beacon-library layouts, by name), which a
    /// beacon's `layout:` names.
    var layouts: [String: String] = [:]
    let makeBeacon: BeaconFactory

    /// - Parameters:
    ///   - file: how messages name the file, and where a relative `identity-key-file` is found.
    ///   - mode: the file's permission bits, where it was read from a file: one others can read
    ///     holds no identity key of its own (`identity-key-file` names one).
    ///   - makeBeacon: builds a beacon from its fields (the command line's own reader).
    public init(file: String, mode: UInt32?, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:)) {
        self.file = file
        self.mode = mode
        self.makeBeacon = makeBeacon
    }

    /// A reader of text that came from no file of its own (its mode unknown).
    public init(file: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:)) {
        self.init(file: file, mode: nil, makeBeacon: makeBeacon)
    }

    /// The largest file read (scenarios and configuration files alike): far more than any
    /// list of beacons needs, and little enough that reading it costs nothing.
    public static let maximumFileSize = 1 << 20
    /// The most values a document may hold once its aliases are followed: a YAML file of
    /// nested aliases (a few hundred bytes) could otherwise stand for billions.
    public static let maximumValues = 20_000

    /// Reads and checks the file at `path`.
    /// - Parameter commandsFor: the user who would run the scenario's phone commands (nil: no
    ///   one yet: `run --check`, `--allow-commands`): a file with phones is refused unless that
    ///   user or root owns it and no one else can write it (`commandsRefusal`).
    public static func load(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:),
                            allowingAnySSHOption: Bool = false, commandsFor user: UInt32? = nil) throws(ScenarioError) -> Scenario {
        let (text, mode, owner) = try readFile(path)
        var parser = ScenarioParser(file: path, mode: mode, makeBeacon: makeBeacon)
        parser.allowsAnySSHOption = allowingAnySSHOption
        let scenario = try parser.parse(text)
        try declare(scenario.layouts, path)
        if let user, !scenario.phones.isEmpty, let why = commandsRefusal(path: path, mode: mode, owner: owner, user: user) {
            throw ScenarioError(file: path, place: nil, message: why)
        }
        return scenario
    }

    /// Why the phone commands of the scenario at `path` may not run as `user`, nil when they
    /// may: a scenario's phones are shell commands, so, as sudo and OpenSSH decide for the
    /// files they act on, it runs them only when `user` or root owns the file and no one else
    /// (group or others) can write it; `run --allow-commands` runs them anyway.
    static func commandsRefusal(path: String, mode: UInt32?, owner: UInt32, user: UInt32) -> String? {
        let trusted = owner == user || owner == 0
        let writable = (mode ?? 0) & 0o022 != 0
        guard !trusted || writable else { return nil }
        let who = trusted ? "other users can change it (mode \(FileSystem.octalMode(mode ?? 0)))"
            : "it belongs to \(FileSystem.userName(owner)), not to you (\(FileSystem.userName(user))) or root"
        return "its phones' commands would run as \(FileSystem.userName(user)), but \(who): refused before anything "
            + "starts; `run --check` lists what it would run, and `run --allow-commands` runs it"
    }

    /// Reads the beacon list of a configuration file (`--config`, a service's
    /// `/etc/beacon-emit/NAME.yaml`): `beacons:`, a list of maps of beacon fields, each checked
    /// as a scenario's beacons are.
    public static func loadBeaconList(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:))
        throws(ScenarioError) -> [Beacon] {
        try loadBeaconEntries(path: path, makeBeacon: makeBeacon).map(\.beacon)
    }

    /// Reads the beacon list of a configuration file with each beacon's own interval and TX
    /// power (`interval`, `txPower` beside its fields; `.run` where it has none).
    public static func loadBeaconEntries(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:))
        throws(ScenarioError) -> [(beacon: Beacon, parameters: BeaconParameters)] {
        try loadConfiguration(path: path, makeBeacon: makeBeacon).entries
    }

    /// A configuration file read once: its beacons, each with its own parameters, and its
    /// `metrics:` (where the emitter serves its Prometheus metrics: `PORT` or `ADDRESS:PORT`,
    /// as written; nil where it has none).
    public static func loadConfiguration(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:))
        throws(ScenarioError) -> (entries: [(beacon: Beacon, parameters: BeaconParameters)], metrics: String?) {
        let (text, mode, _) = try readFile(path)
        let parser = ScenarioParser(file: path, mode: mode, makeBeacon: makeBeacon)
        let configuration = try parser.configuration(text)
        try declare(configuration.layouts, path)
        return (configuration.entries, configuration.metrics)
    }

    /// Declares a file's `layouts:` by their names (`BeaconFormats.register(layout:named:)`),
    /// so that a control request names them as the file does (`layout: acme`).
    static func declare(_ layouts: [String: String], _ path: String) throws(ScenarioError) {
        for (name, text) in layouts.sorted(by: { $0.key < $1.key }) {
            do {
                try BeaconFormats.register(layout: try BeaconLayout(parsing: text), named: name)
            } catch {
                throw ScenarioError(file: path, place: nil, message: "layouts: \(name): \(error)")
            }
        }
    }

    /// A file's text, refused when larger than `maximumFileSize`, or when others may change it.
    public static func readText(_ path: String) throws(ScenarioError) -> String {
        try readFile(path).text
    }

    /// A file's text, its permission bits (nil where it is no regular file: a pipe) and its owner, read
    /// through one descriptor. Refused before it is read when it is larger than
    /// `maximumFileSize`, or when others may write it (o+w: anyone on the machine could change
    /// what it advertises, as sudo and sshd's StrictModes refuse such files).
    public static func readFile(_ path: String) throws(ScenarioError) -> (text: String, mode: UInt32?, owner: UInt32) {
        let handle: FileHandle
        do {
            // A regular file, or a pipe named on the command line (`--config <(...)`); a device,
            // a socket or a directory is refused before a byte is read.
            handle = FileHandle(fileDescriptor: try FileSystem.openForReading(path, pipes: true), closeOnDealloc: true)
        } catch {
            throw ScenarioError(file: path, place: nil, message: "cannot read the file: "
                                + FileSystem.whyNotOpened(error, path: path, pipes: true), unreadable: true)
        }
        defer { try? handle.close() }
        let status = FileSystem.mode(of: handle.fileDescriptor)
        let mode = status.flatMap { $0.regularFile ? $0.mode : nil }
        let owner = status?.owner ?? CurrentProcess.userID
        if let mode, mode & 0o002 != 0 {
            throw ScenarioError(file: path, place: nil, message: "other users can change the file (mode "
                                + "\(FileSystem.octalMode(mode))): refused, as anyone on this machine could change what it "
                                + "does; run `chmod o-w \(path)`")
        }
        guard let data = try? handle.read(upToCount: maximumFileSize + 1) ?? Data() else {
            throw ScenarioError(file: path, place: nil, message: "cannot read the file: "
                                + (FileSystem.whyUnreadable(path) ?? "reading it failed"), unreadable: true)
        }
        guard data.count <= maximumFileSize else {
            throw ScenarioError(file: path, place: nil, message: "the file is larger than \(maximumFileSize / 1024) KiB "
                                + "(1 MiB), the most read: a list of beacons needs far less")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ScenarioError(file: path, place: nil, message: "the file is not UTF-8 text")
        }
        return (text, mode, owner)
    }

    /// The document's root node: refused when it nests deeper than `YAMLNesting.maximumDepth` or
    /// holds more than `maximumValues` values, its aliases (*name) followed: both measured on the
    /// parser's events before any tree is built, so that nothing larger is ever composed.
    func document(_ text: String, empty: String) throws(ScenarioError) -> Node {
        switch YAMLNesting.measure(text, depth: YAMLNesting.maximumDepth, values: Self.maximumValues) {
        case nil:
            break
        case let .tooDeep(place, throughAlias):
            throw ScenarioError(file: file, place: place, message: Self.tooDeep(throughAlias ? " once its aliases (*name) are followed" : ""))
        case let .tooManyValues(place):
            throw ScenarioError(file: file, place: place, message: "the document holds more than \(Self.maximumValues) values "
                                + "once its aliases (*name) are followed: refused (aliases that repeat one another make a small "
                                + "file stand for billions)")
        }
        do {
            guard let node = try Yams.compose(yaml: text) else { throw fail(nil, empty) }
            return node
        } catch let error as ScenarioError {
            throw error
        } catch let error as YamlError {
            throw yamlError(error)
        } catch {
            throw fail(nil, "not YAML or JSON: \(error)")
        }
    }

    static func tooDeep(_ when: String) -> String {
        "lists and maps nest more than \(YAMLNesting.maximumDepth) deep here\(when): refused (a beacon list needs 3 levels, "
            + "a scenario 6)"
    }

    /// Parses and checks a scenario.
    public func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let root = try document(text, empty: "the file is empty: expected a map with 'beacons' and 'steps'")
        let top = try mapping(root, "the scenario", keys: ["device", "scanner", "interval", "exitAfter", "rotation",
                                                           "hosts", "beacons", "regions", "phones", "steps", "layouts"])
        var reader = self
        reader.layouts = try layouts(top["layouts"])
        var scenario = try reader.parse(top, root: root)
        scenario.layouts = reader.layouts
        return scenario
    }

    /// The scenario's parts, its layouts read.
    private func parse(_ top: Entries, root: Node) throws(ScenarioError) -> Scenario {
        var scenario = Scenario(beacons: [], steps: [])
        if let node = top["device"] { scenario.device = try string(node, "device") }
        if let node = top["scanner"] { scenario.scanner = try string(node, "scanner") }
        if let node = top["interval"] {
            let milliseconds = try number(node, "interval (ms)")
            guard let units = AdvertisingOptions.units(milliseconds: milliseconds),
                  AdvertisingOptions.intervalRange(legacy: false).contains(units) else {
                throw fail(node, "interval must be from \(AdvertisingOptions.intervalRangeDescription(legacy: false)), "
                           + "got \(milliseconds)")
            }
            scenario.intervalUnits = units
        }
        if let node = top["exitAfter"] {
            scenario.exitAfter = try seconds(node, "exitAfter")
        }
        if let node = top["rotation"] {
            let milliseconds = try number(node, "rotation (ms)")
            guard milliseconds >= 20 && milliseconds <= 3_600_000 else {
                throw fail(node, "rotation must be from 20 to 3600000 ms, got \(milliseconds)")
            }
            scenario.rotation = milliseconds / 1000
        }
        guard let beaconsNode = top["beacons"] else { throw fail(root, "expected 'beacons': a map of names to beacon fields") }
        let beacons = try mapping(beaconsNode, "beacons", keys: nil)
        guard !beacons.entries.isEmpty else { throw fail(beaconsNode, "'beacons' is empty: name at least one beacon") }
        if let node = top["hosts"] {
            for (name, hostNode) in try mapping(node, "hosts", keys: nil).entries {
                let (definition, programs) = try host(hostNode, name)
                scenario.hosts.append(definition)
                scenario.localPrograms += programs
            }
        }
        for (name, node) in beacons.entries {
            var fields = try beaconFields(node, "beacon '\(name)'", crowds: true)
            let host = fields.removeValue(forKey: "host")
            if let host, scenario.host(named: host) == nil {
                let hostNode = (try? mapping(node, "beacon", keys: nil))?["host"]
                throw fail(hostNode ?? node, "beacon '\(name)': no host named '\(host)' (declare it under 'hosts')"
                           + known(scenario.hosts.map(\.name)))
            }
            // A range for major or minor (minor: 1-24) makes a crowd: a beacon per value, named
            // NAME-VALUE, and NAME in advertise and stop for them all.
            let ordered = fields.sorted { $0.key < $1.key }
            let members: [[(key: String, value: String)]]
            do {
                members = try BeaconDescription.crowd(ordered)
            } catch {
                throw fail(node, "beacon '\(name)': \(error.message)")
            }
            // The keys given as ranges: each member has a number there instead.
            let ranged = ordered.indices.filter { ordered[$0].value != members[0][$0].value }
            var names: [String] = []
            for member in members {
                let memberName = ranged.isEmpty ? name : ([name] + ranged.map { member[$0].value }).joined(separator: "-")
                let memberFields = Dictionary(member.map { ($0.key, $0.value) }) { $1 }
                if scenario.beacon(named: memberName) != nil || (memberName != name && beacons.entries.contains { $0.0 == memberName }) {
                    throw fail(node, "beacon '\(name)': its member '\(memberName)' has the name of another beacon")
                }
                let (data, parameters) = try split(memberFields, node, "beacon '\(memberName)'")
                scenario.beacons.append(Scenario.BeaconDefinition(name: memberName, fields: memberFields,
                                                                  beacon: try beacon(data, parameters, node, "beacon '\(memberName)'"),
                                                                  parameters: parameters, host: host))
                names.append(memberName)
            }
            if !ranged.isEmpty { scenario.crowds[name] = names }
            guard scenario.beacons.count <= AdvertisingOptions.maximumBeacons else {
                throw fail(node, "beacon '\(name)': the scenario's beacons come to \(scenario.beacons.count) with its crowds: "
                           + "an emitter carries at most \(AdvertisingOptions.maximumBeacons)")
            }
        }
        if let node = top["regions"] {
            for (name, regionNode) in try mapping(node, "regions", keys: nil).entries {
                scenario.regions.append(try region(regionNode, name))
            }
        }
        if let node = top["phones"] {
            for (name, phoneNode) in try mapping(node, "phones", keys: nil).entries {
                let phone = try phone(phoneNode, name)
                scenario.phones.append(phone)
                scenario.localPrograms.append(LocalProgram(host: name, place: phone.place, what: "sh -c '\(phone.command)' (its log)",
                                                           kind: "phone"))
            }
        }
        guard let stepsNode = top["steps"] else { throw fail(root, "expected 'steps': a list of steps") }
        scenario.steps = try steps(stepsNode, scenario: &scenario)
        guard !scenario.steps.isEmpty else { throw fail(stepsNode, "'steps' is empty") }
        try check(scenario, root: root)
        return scenario
    }

    /// Walks the timeline once (a repeated block twice where its first pass changed what is on
    /// the air or a beacon's fields, which is enough: an update sets values, so a second pass
    /// ends where a third would; where the first pass changed nothing, a second would repeat it
    /// exactly), checking what depends on order. Nested repeats cost a walk per level, not two:
    /// linear in the file, and bounded by `maximumStepVisits` whatever the nesting.
    func check(_ scenario: Scenario, root: Node) throws(ScenarioError) {
        if scenario.expectsAnything && scenario.scanner == nil {
            throw fail(root, "the steps expect what is seen, so the scenario needs 'scanner:' (a device, or 'peer' for a "
                       + "second device on a virtual radio); or give --scanner")
        }
        var fields = Dictionary(uniqueKeysWithValues: scenario.beacons.map { ($0.name, $0.fields) })
        var onAir = Set<String>()
        var visits = 0
        func walk(_ steps: [Scenario.Step]) throws(ScenarioError) {
            for step in steps {
                let at = step.place
                visits += 1
                guard visits <= Self.maximumStepVisits else {
                    throw ScenarioError(file: file, place: at, message: "checking the steps visits more than "
                                        + "\(Self.maximumStepVisits) of them here (repeats within repeats): refused")
                }
                switch step.action {
                case let .advertise(names):
                    for name in names where onAir.contains(name) {
                        throw ScenarioError(file: file, place: at, message: "'\(name)' is already on the air here")
                    }
                    onAir.formUnion(names)
                case let .stop(names):
                    for name in names ?? [] where !onAir.contains(name) {
                        throw ScenarioError(file: file, place: at, message: "'\(name)' is not on the air here")
                    }
                    if let names { onAir.subtract(names) } else { onAir.removeAll() }
                case let .update(name, changes):
                    var merged = fields[name] ?? [:]
                    merged.merge(changes) { $1 }
                    do {
                        let (data, parameters) = try BeaconDescription.parameters(in: merged)
                        _ = try makeBeacon(data, parameters)
                    } catch {
                        throw ScenarioError(file: file, place: at, message: "update of '\(name)': \(error)")
                    }
                    fields[name] = merged
                case let .ramp(name, _, _, _, _):
                    guard onAir.contains(name) else {
                        throw ScenarioError(file: file, place: at, message: "ramp: '\(name)' is not on the air here")
                    }
                    if let host = scenario.beacon(named: name)?.host {
                        throw ScenarioError(file: file, place: at, message: "ramp: '\(name)' is on host \(host), whose "
                                            + "control socket changes beacons, not TX power: ramp a beacon of this machine's")
                    }
                case let .repeatSteps(times, inner):
                    let (airBefore, fieldsBefore) = (onAir, fields)
                    try walk(inner)
                    if times > 1 && (onAir != airBefore || fields != fieldsBefore) { try walk(inner) }
                case .wait, .expectSeen, .expectNotSeen, .expectRegion, .expectPhone:
                    break
                }
            }
        }
        try walk(scenario.steps)
    }
}
