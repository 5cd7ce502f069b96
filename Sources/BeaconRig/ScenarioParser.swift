// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem
import Yams

/// Why a scenario file was refused: where (`FILE:LINE:COLUMN`, as compilers say it) and what
/// was expected there.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var place: Scenario.Place?
    public var message: String
    /// The file could not be read at all (no such file, no permission): the environment's
    /// fault, not the file's (exit 74, where a mistake in it is 65).
    public var unreadable = false

    public init(file: String, place: Scenario.Place?, message: String, unreadable: Bool = false) {
        self.file = file
        self.place = place
        self.message = message
        self.unreadable = unreadable
    }

    public var description: String {
        (place.map { "\(file):\($0.line):\($0.column): " } ?? "\(file): ") + message
    }
}

/// Reads a scenario from YAML or JSON (JSON is YAML), checking all of it before anything runs:
/// unknown keys, wrong types, beacons and regions that are not declared, fields that do not
/// make a beacon (after each update too), advertising a beacon already on the air, stopping
/// one that is not, and expectations without a scanner.
public struct ScenarioParser {
    private let file: String
    private let mode: UInt32?
    /// Whether a host may give any ssh option (`run --allow-ssh-options`), not only those
    /// `SSHOptionPolicy` takes.
    public var allowsAnySSHOption = false
    private let makeBeacon: BeaconFactory

