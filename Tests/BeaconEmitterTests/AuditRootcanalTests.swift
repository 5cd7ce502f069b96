// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import Foundation
import Testing

extension Rig {
/// `beacon-emit audit` on the virtual radio, whose timing is faithful: our own beacons at
/// several intervals and formats pass; deliberately wrong advertisers fail exactly the rules
/// they break.
@Suite struct AuditRootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"
    static let iBeacon = ["--uuid", uuid, "--major", "101", "--minor", "2"]
    /// The iBeacon's manufacturer data, without the Flags before it.
    static let iBeaconBody = "1AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"

    /// An emitter started with `arguments`, audited for `seconds` with `audit` options: the
    /// audit's JSON, its exit status and its rules' verdicts.
    func audit(emitting arguments: [String], for seconds: Double, _ audit: [String] = [])
        throws -> (status: Int32, verdicts: [String: String], json: JSONValue?, stderr: String) {
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", String(seconds + 3)] + arguments)
        defer { _ = emitter.wait() }
        Thread.sleep(forTimeInterval: 1)
        let result = try runBeaconEmit(["audit", "--scanner", device, "--duration", String(seconds), "--json"] + audit)
        let json = JSONValue(parsing: result.stdoutLines.first ?? "")
        var verdicts: [String: String] = [:]
        for rule in json?["rules"]?.array ?? [] {
            if let name = rule["name"]?.string, let verdict = rule["verdict"]?.string { verdicts[name] = verdict }
        }
        return (result.status, verdicts, json, result.stderr)
    }

    /// Our own beacons pass: an iBeacon at its 100 ms, an iBeacon at 500 ms compared with the
    /// configuration, an Eddystone-UID at 200 ms; the estimate within a few ms of what was set.
    @Test(arguments: [
        (iBeacon, 100.0, false),
        (iBeacon, 500.0, true),
        (["--eddystone-uid", "--namespace", "00112233445566778899", "--instance", "AABBCCDDEEFF"], 200.0, true),
    ])
    func ourBeaconsPass(beacon: [String], interval: Double, stated: Bool) throws {
        // 16 reports on time or more: a sure count of the periods.
        let seconds = interval >= 500 ? 9.5 : interval >= 200 ? 4.5 : 3.0
        let result = try audit(emitting: beacon + ["--interval", String(Int(interval))], for: seconds,
                               stated ? ["--interval", String(Int(interval))] : [])
        #expect(result.status == 0, "\(result.verdicts) \(result.stderr)")
        #expect(!result.verdicts.isEmpty && result.verdicts.values.allSatisfy { $0 == "pass" }, "\(result.verdicts)")
        let estimate = try #require(result.json?["interval"]?["eventPeriodMs"]?.number)
        #expect(abs(estimate - interval) <= max(3, interval * 0.02), "events every \(estimate) ms, set \(interval)")
    }

