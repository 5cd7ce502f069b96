// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconMetrics
import BeaconReports
import BeaconRig
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The text people and other programs hand the tool: scenario and configuration files, JSON
/// (control requests, a box's replies), the `--beacon` key reader, record files. Any bytes, no
/// crash; what reads, reads again the same.
enum TextFuzzing {
    /// A scenario, and the same text as a configuration file (`beacons:` list).
    static func scenario(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let parser = ScenarioParser(file: "fuzz.yaml")
        if let scenario = try? parser.parse(text) {
            // Whatever was read is within the bounds the reader promises.
            check(scenario.beacons.count <= ScenarioParser.maximumValues, "scenario: beacons within the value bound")
            for program in scenario.localPrograms {
                check(scenario.hosts.contains { $0.name == program.host }, "scenario: a program names one of the hosts")
            }
        }
        if let beacons = try? parser.beaconList(text) {
            check(beacons.count <= AdvertisingOptions.maximumBeacons, "configuration: at most the beacons an emitter takes")
        }
        _ = try? parser.beaconEntries(text)
    }

    /// JSON as the control socket and a box's session read it: framed into lines, each parsed
    /// as a value, a request and a reply. A value's own line reads back as the same line.
    static func json(_ bytes: [UInt8]) {
        var lines = JSONLines()
        for line in lines.append(bytes) + [String(decoding: bytes, as: UTF8.self)] {
            if let value = JSONValue(parsing: line) {
                let again = JSONValue(parsing: value.line)
                check(again?.line == value.line, "JSON: a value's line reads back the same")
            }
            _ = ControlReply(line: line)
            if let request = try? ControlRequest(line: line) {
                check((try? ControlRequest(line: request.line)) == request, "control request round trip")
            }
        }
        _ = (lines.overflowed, lines.hasPartialLine)
    }

    /// A control request's beacon, as the server builds it: fields from an object or from
    /// `KEY=VALUE,...` text (the `--beacon` key reader), its own parameters set apart, the beacon
    /// built; a beacon's fields build the same beacon again.
    static func controlRequest(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        var described: [JSONValue] = [.string(text)]
        if let request = try? ControlRequest(line: text) {
            switch request {
            case let .add(beacon): described.append(beacon)
            case let .update(_, fields): described.append(fields)
            default: break
            }
        }
        for value in described {
            // A field that names a file is refused before anything reads it (no key oracle, no FIFO).
            if let fields = try? ControlHandler.beaconFields(value, what: "fuzz"),
               fields.keys.contains(where: { BeaconDescription.plain($0).hasSuffix("file") }) {
                check(ControlHandler.fileFields(in: fields, command: "add") != nil, "a field naming a file is refused")
                continue
            }
            guard let fields = try? ControlHandler.beaconFields(value, what: "fuzz"),
                  let (own, parameters) = try? BeaconDescription.parameters(in: fields),
                  let beacon = try? BeaconDescription.beacon(fromFields: own, parameters: parameters) else { continue }
            let again = try? BeaconDescription.beacon(fromFields: BeaconDescription.fields(of: beacon), parameters: parameters)
            check(again == beacon, "a beacon's fields build the same beacon")
        }
    }

    /// YAML that anchors and aliases make large: the input's first byte says how many times the
    /// rest is written out (up to `ScenarioParser.maximumFileSize`, 1 MiB, the most a file
    /// holds), as a configuration and a scenario. It reads or is refused; never more than the
    /// bounds once composed.
    static func yamlAliases(_ bytes: [UInt8]) {
        guard let first = bytes.first, bytes.count > 1 else { return }
        let unit = Array(bytes.dropFirst())
        let times = min((Int(first) + 1) * 256, ScenarioParser.maximumFileSize / unit.count)
        var grown: [UInt8] = []
        grown.reserveCapacity(times * unit.count)
        for _ in 0..<times { grown += unit }
        let text = String(decoding: grown, as: UTF8.self)
        let parser = ScenarioParser(file: "fuzz.yaml")
        if let entries = try? parser.beaconEntries(text) {
            check(entries.count <= AdvertisingOptions.maximumBeacons, "configuration: at most the beacons an emitter takes")
        }
        if let scenario = try? parser.parse(text) {
            check(scenario.beacons.count <= AdvertisingOptions.maximumBeacons, "scenario: at most the beacons an emitter takes")
        }
    }

    /// Where `captureReplay` writes its input: a private directory of this process's own.
    private static let captureDirectory = FileSystem.makePrivateTemporaryDirectory(prefix: "codec-fuzzer")