    /// - Parameters:
    ///   - file: how messages name the file, and where a relative `identity-key-file` is found.
    ///   - mode: the file's permission bits, where it was read from a file: one others can read
    ///     holds no identity key of its own (`identity-key-file` names one).
    ///   - makeBeacon: builds a beacon from its fields (the command line's own reader).
    public init(file: String, mode: UInt32?, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:)) {
        self.file = file
        self.mode = mode
        self.makeBeacon = makeBeacon
    }

    /// A reader of text that came from no file of its own (its mode unknown).
    public init(file: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:)) {
        self.init(file: file, mode: nil, makeBeacon: makeBeacon)
    }

    /// The largest file read (scenarios and configuration files alike): far more than any
    /// list of beacons needs, and little enough that reading it costs nothing.
    public static let maximumFileSize = 1 << 20
    /// The most values a document may hold once its aliases are followed: a YAML file of
    /// nested aliases (a few hundred bytes) could otherwise stand for billions.
    public static let maximumValues = 20_000

    /// Reads and checks the file at `path`.
    public static func load(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:),
                            allowingAnySSHOption: Bool = false) throws(ScenarioError) -> Scenario {
        let (text, mode) = try readFile(path)
        var parser = ScenarioParser(file: path, mode: mode, makeBeacon: makeBeacon)
        parser.allowsAnySSHOption = allowingAnySSHOption
        return try parser.parse(text)
    }

    /// Reads the beacon list of a configuration file (`--config`, a service's
    /// `/etc/beacon-emit/NAME.yaml`): `beacons:`, a list of maps of beacon fields, each checked
    /// as a scenario's beacons are.
    public static func loadBeaconList(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:))
        throws(ScenarioError) -> [Beacon] {
        try loadBeaconEntries(path: path, makeBeacon: makeBeacon).map(\.beacon)
    }

    /// Reads the beacon list of a configuration file with each beacon's own interval and TX
    /// power (`interval`, `txPower` beside its fields; `.run` where it has none).
    public static func loadBeaconEntries(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:))
        throws(ScenarioError) -> [(beacon: Beacon, parameters: BeaconParameters)] {
        try loadConfiguration(path: path, makeBeacon: makeBeacon).entries
    }

    /// A configuration file read once: its beacons, each with its own parameters, and its
    /// `metrics:` (where the emitter serves its Prometheus metrics: `PORT` or `ADDRESS:PORT`,
    /// as written; nil where it has none).
    public static func loadConfiguration(path: String, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:))
        throws(ScenarioError) -> (entries: [(beacon: Beacon, parameters: BeaconParameters)], metrics: String?) {
        let (text, mode) = try readFile(path)
        return try ScenarioParser(file: path, mode: mode, makeBeacon: makeBeacon).configuration(text)
    }

    /// A file's text, refused when larger than `maximumFileSize`, or when others may change it.
    public static func readText(_ path: String) throws(ScenarioError) -> String {
        try readFile(path).text
    }

    /// A file's text and its permission bits (nil where it is no regular file: a pipe), read
    /// through one descriptor. Refused before it is read when it is larger than
    /// `maximumFileSize`, or when others may write it (o+w: anyone on the machine could change
    /// what it advertises, as sudo and sshd's StrictModes refuse such files).
    public static func readFile(_ path: String) throws(ScenarioError) -> (text: String, mode: UInt32?) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ScenarioError(file: path, place: nil, message: "cannot read the file: "
                                + (FileSystem.whyUnreadable(path) ?? "it could not be opened"), unreadable: true)
        }
        defer { try? handle.close() }
        let status = FileSystem.mode(of: handle.fileDescriptor)
        let mode = status.flatMap { $0.regularFile ? $0.mode : nil }
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
        return (text, mode)
    }

    /// The document's root node: refused when it nests deeper than `YAMLNesting.maximumDepth` or
    /// holds more than `maximumValues` values, its aliases (*name) followed: both measured on the
    /// parser's events before any tree is built, so that nothing larger is ever composed.
    private func document(_ text: String, empty: String) throws(ScenarioError) -> Node {
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

    private static func tooDeep(_ when: String) -> String {
        "lists and maps nest more than \(YAMLNesting.maximumDepth) deep here\(when): refused (a beacon list needs 3 levels, "
            + "a scenario 6)"
    }

    /// Parses and checks a configuration file's beacon list.
    public func beaconList(_ text: String) throws(ScenarioError) -> [Beacon] {
        try beaconEntries(text).map(\.beacon)
    }

    /// Parses and checks a configuration file's beacon list, each beacon with its own parameters.
    public func beaconEntries(_ text: String) throws(ScenarioError) -> [(beacon: Beacon, parameters: BeaconParameters)] {
        try configuration(text).entries
    }

    /// Parses and checks a configuration file, its document composed once: the beacon list,
    /// each beacon with its own parameters, and its `metrics:` value (a string or a port
    /// number, as written; nil where it has none).
    public func configuration(_ text: String) throws(ScenarioError)
        -> (entries: [(beacon: Beacon, parameters: BeaconParameters)], metrics: String?) {
        let root = try document(text, empty: "the file is empty: expected 'beacons:', a list of beacons")
        let top = try mapping(root, "the configuration", keys: ["beacons", "metrics"])
        guard let list = top["beacons"] else { throw fail(root, "expected 'beacons': a list of beacons") }
        guard case let .sequence(entries) = list else {
            throw fail(list, "'beacons' must be a list of beacons (each a map of fields such as uuid, major, minor)")
        }
        guard !entries.isEmpty else { throw fail(list, "'beacons' is empty: list at least one beacon") }
        guard entries.count <= AdvertisingOptions.maximumBeacons else {
            throw fail(list, "'beacons' lists \(entries.count) beacons: an emitter carries at most \(AdvertisingOptions.maximumBeacons)")
        }
        var beacons: [(beacon: Beacon, parameters: BeaconParameters)] = []
        for (index, entry) in entries.enumerated() {
            let what = "beacon \(index + 1)"
            let (fields, parameters) = try split(try beaconFields(entry, what, crowds: true), entry, what)
            // A range for major or minor (minor: 1-200) makes a crowd: one beacon per value.
            let crowd: [[(key: String, value: String)]]
            do {
                crowd = try BeaconDescription.crowd(fields.sorted { $0.key < $1.key }, sharing: parameters)
            } catch {
                throw fail(entry, "\(what): \(error.message)")
            }
            for member in crowd {
                beacons.append((try beacon(Dictionary(member.map { ($0.key, $0.value) }) { $1 }, entry, what), parameters))
            }
            guard beacons.count <= AdvertisingOptions.maximumBeacons else {
                throw fail(entry, "\(what): the file's beacons come to \(beacons.count) with its crowds: an emitter "
                           + "carries at most \(AdvertisingOptions.maximumBeacons)")
            }
        }
        return (beacons, try top["metrics"].map { (node) throws(ScenarioError) in try string(node, "metrics (PORT or ADDRESS:PORT)") })
    }

    /// The configuration file's text with `power` as the measured power of the first beacon
    /// entry that `matches` (`calibrate --write`): its measured-power value replaced where it
    /// stands, or the key added to the entry (in a flow map before its `}`, quoted as the
    /// entry's keys are; in a block map on a line of its own under the entry's keys). The rest
    /// of the text stays as it was, comments included.
    /// - Throws: `ScenarioError` when the file does not read as a beacon list, or no entry matches.
    public func settingMeasuredPower(_ power: Int, in text: String,
                                     where matches: (Beacon) -> Bool) throws(ScenarioError) -> String {
        let root = try document(text, empty: "the file is empty: expected 'beacons:', a list of beacons")
        let top = try mapping(root, "the configuration", keys: ["beacons"])
        guard let list = top["beacons"], case let .sequence(entries) = list else {
            throw fail(root, "expected 'beacons': a list of beacons")
        }
        for (index, entry) in entries.enumerated() {
            let what = "beacon \(index + 1)"
            let fields = try split(try beaconFields(entry, what), entry, what).fields
            guard matches(try beacon(fields, entry, what)), case let .mapping(map) = entry else { continue }
            let edited = try insertingMeasuredPower(power, into: map, at: entry, what, in: text)
            // The edit must leave a file that reads as before but for the value: else (a value
            // of several lines, say) it is left to the user.
            guard let read = try? beaconList(edited), read.count == entries.count else {
                throw fail(entry, "\(what): cannot put its measured power in without changing the rest: "
                           + "add measured-power: \(power) to it by hand")
            }
            return edited
        }
        throw fail(list, "no entry describes this beacon: add it to the file, or run calibrate with the beacon the file lists")
    }

    /// The text with the measured power of the beacon entry `map` (at `entry`) set: its value
    /// replaced where it stands, or the key added (in a flow map before its `}`, quoted as the
    /// entry's keys are; in a block map on a line of its own after the entry's last value).
    private func insertingMeasuredPower(_ power: Int, into map: Node.Mapping, at entry: Node, _ what: String,
                                        in text: String) throws(ScenarioError) -> String {
        // Lines as the YAML reader counts them (CRLF is one line break).
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        func offset(_ node: Node) -> String.Index? {
            guard let mark = node.mark, mark.line >= 1, mark.line <= lines.count, mark.column >= 1 else { return nil }
            let line = lines[mark.line - 1]
            return line.index(line.startIndex, offsetBy: mark.column - 1, limitedBy: line.endIndex)
        }
        let unplaced = fail(entry, "\(what): cannot tell where to write its measured power")
        if let (_, value) = map.first(where: { key, _ in Self.plain(key.string ?? "") == "measuredpower" }) {
            // A plain number (one written as a string was refused, by beaconFields).
            guard case let .scalar(scalar) = value, let start = offset(value),
                  let end = text.index(start, offsetBy: scalar.string.count, limitedBy: text.endIndex) else { throw unplaced }
            return text.replacingCharacters(in: start..<end, with: String(power))
        }
        guard let start = offset(entry), let firstKey = map.keys.first, let keyStart = offset(firstKey) else { throw unplaced }
        if text[start] == "{" {
            guard let close = Self.closingBrace(of: start, in: text) else { throw unplaced }
            let key = text[keyStart] == "\"" ? "\"measuredPower\"" : "measured-power"
            return text.replacingCharacters(in: close..<close, with: ", \(key): \(power)")
        }
        // A block map: after the line of its last value, at its keys' indentation, with the
        // file's own line break.
        let lastLine = map.values.compactMap { $0.mark?.line }.max() ?? (firstKey.mark?.line ?? 0)
        guard lastLine >= 1, lastLine <= lines.count, let column = firstKey.mark?.column, column >= 1 else { throw unplaced }
        let lineBreak = text.contains("\r\n") ? "\r\n" : "\n"
        let at = lines[lastLine - 1].endIndex
        return text.replacingCharacters(in: at..<at, with: lineBreak + String(repeating: " ", count: column - 1)
                                        + "measured-power: \(power)")
    }

    /// The `}` that closes the flow map opening at `start`, past nested maps, lists and quoted text.
    private static func closingBrace(of start: String.Index, in text: String) -> String.Index? {
        var depth = 0
        var quote: Character?
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == "\\" && open == "\"" { index = text.index(after: index) } else if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "{" || character == "[" {
                depth += 1
            } else if character == "}" || character == "]" {
                depth -= 1
                if depth == 0 { return index }
            }
            if index < text.endIndex { index = text.index(after: index) }
        }
        return nil
    }

    /// Parses and checks a scenario.
    public func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let root = try document(text, empty: "the file is empty: expected a map with 'beacons' and 'steps'")
        let top = try mapping(root, "the scenario", keys: ["device", "scanner", "interval", "exitAfter", "rotation",
                                                           "hosts", "beacons", "regions", "steps"])
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
                                                                  beacon: try beacon(data, node, "beacon '\(memberName)'"),
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
                scenario.regions.append(Scenario.RegionDefinition(name: name, region: try region(regionNode, name)))
            }
        }
        guard let stepsNode = top["steps"] else { throw fail(root, "expected 'steps': a list of steps") }
        scenario.steps = try steps(stepsNode, scenario: &scenario)
        guard !scenario.steps.isEmpty else { throw fail(stepsNode, "'steps' is empty") }
        try check(scenario, root: root)
        return scenario
    }

    // MARK: Steps

    /// `replay: FILE` or `replay: {file: FILE, speed: X, only: [ADDRESS, ...], loop: N, gap: S}`:
    /// a capture's advertisers (`ReplayPlan`) put on the air beside the scenario's beacons, as
    /// beacons of their own (`replay1-a1`, ...), advertised and stopped on the capture's
    /// timeline, each going at every silence `Presence.isGoing` calls one (`gap`, as
    /// `replay --gap`), N rounds of it (1 to 1000; 1 by default); the steps after it come when
    /// the last round ends. FILE is read from the scenario's folder.
    private func replay(_ node: Node, scenario: inout Scenario) throws(ScenarioError) -> Scenario.Action {
        var path: String
        var speed = 1.0
        var only = Set<BluetoothAddress>()
        var rounds = 1
        var gap = Presence.defaultGap
        if case .scalar = node {
            path = try string(node, "replay")
        } else {
            let map = try mapping(node, "replay", keys: ["file", "speed", "only", "loop", "gap"])
            if let gapNode = map["gap"] {
                gap = try number(gapNode, "replay's gap")
                guard Presence.gaps.contains(gap) else {
                    throw fail(gapNode, "gap is the shortest silence taken as a going: \(Presence.gaps.lowerBound) to "
                               + "\(Int(Presence.gaps.upperBound)) seconds, got \(gap)")
                }
            }
            if let loopNode = map["loop"] {
                let value = try number(loopNode, "replay's loop")
                guard value == value.rounded(), value >= 1, value <= 1000 else {
                    throw fail(loopNode, "loop is how many rounds of the capture: a whole number from 1 to 1000, got \(value)")
                }
                rounds = Int(value)
            }
            guard let fileNode = map["file"] else { throw fail(node, "replay needs 'file: CAPTURE' (or 'replay: CAPTURE')") }
            path = try string(fileNode, "replay's file")
            if let speedNode = map["speed"] {
                speed = try number(speedNode, "replay's speed")
                guard speed >= 0.01 && speed <= 100 else { throw fail(speedNode, "speed must be from 0.01 to 100, got \(speed)") }
            }
            if let onlyNode = map["only"] {
                let texts: [String]
                if case let .sequence(items) = onlyNode {
                    texts = try items.map { (item) throws(ScenarioError) in try string(item, "replay's only") }
                } else {
                    texts = [try string(onlyNode, "replay's only")]
                }
                for text in texts {
                    guard let address = try? BluetoothAddress(parsing: text) else {
                        throw fail(onlyNode, "only takes addresses AA:BB:CC:DD:EE:FF, got '\(text)'")
                    }
                    only.insert(address)
                }
            }
        }
        path = beside(path)
        let plan: ReplayPlan
        do {
            plan = try ReplayPlan(try CaptureSurvey.read(path: path, gap: gap).survey.advertisers, speed: speed,
                                      only: ScanFilter(addresses: only))
        } catch {
            throw fail(node, "replay \(path): \(error)")
        }
        // Its advertisers count toward the beacons an emitter carries, as the scenario's own do.
        guard scenario.beacons.count + plan.entries.count <= AdvertisingOptions.maximumBeacons else {
            throw fail(node, "replay \(path): its \(plan.entries.count) advertisers and the scenario's \(scenario.beacons.count) "
                       + "beacons make more than \(AdvertisingOptions.maximumBeacons), the most an emitter carries: replay "
                       + "fewer (only: [ADDRESS, ...]) or fewer times")
        }
        var round = 1
        while scenario.beacons.contains(where: { $0.name.hasPrefix("replay\(round)-") }) { round += 1 }
        let replayed: Scenario
        do {
            replayed = try plan.scenario(device: nil, prefix: "replay\(round)-", rounds: rounds)
        } catch {
            throw fail(node, "replay \(path): \(error)")
        }
        scenario.beacons += replayed.beacons
        return .repeatSteps(times: 1, steps: replayed.steps)
    }

    private static let stepKinds = ["advertise", "update", "stop", "wait", "expect", "repeat", "ramp", "replay"]

    private func steps(_ node: Node, scenario: inout Scenario) throws(ScenarioError) -> [Scenario.Step] {
        guard case let .sequence(sequence) = node else {
            throw fail(node, "'steps' must be a list (each item '- advertise: NAME', '- wait: SECONDS', ...)")
        }
        var steps: [Scenario.Step] = []
        for item in sequence {
            let map = try mapping(item, "a step", keys: Self.stepKinds)
            guard map.entries.count == 1, let (kind, value) = map.entries.first else {
                throw fail(item, "a step has exactly one of \(Self.stepKinds.joined(separator: ", ")); got "
                           + (map.entries.isEmpty ? "none" : map.entries.map(\.0).joined(separator: " and ")))
            }
            steps.append(Scenario.Step(try action(kind, value, scenario: &scenario), place: place(item)))
        }
        return steps
    }

    private func action(_ kind: String, _ node: Node, scenario: inout Scenario) throws(ScenarioError) -> Scenario.Action {
        switch kind {
        case "replay":
            return try replay(node, scenario: &scenario)
        case "advertise":
            return .advertise(try names(node, "advertise", scenario: scenario))
        case "stop":
            if case let .scalar(scalar) = node, scalar.string == "all" { return .stop(nil) }
            return .stop(try names(node, "stop", scenario: scenario))
        case "wait":
            return .wait(seconds: try seconds(node, "wait"))
        case "update":
            let map = try mapping(node, "update", keys: nil)
            guard let beaconNode = map["beacon"] else { throw fail(node, "update needs 'beacon: NAME' and the fields to change") }
            let name = try beaconName(beaconNode, scenario: scenario)
            var fields: [String: String] = [:]
            for (key, value) in map.entries where key != "beacon" {
                fields[key] = try string(value, "update's \(key)")
                try checkNumber(key, value, "update of '\(name)'")
            }
            guard !fields.isEmpty else { throw fail(node, "update of '\(name)' changes no field (give e.g. minor: 3)") }
            return .update(name, fields: fields)
        case "expect":
            let map = try mapping(node, "expect", keys: ["seen", "notSeen", "region", "state", "event", "within", "for"])
            if let seen = map["seen"] {
                try only(map, ["seen", "within"], node, "expect seen")
                return .expectSeen(try beaconName(seen, scenario: scenario), within: try required(map, "within", node, "expect seen"))
            }
            if let notSeen = map["notSeen"] {
                try only(map, ["notSeen", "for"], node, "expect notSeen")
                return .expectNotSeen(try beaconName(notSeen, scenario: scenario), for: try required(map, "for", node, "expect notSeen"))
            }
            if let regionNode = map["region"] {
                try only(map, ["region", "state", "event", "within"], node, "expect region")
                let name = try string(regionNode, "region")
                guard scenario.region(named: name) != nil else {
                    throw fail(regionNode, "no region named '\(name)' (declare it under 'regions')"
                               + known(scenario.regions.map(\.name)))
                }
                let within = try required(map, "within", node, "expect region")
                switch (map["state"], map["event"]) {
                case let (state?, nil):
                    let text = try string(state, "state")
                    guard text == "inside" || text == "outside" else { throw fail(state, "state must be inside or outside, got '\(text)'") }
                    return .expectRegion(name, text == "inside" ? .inside : .outside, within: within)
                case let (nil, event?):
                    let text = try string(event, "event")
                    guard text == "enter" || text == "exit" else { throw fail(event, "event must be enter or exit, got '\(text)'") }
                    return .expectRegion(name, text == "enter" ? .enter : .exit, within: within)
                default:
                    throw fail(node, "expect region needs one of 'state: inside|outside' or 'event: enter|exit'")
                }
            }
            throw fail(node, "expect needs one of 'seen: NAME', 'notSeen: NAME' or 'region: NAME'")
        case "repeat":
            let map = try mapping(node, "repeat", keys: ["times", "steps"])
            guard let timesNode = map["times"], let stepsNode = map["steps"] else {
                throw fail(node, "repeat needs 'times: N' and 'steps: [...]'")
            }
            let times = try integer(timesNode, "times")
            guard (1...100_000).contains(times) else { throw fail(timesNode, "times must be from 1 to 100000, got \(times)") }
            let inner = try steps(stepsNode, scenario: &scenario)
            guard !inner.isEmpty else { throw fail(stepsNode, "repeat's 'steps' is empty") }
            return .repeatSteps(times: times, steps: inner)
        case "ramp":
            let map = try mapping(node, "ramp", keys: ["beacon", "from", "to", "step", "every"])
            guard let beaconNode = map["beacon"], let fromNode = map["from"], let toNode = map["to"] else {
                throw fail(node, "ramp needs 'beacon: NAME', 'from: dBm' and 'to: dBm' (and optionally 'step: dB', 'every: seconds')")
            }
            let name = try beaconName(beaconNode, scenario: scenario)
            let from = try integer(fromNode, "from")
            let to = try integer(toNode, "to")
            for (value, valueNode) in [(from, fromNode), (to, toNode)] where !(-127...20).contains(value) {
                throw fail(valueNode, "TX power must be from -127 to 20 dBm, got \(value)")
            }
            let step = try map["step"].map { node throws(ScenarioError) in try integer(node, "step") } ?? 2
            guard step > 0 else { throw fail(map["step"] ?? node, "step must be a positive number of dB, got \(step)") }
            let every = try map["every"].map { node throws(ScenarioError) in try seconds(node, "every") } ?? 1
            return .ramp(name, from: from, to: to, step: step, every: every)
        default:
            throw fail(node, "unknown step '\(kind)'")
        }
    }

    /// The most steps `check` visits: far more than any scenario's steps, walked as below.
    static let maximumStepVisits = 1_000_000

    /// Walks the timeline once (a repeated block twice where its first pass changed what is on
    /// the air or a beacon's fields, which is enough: an update sets values, so a second pass
    /// ends where a third would; where the first pass changed nothing, a second would repeat it
    /// exactly), checking what depends on order. Nested repeats cost a walk per level, not two:
    /// linear in the file, and bounded by `maximumStepVisits` whatever the nesting.
    private func check(_ scenario: Scenario, root: Node) throws(ScenarioError) {
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
                        let (data, _) = try BeaconDescription.parameters(in: merged)
                        _ = try makeBeacon(data)
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
                case .wait, .expectSeen, .expectNotSeen, .expectRegion:
                    break
                }
            }
        }
        try walk(scenario.steps)
    }

    // MARK: Values

    /// A map's entries in file order, each key checked against `keys` (nil: any name).
    private struct Entries {
        var entries: [(String, Node)]
        subscript(key: String) -> Node? { entries.first { $0.0 == key }?.1 }
    }

    private func mapping(_ node: Node, _ what: String, keys: [String]?) throws(ScenarioError) -> Entries {
        guard case let .mapping(mapping) = node else { throw fail(node, "\(what) must be a map") }
        var entries: [(String, Node)] = []
        for (keyNode, value) in mapping {
            guard case let .scalar(scalar) = keyNode else { throw fail(keyNode, "\(what): a key must be a name") }
            let key = scalar.string
            if let keys, !keys.contains(key) {
                throw fail(keyNode, "unknown key '\(key)' in \(what): expected one of \(keys.joined(separator: ", "))")
            }
            if entries.contains(where: { $0.0 == key }) { throw fail(keyNode, "'\(key)' is given twice in \(what)") }
            entries.append((key, value))
        }
        return Entries(entries: entries)
    }

    private func only(_ map: Entries, _ keys: [String], _ node: Node, _ what: String) throws(ScenarioError) {
        for (key, _) in map.entries where !keys.contains(key) {
            throw fail(node, "\(what) takes \(keys.joined(separator: " and ")), not '\(key)'")
        }
    }

    private func required(_ map: Entries, _ key: String, _ node: Node, _ what: String) throws(ScenarioError) -> Double {
        guard let value = map[key] else { throw fail(node, "\(what) needs '\(key): SECONDS'") }
        return try seconds(value, key)
    }

    private func string(_ node: Node, _ what: String) throws(ScenarioError) -> String {
        guard case let .scalar(scalar) = node else { throw fail(node, "\(what) must be a single value, not a list or map") }
        return scalar.string
    }

    private func number(_ node: Node, _ what: String) throws(ScenarioError) -> Double {
        let text = try string(node, what)
        guard let value = Double(text), value.isFinite else { throw fail(node, "\(what) must be a number, got '\(text)'") }
        return value
    }

    private func integer(_ node: Node, _ what: String) throws(ScenarioError) -> Int {
        let text = try string(node, what)
        guard let value = Int(text) else { throw fail(node, "\(what) must be a whole number, got '\(text)'") }
        return value
    }

    private func seconds(_ node: Node, _ what: String) throws(ScenarioError) -> Double {
        let value = try number(node, "\(what) (seconds)")
        guard value >= 0, value <= 86_400 else { throw fail(node, "\(what) must be from 0 to 86400 seconds, got \(value)") }
        return value
    }

    /// - Parameter crowds: a range for major or minor (`1-200`) is taken (a configuration's
    ///   crowd, `BeaconDescription.crowd`); a scenario names each beacon.
    private func beaconFields(_ node: Node, _ what: String, crowds: Bool = false) throws(ScenarioError) -> [String: String] {
        var fields: [String: String] = [:]
        for (key, value) in try mapping(node, what, keys: nil).entries {
            fields[key] = try string(value, "\(what): \(key)")
            switch Self.plain(key) {
            case "identitykey":
                if let mode, mode & 0o044 != 0 {
                    throw fail(value, "\(what): \(key): an identity key in a file other users can read (mode "
                               + "\(FileSystem.octalMode(mode))): put it in a file of its own that only its owner can read "
                               + "(chmod 600) and name that file with identity-key-file")
                }
            case "identitykeyfile":
                fields[key] = fields[key].map(beside)
            default:
                break
            }
            if crowds, ["major", "minor"].contains(Self.plain(key)), case let .scalar(scalar) = value,
               scalar.string.wholeMatch(of: /[0-9]+-[0-9]+/) != nil {
                continue
            }
            try checkNumber(key, value, what)
        }
        return fields
    }

    /// A number field's value, refused where it is when it is no number, or one written as a
    /// string (JSON's "7": a mistake, though YAML and the factory would read it).
    private func checkNumber(_ key: String, _ value: Node, _ what: String) throws(ScenarioError) {
        guard Self.numberFields.contains(Self.plain(key)), case let .scalar(scalar) = value else { return }
        let range = Self.numberRanges[Self.plain(key)].map { " from \($0)" } ?? ""
        if scalar.style == .singleQuoted || scalar.style == .doubleQuoted {
            throw fail(value, "\(what): \(key) must be a number\(range), got the string \"\(scalar.string)\" "
                       + "(write it without quotes)")
        }
        guard Double(scalar.string) != nil else {
            throw fail(value, "\(what): \(key) must be a number\(range), got '\(scalar.string)'")
        }
    }

    /// What each beacon field that takes a number takes (`BeaconDescription.numberRanges`).
    public static let numberRanges = BeaconDescription.numberRanges

    /// The beacon fields that take numbers.
    static let numberFields = Set(numberRanges.keys)

    /// A key as its spellings share it (`BeaconDescription.plain`).
    public static func plain(_ key: String) -> String { BeaconDescription.plain(key) }

    /// A path a file names: as written when absolute, else relative to the file's own folder
    /// (the working directory's, for a file named without one); one in the unit's credentials
    /// (`IdentityKey.credentialsPrefix`) as written.
    private func beside(_ path: String) -> String {
        path.hasPrefix("/") || path.hasPrefix(IdentityKey.credentialsPrefix) ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
    }

    /// The fields apart: the beacon's data fields, and its own parameters (`interval`,
    /// `txPower`), refused at the value when out of range.
    private func split(_ fields: [String: String], _ node: Node, _ what: String) throws(ScenarioError)
        -> (fields: [String: String], parameters: BeaconParameters) {
        do {
            return try BeaconDescription.parameters(in: fields)
        } catch {
            let entries = (try? mapping(node, what, keys: nil).entries) ?? []
            let blamed = entries.first { error.message.hasPrefix("\($0.0) ") }?.1
            throw fail(blamed ?? node, "\(what): \(error)")
        }
    }

    /// The beacon the fields describe; what the factory refuses is reported at the value it
    /// names (the first field whose key the message mentions), else at the beacon's map.
    private func beacon(_ fields: [String: String], _ node: Node, _ what: String) throws(ScenarioError) -> Beacon {
        do {
            return try makeBeacon(fields)
        } catch {
            let message = "\(error)"
            let words = Set(message.split { !$0.isLetter && !$0.isNumber && $0 != "-" && $0 != "_" }.map { Self.plain(String($0)) })
            let entries = (try? mapping(node, what, keys: nil).entries) ?? []
            // A key the message quotes ('colour') first, else the first key it mentions.
            let blamed = (entries.first { message.contains("'\($0.0)'") } ?? entries.first { words.contains(Self.plain($0.0)) })?.1
            throw fail(blamed ?? node, "\(what): \(message)")
        }
    }

    /// A box elsewhere: `{ssh: "[user@]host", control: /path/of/its/socket}`, optionally
    /// `sshOptions: [-i, KEY, ...]` and `command: /usr/local/bin/beacon-emit`.
    /// With it, what its session runs on this machine (`LocalProgram`).
    private func host(_ node: Node, _ name: String) throws(ScenarioError) -> (Scenario.HostDefinition, [LocalProgram]) {
        let what = "host '\(name)'"
        let map = try mapping(node, what, keys: ["ssh", "control", "sshOptions", "command"])
        guard let sshNode = map["ssh"], let controlNode = map["control"] else {
            throw fail(node, "\(what) needs 'ssh: [USER@]HOST' and 'control: PATH' (the socket of the box's advertise --control)")
        }
        let destination = try string(sshNode, "\(what): ssh")
        // Never an option in disguise: ssh would read "-oProxyCommand=..." as one.
        guard !destination.isEmpty, !destination.hasPrefix("-"), !destination.contains(where: \.isWhitespace) else {
            throw fail(sshNode, "\(what): ssh must be a destination such as beacon@pi-lobby, got '\(destination)' "
                       + "(options go in 'sshOptions')")
        }
        let control = try string(controlNode, "\(what): control")
        guard control.hasPrefix("/"), !control.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw fail(controlNode, "\(what): control must be the socket's absolute path on the box, got '\(control)'")
        }
        var definition = Scenario.HostDefinition(name: name, destination: destination, controlPath: control)
        var optionNodes: [Node] = []
        if let optionsNode = map["sshOptions"] {
            guard case let .sequence(items) = optionsNode else {
                throw fail(optionsNode, "\(what): sshOptions must be a list of arguments, such as [-i, /path/key, -p, '2222']")
            }
            for item in items { definition.sshOptions.append(try string(item, "\(what): sshOptions")) }
            optionNodes = Array(items)
            if !allowsAnySSHOption, let (index, text) = SSHOptionPolicy.firstRefused(definition.sshOptions) {
                throw fail(optionNodes.indices.contains(index) ? optionNodes[index] : optionsNode,
                           "\(what): the ssh option '\(text)' is not one a scenario may give (some run or load a program on "
                           + "this machine): \(SSHOptionPolicy.allowed); `run --allow-ssh-options` runs the file's options "
                           + "as they are (`run --check` names what they run)")
            }
        }
        if let commandNode = map["command"] {
            definition.command = try string(commandNode, "\(what): command")
            guard !definition.command.isEmpty else { throw fail(commandNode, "\(what): command is empty") }
        }
        let session = RemoteBox.sshArguments(definition).map(RemoteBox.displayed).joined(separator: " ")
        var programs = [LocalProgram(host: name, place: place(sshNode), what: "runs \(session)")]
        for finding in SSHOptionReview.findings(definition.sshOptions) {
            programs.append(LocalProgram(host: name, place: optionNodes.indices.contains(finding.index) ? place(optionNodes[finding.index]) : nil,
                                         what: finding.what))
        }
        return (definition, programs)
    }

    private func region(_ node: Node, _ name: String) throws(ScenarioError) -> BeaconRegion {
        let map = try mapping(node, "region '\(name)'", keys: ["uuid", "major", "minor"])
        guard let uuidNode = map["uuid"] else { throw fail(node, "region '\(name)' needs 'uuid'") }
        let uuid: UUID
        do {
            uuid = try UUID(beaconText: try string(uuidNode, "uuid"))
        } catch let error as ScenarioError {
            throw error
        } catch {
            throw fail(uuidNode, "region '\(name)': uuid: \(error)")
        }
        var parts: [UInt16?] = []
        for key in ["major", "minor"] {
            guard let valueNode = map[key] else { parts.append(nil); continue }
            let value = try integer(valueNode, key)
            guard (0...65535).contains(value) else { throw fail(valueNode, "\(key) must be from 0 to 65535, got \(value)") }
            parts.append(UInt16(value))
        }
        if parts[1] != nil && parts[0] == nil { throw fail(node, "region '\(name)': minor needs major") }
        return BeaconRegion(uuid: uuid, major: parts[0], minor: parts[1])
    }

    private func names(_ node: Node, _ what: String, scenario: Scenario) throws(ScenarioError) -> [String] {
        var names: [String] = []
        switch node {
        case .scalar:
            names = try crowdOrName(node, scenario: scenario)
        case let .sequence(sequence):
            for item in sequence {
                for name in try crowdOrName(item, scenario: scenario) {
                    if names.contains(name) { throw fail(item, "'\(name)' is named twice") }
                    names.append(name)
                }
            }
        default:
            throw fail(node, "\(what) takes a beacon name or a list of names")
        }
        guard !names.isEmpty else { throw fail(node, "\(what) names no beacon") }
        return names
    }

    /// A crowd's members, or the one beacon named.
    private func crowdOrName(_ node: Node, scenario: Scenario) throws(ScenarioError) -> [String] {
        if case .scalar = node, let members = scenario.crowds[try string(node, "a beacon name")] { return members }
        return [try beaconName(node, scenario: scenario)]
    }

    private func beaconName(_ node: Node, scenario: Scenario) throws(ScenarioError) -> String {
        let name = try string(node, "a beacon name")
        if let members = scenario.crowds[name], let first = members.first, let last = members.last {
            throw fail(node, "'\(name)' is a crowd of \(members.count): name one of its beacons (\(first) to \(last)) here; "
                       + "advertise and stop take the crowd whole")
        }
        guard scenario.beacon(named: name) != nil else {
            throw fail(node, "no beacon named '\(name)' (declare it under 'beacons')" + known(scenario.beacons.map(\.name)))
        }
        return name
    }

    private func known(_ names: [String]) -> String {
        names.isEmpty ? "" : "; there are: " + names.joined(separator: ", ")
    }

    private func place(_ node: Node) -> Scenario.Place {
        node.mark.map { Scenario.Place(line: $0.line, column: $0.column) } ?? Scenario.Place(line: 0, column: 0)
    }

    private func fail(_ node: Node?, _ message: String) -> ScenarioError {
        ScenarioError(file: file, place: node.map(place), message: message)
    }

    private func yamlError(_ error: YamlError) -> ScenarioError {
        switch error {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            return ScenarioError(file: file, place: Scenario.Place(line: mark.line, column: mark.column),
                                 message: "not valid YAML or JSON: \(problem)")
        default:
            return ScenarioError(file: file, place: nil, message: "not valid YAML or JSON: \(error)")
        }
    }
}