    /// Your app's own beacon, audited by its layout and first identifier beside another beacon
    /// of the same layout (at another interval): the suite is named by them, the interval is
    /// the chosen one's, and every rule a beacon of no built-in format is held to passes.
    @Test func aLayoutsBeaconIsAuditedByItsRegion() throws {
        let layout = "m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l"
        let sibling = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "8", "--interval", "300", "--layout", layout,
                                                         "--id", "0x0A0B0C0D", "--id", "1", "--data", "1", "--measured-power", "-62"])
        defer { _ = sibling.wait() }
        let result = try audit(emitting: ["--layout", layout, "--id", "0x01020304", "--id", "7", "--data", "300",
                                          "--measured-power", "-62", "--interval", "100"], for: 3,
                               ["--layout", "acme=" + layout, "--id", "0x01020304", "--interval", "100"])
        #expect(result.status == 0, "\(result.verdicts) \(result.stderr)")
        #expect(!result.verdicts.isEmpty && result.verdicts.values.allSatisfy { $0 == "pass" }, "\(result.verdicts)")
        let estimate = try #require(result.json?["interval"]?["eventPeriodMs"]?.number)
        #expect(abs(estimate - 100) <= 3, "events every \(estimate) ms, set 100 (the sibling's: 300)")
        #expect(result.json?["name"]?.string == "beacon-emit audit layout=acme id1=0x01020304", "\(String(describing: result.json))")
    }

    /// Each mistake fails its own rule and no other.
    @Test(arguments: [
        (iBeacon + ["--connectable"], [String](), "non-connectable"),
        (["--ad", iBeaconBody], [String](), "flags"),
        (["--ad", "0201061AFF590002" + "15" + String(iBeaconBody.dropFirst(12))], ["--profile", "ibeacon"], "layout"),
        (iBeacon + ["--interval", "1000"], [String](), "interval"),
    ])
    func aWrongAdvertiserFailsExactlyItsRule(emitting: [String], options: [String], rule: String) throws {
        let seconds = rule == "interval" ? 8.0 : 3.0
        let result = try audit(emitting: emitting, for: seconds, options)
        // A runner so busy that it read the reports late may leave the interval not judged
        // (exit 3), never passed; the JSON must then show the late reads that made it so.
        if rule == "interval", result.status == 3 {
            let interval = result.json?["interval"]
            #expect(interval == nil || interval?["lateReads"]?.integer ?? 0 > 0, "not judged without late reads: \(result.stderr)")
            #expect(result.verdicts["interval"] == "inconclusive" && !result.verdicts.values.contains("fail"), "\(result.verdicts)")
            return
        }
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.verdicts.filter { $0.value == "fail" }.map(\.key) == [rule], "\(result.verdicts)")
    }

    /// A vendor's iBeacon at 1000 ms (raw HCI commands, not beacon-emit's), audited for 2 s:
    /// too few reports to estimate the interval, so not judged: exit 3, with how long would do;
    /// `--allow-inconclusive` passes it; the JUnit report skips the rule.
    @Test func aSlowBeaconHeardBrieflyIsNotJudged() throws {
        let advertiser = try TestAdvertiser(port: port, data: hex("0201061AFF4C000215" + Self.uuid.replacingOccurrences(of: "-", with: "")
                                                                  + "00650002C5"), intervalMilliseconds: 1000)
        defer { withExtendedLifetime(advertiser) {} }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = ["--uuid", Self.uuid, "--major", "101", "--minor", "2", "--interval", "1000"]
        let result = try runBeaconEmit(["audit", "--scanner", device, "--duration", "2", "--junit", path, "--json"] + chosen)
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        let json = try #require(JSONValue(parsing: result.stdoutLines.first ?? ""), "\(result.stdout)")
        #expect(json["verdict"]?.string == "inconclusive")
        let needed = try #require(json["neededSeconds"]?.number, "\(result.stdout)")
        #expect(needed >= 4 && needed <= 30, "\(needed)")
        #expect(result.stderr.contains("not judged: interval; listen for about"), "\(result.stderr)")
        let report = try JUnitCheck.read(path)
        #expect(report.skipped == 1 && report.failures == 0 && report.messages["interval"]?.contains("needed to estimate") == true,
                "\(report)")
        let allowed = try runBeaconEmit(["audit", "--scanner", device, "--duration", "2", "--allow-inconclusive"] + chosen)
        #expect(allowed.status == 0, "\(allowed.stdout) \(allowed.stderr)")
    }

    /// A correct 100 ms beacon audited on a busy machine (two busy processes per core beside
    /// the audit): never a failure; the interval passes or, if too few reports came on time,
    /// is not judged.
    @Test func aBusyHostNeverFailsACorrectBeacon() throws {
        let hogs = try (0..<(2 * ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            try BackgroundProcess("/bin/sh", ["-c", "while :; do :; done"])
        }
        defer { for hog in hogs { hog.signal(SIGKILL); _ = hog.wait() } }
        let result = try audit(emitting: Self.iBeacon, for: 8)
        #expect(result.status == 0 || result.status == 3, "\(result.verdicts) \(result.json?["rules"] as Any) \(result.stderr)")
        #expect(result.verdicts["interval"] == "pass" || result.verdicts["interval"] == "inconclusive", "\(result.verdicts)")
    }

    /// A beacon whose address rotates every second, audited twice with no choice made: each
    /// JUnit suite named by the beacon's identifiers, the same both times, whatever the address.
    @Test func aRotatingAddressKeepsTheSuitesName() throws {
        // On the air before the audits start, and until both have ended (a busy machine starts
        // each program late: a fixed duration saw one address in two audits under CI's load).
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "60", "--beacon",
                                                        "uuid=\(Self.uuid),major=7,minor=8,rotate-address=1"])
        defer {
            emitter.signal(SIGTERM)
            _ = emitter.wait()
        }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        var names: [[String]] = []
        var addresses: Set<String> = []
        for _ in 0..<2 {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).xml").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try runBeaconEmit(["audit", "--scanner", device, "--duration", "2.5", "--json", "--junit", path,
                                            "--allow-inconclusive"])
            let json = JSONValue(parsing: result.stdoutLines.first ?? "")
            for address in json?["addresses"]?.array ?? [] { if let text = address["address"]?.string { addresses.insert(text) } }
            names.append(try JUnitCheck.read(path).suites)
        }
        #expect(addresses.count >= 2, "the address should have rotated: \(addresses)")
        #expect(names.count == 2 && names[0] == names[1], "\(names)")
        #expect(names.first == ["beacon-emit audit ibeacon uuid=\(Self.uuid) major=7 minor=8"], "\(names)")
    }

    /// A vendor's beacon (raw HCI commands): measured power -65, no Flags, and a name beside
    /// the iBeacon (31 bytes). `verify` finds it by its identifiers and tells what differs; a stated
    /// measured power that differs fails; `--exact` compares bytes and fails.
    @Test func verifyFindsAVendorsBeaconByItsIdentifiers() throws {
        let body = "1AFF4C000215" + Self.uuid.replacingOccurrences(of: "-", with: "") + "00650002BF"
        let advertiser = try TestAdvertiser(port: port, data: hex(body + "0309" + "4C6F"))
        defer { withExtendedLifetime(advertiser) {} }
        let beacon = ["--uuid", Self.uuid, "--major", "101", "--minor", "2"]
        let found = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "3", "--json"] + beacon)
        #expect(found.status == 0, "\(found.stdout) \(found.stderr)")
        let json = try #require(JSONValue(parsing: found.stdoutLines.first ?? ""), "\(found.stdout)")
        let fields = json["differences"]?.array?.compactMap { $0["field"]?.string } ?? []
        #expect(fields.contains("measuredPower") && fields.contains("Flags") && fields.contains("Complete Local Name"), "\(found.stdout)")
        #expect(json["differences"]?.array?.allSatisfy { $0["stated"] == .bool(false) } == true)
        let stated = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "2", "--measured-power", "-59"] + beacon)
        #expect(stated.status == 1 && stated.stdout.contains("measuredPower: expected -59 dBm, heard -65 dBm"), "\(stated.stdout)")
        let exact = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "1", "--exact"] + beacon)
        #expect(exact.status == 1 && exact.stdout.contains("the closest of"), "\(exact.stdout)")
    }

    /// A beacon of an app's layout (a vendor's firmware, raw HCI: power -65 where -70 is
    /// described) is found by its layout and identifiers, the power named as the one thing that
    /// differs (not its structure again); as described, it passes; with another identifier it is
    /// not found.
    @Test func verifyFindsALayoutsBeaconThroughItsLayout() throws {
        // m:2-2=7a, i:3-6 01020304, i:7-8l 258 (02 01), p:9-9 -65 (BF), d:10-11l 4660 (34 12), d:12-12 5.
        let advertiser = try TestAdvertiser(port: port, data: hex("0201060EFFFFFF7A010203040201BF341205"))
        defer { withExtendedLifetime(advertiser) {} }
        let beacon = ["--layout", "acme=" + LayoutCommandTests.acme, "--id", "0x01020304", "--id", "258", "--data", "0x1234",
                      "--data", "5", "--measured-power", "-70"]
        // The measured power a layout needs is stated (`--measured-power`): its difference fails.
        let found = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "3", "--json"] + beacon)
        #expect(found.status == 1, "\(found.stdout) \(found.stderr)")
        let json = try #require(JSONValue(parsing: found.stdoutLines.first ?? ""), "\(found.stdout)")
        #expect(json["mode"]?.string == "identity" && json["beacon"]?.string == "layout layout=acme ids=0x01020304,258",
                "\(found.stdout)")
        let differences = json["differences"]?.array ?? []
        #expect(differences.count == 1 && differences.first?["field"]?.string == "measuredPower"
                && differences.first?["heard"]?.string == "-65 dBm", "\(found.stdout)")
        let heard = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "3"]
                                      + beacon.map { $0 == "-70" ? "-65" : $0 })
        #expect(heard.status == 0, "\(heard.stdout) \(heard.stderr)")
        let other = beacon.map { $0 == "0x01020304" ? "0x01020305" : $0 }
        let missing = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "1"] + other)
        #expect(missing.status == 1, "\(missing.stdout) \(missing.stderr)")
    }

    /// Text first says the verdict; the JUnit report has a test case per rule, a failure for the one that failed.
    @Test func textAndJUnitSayWhatFailed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "5", "--connectable"] + Self.iBeacon)
        defer { _ = emitter.wait() }
        Thread.sleep(forTimeInterval: 1)
        let result = try runBeaconEmit(["audit", "--scanner", device, "--duration", "2", "--junit", path,
                                        "--uuid", Self.uuid, "--major", "101", "--minor", "2"])
        #expect(result.status == 1)
        #expect(result.stdoutLines.first?.hasPrefix("FAIL: ibeacon (what was heard) at ") == true, "\(result.stdout)")
        #expect(result.stdout.contains("FAIL non-connectable") && result.stdout.contains("seen: ADV_IND"), "\(result.stdout)")
        let xml = try String(contentsOfFile: path, encoding: .utf8)
        #expect(xml.contains("failures=\"1\""), "\(xml)")
        #expect(xml.contains("name=\"non-connectable\">\n      <failure message=\"seen: ADV_IND;"), "\(xml)")
        #expect(try JUnitCheck.read(path).failures == 1)
        let nobody = try runBeaconEmit(["audit", "--scanner", device, "--duration", "0.5", "--uuid",
                                        "00000000-0000-0000-0000-000000000001"])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("the advertiser chosen was not heard"), "\(nobody.stderr)")
    }
}
}

