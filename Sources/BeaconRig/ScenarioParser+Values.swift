// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem
import Yams

/// The values a scenario's steps, beacons, hosts and regions are read from, each refused at its
/// place when it is not what is expected.
extension ScenarioParser {
    /// A map's entries in file order, each key checked against `keys` (nil: any name).
    struct Entries {
        var entries: [(String, Node)]
        subscript(key: String) -> Node? { entries.first { $0.0 == key }?.1 }
    }

    func mapping(_ node: Node, _ what: String, keys: [String]?) throws(ScenarioError) -> Entries {
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

    func only(_ map: Entries, _ keys: [String], _ node: Node, _ what: String) throws(ScenarioError) {
        for (key, _) in map.entries where !keys.contains(key) {
            throw fail(node, "\(what) takes \(keys.joined(separator: " and ")), not '\(key)'")
        }
    }

    func required(_ map: Entries, _ key: String, _ node: Node, _ what: String) throws(ScenarioError) -> Double {
        guard let value = map[key] else { throw fail(node, "\(what) needs '\(key): SECONDS'") }
        return try seconds(value, key)
    }

    func string(_ node: Node, _ what: String) throws(ScenarioError) -> String {
        guard case let .scalar(scalar) = node else { throw fail(node, "\(what) must be a single value, not a list or map") }
        return scalar.string
    }

    func number(_ node: Node, _ what: String) throws(ScenarioError) -> Double {
        let text = try string(node, what)
        guard let value = Double(text), value.isFinite else { throw fail(node, "\(what) must be a number, got '\(text)'") }
        return value
    }

    func integer(_ node: Node, _ what: String) throws(ScenarioError) -> Int {
        let text = try string(node, what)
        guard let value = Int(text) else { throw fail(node, "\(what) must be a whole number, got '\(text)'") }
        return value
    }

    func seconds(_ node: Node, _ what: String) throws(ScenarioError) -> Double {
        let value = try number(node, "\(what) (seconds)")
        guard value >= 0, value <= 86_400 else { throw fail(node, "\(what) must be from 0 to 86400 seconds, got \(value)") }
        return value
    }

    /// - Parameter crowds: a range for major or minor (`1-200`) is taken (a configuration's
    ///   crowd, `BeaconDescription.crowd`); a scenario names each beacon.
    func beaconFields(_ node: Node, _ what: String, crowds: Bool = false) throws(ScenarioError) -> [String: String] {
        var fields: [String: String] = [:]
        for (key, value) in try mapping(node, what, keys: nil).entries {
            fields[key] = try beaconField(key, value, what)
            if crowds, ["major", "minor"].contains(Self.plain(key)), case let .scalar(scalar) = value,
               scalar.string.wholeMatch(of: /[0-9]+-[0-9]+/) != nil {
                continue
            }
            try checkNumber(key, value, what)
        }
        return fields
    }

    /// A beacon field's value as text (a beacon's, or an update step's): an inline
    /// `identity-key` only in a file no one else can read, an `identity-key-file` found beside
    /// the file.
    func beaconField(_ key: String, _ value: Node, _ what: String) throws(ScenarioError) -> String {
        // A layout's identifiers and data fields, a setting's list (channels): a list, in order (or one value).
        if BeaconDescription.listKeys.contains(Self.plain(key)), case let .sequence(items) = value {
            guard items.count <= BeaconLayout.maximumTerms else {
                throw fail(value, "\(what): \(key) lists \(items.count) values, more than \(BeaconLayout.maximumTerms)")
            }
            var texts: [String] = []
            for item in items {
                let text = try string(item, "\(what): \(key)'s value")
                guard !text.contains(" "), !text.isEmpty else { throw fail(item, "\(what): \(key): '\(text)' is no value") }
                texts.append(text)
            }
            return texts.joined(separator: " ")
        }
        let text = try string(value, "\(what): \(key)")
        switch Self.plain(key) {
        case "layout":
            // A name the file's `layouts:` declares, or a layout itself.
            if text.contains(":") {
                do { _ = try BeaconLayout.named(text) } catch { throw fail(value, "\(what): layout: \(error.message)") }
                return text
            }
            guard let layout = layouts[text] else {
                throw fail(value, "\(what): no layout named '\(text)' (declare it under 'layouts:')"
                           + (layouts.isEmpty ? "" : "; the file's: \(layouts.keys.sorted().joined(separator: ", "))"))
            }
            return "\(text)=\(layout)"
        case "identitykey":
            if let mode, mode & 0o044 != 0 {
                throw fail(value, "\(what): \(key): an identity key in a file other users can read (mode "
                           + "\(FileSystem.octalMode(mode))): put it in a file of its own that only its owner can read "
                           + "(chmod 600) and name that file with identity-key-file")
            }
            return text
        case "identitykeyfile":
            return beside(text)
        default:
            return text
        }
    }

    /// A file's `layouts:`: names to android-beacon-library layouts, each read (and refused
    /// where it stands, naming the term).
    func layouts(_ node: Node?) throws(ScenarioError) -> [String: String] {
        guard let node else { return [:] }
        var layouts: [String: String] = [:]
        for (name, layoutNode) in try mapping(node, "layouts", keys: nil).entries {
            let text = try string(layoutNode, "layout '\(name)'")
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw fail(layoutNode, "layouts: '\(name)' is no layout name: letters, digits, '-', '_' and '.'")
            }
            do { _ = try BeaconLayout(parsing: text) } catch { throw fail(layoutNode, "layout '\(name)': \(error.message)") }
            layouts[name] = text
        }
        return layouts
    }