    /// A capture (btsnoop, pcap or pcapng bytes) surveyed as `replay` surveys it, and planned:
    /// a plan is bounded in time and in advertisers, and becomes a scenario.
    static func captureReplay(_ bytes: [UInt8]) {
        guard let directory = captureDirectory else { return }
        let path = directory + "/input.capture"
        guard (try? FileSystem.writeRegularFile(path, bytes, mode: 0o600)) != nil else { return }
        defer { FileSystem.removeEntry(atPath: path) }
        guard let (survey, _) = try? CaptureSurvey.read(path: path) else { return }
        let advertisers = survey.advertisers
        check(advertisers.count <= CaptureSurvey.mostAdvertisers, "survey: at most the advertisers it keeps")
        for sets in [nil, 2] as [Int?] {
            guard let plan = try? ReplayPlan(advertisers, sets: sets) else { continue }
            check(plan.length.isFinite && plan.length <= ReplayPlan.longestPlan, "replay plan: at most a day")
            check(plan.entries.count <= advertisers.count, "replay plan: no more entries than advertisers")
            _ = try? plan.scenario(device: nil)
        }
    }

    /// The metrics endpoint's request head: a request it reads names a method and a path.
    static func metricsHead(_ bytes: [UInt8]) {
        guard let head = HTTPRequestHead(bytes) else { return }
        if case let .request(method, path) = head {
            check(!method.isEmpty && path.hasPrefix("/") && !path.contains("?"), "metrics head: a method and a path")
        }
    }

    /// A record file: what reads, writes back as text that reads as the same record.
    static func record(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let record = InstanceRecord(adapter: "hci0", text: text) else { return }
        check(InstanceRecord(adapter: "hci0", text: record.text) == record, "record round trip")
    }

    /// The patterns a phone's lines meet: the marker preset's, and the documentation's.
    nonisolated(unsafe) private static let phonePatterns: [(Scenario.PhoneExpectation, Regex<AnyRegexOutput>)] = {
        let marker = Scenario.PhoneDefinition.marker
        return [(.enter, marker.enter), (.exit, marker.exit), (.inside, marker.state),
                (.enter, "didEnterRegion (?<region>[a-z]+)"), (.exit, "didExitRegion (?<region>[a-z]+)"),
                (.inside, "didDetermineState (?<state>inside|outside) (?<region>[a-z]+)")]
            .compactMap { kind, pattern in (try? PhoneLog.compile(pattern, key: kind == .inside ? "state" : "enter")).map { (kind, $0) } }
    }()

    /// A phone's log line, as a run takes it: matched by the marker's and the documentation's
    /// patterns (a region it names is part of the line), and escaped for the report: no markup
    /// scalar left raw, and the entities read back give the line (less the control characters
    /// XML cannot hold). The same text read as a pattern's shape (`nestedRepetition`, never run).
    static func phoneLine(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        check(phonePatterns.count == 6, "every pattern compiles")
        if case let .matched(transition, region?) = PhoneMatcher.outcome(of: text, phonePatterns) {
            check(transition != nil && text.contains(region), "a matched region is part of the line")
        }
        let escaped = HTMLPage.escape(text)
        check(!escaped.unicodeScalars.contains { "<>\"'".unicodeScalars.contains($0) }, "no markup scalar left raw")
        // Read back scalar by scalar, as a parser does (a string search by characters would not
        // find `&amp;` where a combining mark follows its `;`).
        let entities: [String: Unicode.Scalar] = ["lt": "<", "gt": ">", "quot": "\"", "apos": "'", "#10": "\n", "amp": "&"]
        var read: [Unicode.Scalar] = []
        var scalars = escaped.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            guard scalar == "&" else { read.append(scalar); continue }
            let name = String(String.UnicodeScalarView(scalars.prefix { $0 != ";" }))
            let entity = entities[name]
            check(entity != nil, "every & begins an entity")
            read.append(entity ?? scalar)
            scalars = scalars.dropFirst(name.unicodeScalars.count + 1)
        }
        let kept = text.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\n" || $0 == "\t" }
        check(read.elementsEqual(kept), "the escaped line reads back as the line")
        _ = PhonePattern.nestedRepetition(in: text)
    }

    private static func check(_ condition: Bool, _ property: @autoclosure () -> String) {
        if !condition {
            print("fuzz property violated: \(property())")
            abort()
        }
    }
}