/// `audit --replay`: captures of the virtual radio (an Eddystone-URL and an iBeacon on one
/// address, every 100 ms each, made by scripts/make-capture) in each format audited without a
/// device; an air sniffer's link-layer capture too.
@Suite struct AuditReplayTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test(arguments: ["rootcanal-scan.btsnoop", "pcap/rootcanal-scan.pcap", "pcap/rootcanal-scan.pcapng"])
    func aCaptureIsAuditedAndItsInterleavedFramesSetApart(file: String) throws {
        let result = try runBeaconEmit(["audit", "--replay", Self.fixtures.appendingPathComponent(file).path, "--json"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let json = try #require(JSONValue(parsing: result.stdoutLines.first ?? ""))
        #expect(json["profile"]?.string == "eddystone-url")
        #expect(json["interleaved"]?.array?.first?.string == "ibeacon x16")
        #expect(json["distinctData"]?.integer == 1)
        let period = try #require(json["interval"]?["eventPeriodMs"]?.number)
        #expect(abs(period - 100) <= 3, "events every \(period) ms")
    }

    /// An air sniffer's capture: the PDUs as sent (a legacy and an extended one), no RSSI in
    /// the plain link-layer format; two packets are too few for an interval: inconclusive,
    /// exit 3, and with --allow-inconclusive exit 0 (the extended PDU a warning).
    @Test(arguments: ["pcap/sniffer-ll.pcap", "pcap/sniffer-ll-phdr.pcap"])
    func aSniffersCaptureIsAuditedToo(file: String) throws {
        let path = Self.fixtures.appendingPathComponent(file).path
        let result = try runBeaconEmit(["audit", "--replay", path, "--json"])
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        let json = try #require(JSONValue(parsing: result.stdoutLines.first ?? ""))
        #expect(json["profile"]?.string == "ibeacon" && json["reports"]?.integer == 2, "\(result.stdout)")
        #expect(json["pdu"]?.array?.map(\.text) == ["ADV_NONCONN_IND x1", "extended (non-connectable) x1"], "\(result.stdout)")
        #expect(json["verdict"]?.string == "inconclusive")
        #expect(result.stderr.contains("not judged: interval"), "\(result.stderr)")
        let allowed = try runBeaconEmit(["audit", "--replay", path, "--allow-inconclusive"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.hasPrefix("INCONCLUSIVE: ibeacon"), "\(allowed.stdout)")
    }

    /// A capture whose packets all carry one time (text2pcap's whole seconds): no interval to
    /// estimate, said as not judged, not a guess, and not a pass.
    @Test func aCaptureWithoutTimesGivesNoInterval() throws {
        let result = try runBeaconEmit(["audit", "--replay", Self.fixtures.appendingPathComponent("pcap/rootcanal-scan-h4.pcap").path])
        #expect(result.status == 3)
        #expect(result.stdout.contains("?    interval") && result.stdout.contains("1 report on time, 4 needed"), "\(result.stdout)")
    }

    /// `--junit` on every way a replayed audit ends, each file a valid JUnit report named the
    /// same (the beacon's identifiers): passed, not heard (a failing `heard` case), a capture
    /// that cannot be read (an error case), not judged (a skipped case).
    @Test func theJUnitReportIsWrittenWhateverTheOutcome() throws {
        let capture = Self.fixtures.appendingPathComponent("rootcanal-scan.btsnoop").path
        let url = ["--url", "https://www.example.com/x"]
        let cases: [(arguments: [String], status: Int32, failures: Int, errors: Int, skipped: Int)] = [
            (["--replay", capture] + url, 0, 0, 0, 0),
            (["--replay", capture, "--url", "https://nowhere.example/"], 1, 1, 0, 0),
            (["--replay", "/nonexistent.btsnoop"] + url, 74, 0, 1, 0),
            (["--replay", Self.fixtures.appendingPathComponent("pcap/rootcanal-scan-h4.pcap").path] + url, 3, 0, 0, 1),
        ]
        for item in cases {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).xml").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try runBeaconEmit(["audit", "--junit", path] + item.arguments)
            #expect(result.status == item.status, "\(item.arguments): \(result.stderr)")
            let report = try JUnitCheck.read(path)
            #expect(report.failures == item.failures && report.errors == item.errors && report.skipped == item.skipped,
                    "\(item.arguments): \(report)")
            let expected = item.arguments.contains("https://nowhere.example/")
                ? "beacon-emit audit url=https://nowhere.example/" : "beacon-emit audit url=https://www.example.com/x"
            #expect(report.suites == [expected], "\(report)")
        }
    }

    @Test func theRulesAreListed() throws {
        let result = try runBeaconEmit(["audit", "--list-rules"])
        #expect(result.status == 0)
        for rule in ["flags", "layout", "non-connectable", "legacy-pdu", "interval", "data-constant", "events-heard"] {
            #expect(result.stdoutLines.contains(rule), "\(rule): \(result.stdout)")
        }
        #expect(result.stdout.contains("Apple, Proximity Beacon Specification R1"))
    }

    /// A capture that does not open is an I/O failure (74); one that does not decode, a data error (65).
    @Test func anUnreadableCaptureIsAnIOErrorAndAMalformedOneADataError() throws {
        let missing = try runBeaconEmit(["audit", "--replay", "/nonexistent.btsnoop"])
        #expect(missing.status == 74, "\(missing.stderr)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).btsnoop").path
        try Data("btsnoop\0 not a capture".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let malformed = try runBeaconEmit(["audit", "--replay", path])
        #expect(malformed.status == 65, "\(malformed.stderr)")
    }
}