    /// A number field's value, refused where it is when it is no number, or one written as a
    /// string (JSON's "7": a mistake, though YAML and the factory would read it).
    func checkNumber(_ key: String, _ value: Node, _ what: String) throws(ScenarioError) {
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
    public static var numberRanges: [String: String] { BeaconDescription.numberRanges }

    /// The beacon fields that take numbers.
    static var numberFields: Set<String> { Set(numberRanges.keys) }

    /// A key as its spellings share it (`BeaconDescription.plain`).
    public static func plain(_ key: String) -> String { BeaconDescription.plain(key) }

    /// A path a file names: as written when absolute, else relative to the file's own folder
    /// (the working directory's, for a file named without one); one in the unit's credentials
    /// (`IdentityKey.credentialsPrefix`) as written.
    func beside(_ path: String) -> String {
        path.hasPrefix("/") || path.hasPrefix(IdentityKey.credentialsPrefix) ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
    }

    /// The fields apart: the beacon's data fields, and its own parameters (`interval`,
    /// `txPower`), refused at the value when out of range.
    func split(_ fields: [String: String], _ node: Node, _ what: String) throws(ScenarioError)
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
    func beacon(_ fields: [String: String], _ parameters: BeaconParameters, _ node: Node, _ what: String)
        throws(ScenarioError) -> Beacon {
        do {
            return try makeBeacon(fields, parameters)
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
    func host(_ node: Node, _ name: String) throws(ScenarioError) -> (Scenario.HostDefinition, [LocalProgram]) {
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

    /// A region: `{uuid, major, minor}` of iBeacons and AltBeacons, or `{layout, ids}` of an app's
    /// layout (a name under `layouts:` or a layout itself; the identifiers its beacons start
    /// with, as the library writes them: fewer, a wider region).
    func region(_ node: Node, _ name: String) throws(ScenarioError) -> Scenario.RegionDefinition {
        let what = "region '\(name)'"
        let map = try mapping(node, what, keys: ["uuid", "major", "minor", "layout", "ids"])
        if let layoutNode = map["layout"] {
            if let other = ["uuid", "major", "minor"].first(where: { map[$0] != nil }) {
                throw fail(node, "\(what): a layout's region names its identifiers with 'ids', not '\(other)'")
            }
            let text = try beaconField("layout", layoutNode, what)
            var ids = ""
            if let idsNode = map["ids"] { ids = try beaconField("ids", idsNode, what) }
            // A name the file declares stands for its layout (`beaconField` gives NAME=LAYOUT); a
            // layout written in place is `layout`, or the name it is written with.
            do {
                let (layoutName, layout) = try BeaconLayout.named(text)
                let region = try BeaconLayout.Region(name: layoutName ?? "layout", layout: layout,
                                                     identifiers: ids.split(separator: " ").map(String.init))
                return Scenario.RegionDefinition(name: name, layout: region)
            } catch {
                throw fail(map["ids"] ?? layoutNode, "\(what): \(error.message)")
            }
        }
        if map["ids"] != nil { throw fail(node, "\(what): 'ids' go with a 'layout'") }
        return Scenario.RegionDefinition(name: name, region: try beaconRegion(node, map, name))
    }

    private func beaconRegion(_ node: Node, _ map: Entries, _ name: String) throws(ScenarioError) -> BeaconRegion {
        guard let uuidNode = map["uuid"] else { throw fail(node, "region '\(name)' needs 'uuid' (or 'layout' and 'ids')") }
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

    func names(_ node: Node, _ what: String, scenario: Scenario) throws(ScenarioError) -> [String] {
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
    func crowdOrName(_ node: Node, scenario: Scenario) throws(ScenarioError) -> [String] {
        if case .scalar = node, let members = scenario.crowds[try string(node, "a beacon name")] { return members }
        return [try beaconName(node, scenario: scenario)]
    }

    func beaconName(_ node: Node, scenario: Scenario) throws(ScenarioError) -> String {
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

    func known(_ names: [String]) -> String {
        names.isEmpty ? "" : "; there are: " + names.joined(separator: ", ")
    }

    func place(_ node: Node) -> Scenario.Place {
        node.mark.map { Scenario.Place(line: $0.line, column: $0.column) } ?? Scenario.Place(line: 0, column: 0)
    }

    func fail(_ node: Node?, _ message: String) -> ScenarioError {
        ScenarioError(file: file, place: node.map(place), message: message)
    }

    func yamlError(_ error: YamlError) -> ScenarioError {
        switch error {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            return ScenarioError(file: file, place: Scenario.Place(line: mark.line, column: mark.column),
                                 message: "not valid YAML or JSON: \(problem)")
        default:
            return ScenarioError(file: file, place: nil, message: "not valid YAML or JSON: \(error)")
        }
    }
}
