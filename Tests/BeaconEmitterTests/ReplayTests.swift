// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import BeaconReports
import BeaconRig
import BeaconTracking
import Foundation
import Testing

/// A site's capture, made here (not recorded from our own advertiser): advertising reports as
/// a scanner's controller sends them, each at its time.
enum SiteCapture {
    /// The event for one legacy advertising report.
    static func report(type: UInt8, addressType: UInt8, address: String, data: String, rssi: Int8 = -60) -> [UInt8] {
        let address = (try? BluetoothAddress(parsing: address))?.littleEndianBytes ?? []
        let data = hex(data)
        let parameters: [UInt8] = [0x02, 0x01, type, addressType] + address + [UInt8(data.count)] + data
            + [UInt8(bitPattern: rssi)]
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }

    /// A btsnoop file (datalink 1002, H4) of `events`, each at its time (seconds).
    static func write(_ events: [(time: Double, event: [UInt8])]) throws -> String {
        var bytes = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        let start: Int64 = 0x00E0_3AB4_4A67_6000
        for (time, event) in events.sorted(by: { $0.time < $1.time }) {
            let body = event  // the H4 type byte (04, an event) first
            let length = UInt32(body.count)
            for field in [length, length, 3, 0] { bytes += withUnsafeBytes(of: field.bigEndian, Array.init) }
            bytes += withUnsafeBytes(of: (start + Int64(time * 1_000_000)).bigEndian, Array.init)
            bytes += body
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("site-\(UUID().uuidString).btsnoop")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// `replay PATH -i RIG --json EXTRA` beside a raw HCI scanner for `seconds`: every report
    /// heard (with its time since the replay started), the replay's exit status, its JSON
    /// lines of `event` (each kind by its name) and its standard output and error.
    static func replayHeard(_ path: String, _ extra: [String] = [], seconds: Int) throws
        -> (heard: [(at: Double, report: ScanReport)], status: Int32, events: [String: [JSONValue]], output: String) {
        let scanner = try TestScanner(port: rigPort ?? 0)
        let started = ContinuousClock.now
        let replay = try BackgroundProcess.beaconEmit(["replay", path, "-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--json"] + extra)
        var heard: [(at: Double, report: ScanReport)] = []
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let report = try scanner.scanner.nextReport(timeout: ContinuousClock.now.duration(to: deadline)) {
                heard.append((started.duration(to: .now).inSeconds, report))
            }
        }
        let status = replay.wait()
        let lines = replay.stdout.split(separator: "\n").compactMap { JSONValue(parsing: String($0)) }
        let events = Dictionary(grouping: lines) { $0["event"]?.string ?? "" }
        return (heard, status, events, replay.stdout + replay.stderr)
    }

    /// A site where an iBeacon (a1, every 300 ms) walks out at 2.9 s and back at 5.9 s; a
    /// scannable advertiser a passive scan heard (a2: no scan response) and one whose scan
    /// response is empty (a3); one that pauses 1.8 s now and then (a4: under the default gap,
    /// over a --gap of 1); a connectable one (a5). Nine seconds.
    static func walkers() throws -> String {
        var events: [(Double, [UInt8])] = []
        func every(_ period: Double, _ spans: [(Double, Double)], offset: Double, type: UInt8, addressType: UInt8 = 0x01,
                   address: String, data: String, emptyResponse: Bool = false) {
            for (from, to) in spans {
                for time in stride(from: from + offset, through: to, by: period) {
                    events.append((time, report(type: type, addressType: addressType, address: address, data: data)))
                    if emptyResponse { events.append((time + 0.001, report(type: 0x04, addressType: addressType, address: address, data: ""))) }
                }
            }
        }
        every(0.3, [(0, 2.9), (5.9, 8.9)], offset: 0, type: 0x03, address: "C1:00:00:00:01:01", data: iBeacon)
        every(0.2, [(0, 8.9)], offset: 0.002, type: 0x02, address: "C1:00:00:00:01:02", data: url)
        every(0.25, [(0, 8.9)], offset: 0.004, type: 0x02, address: "C1:00:00:00:01:03",
              data: "0201060303AAFE0E16AAFE10EE036578616D706C6508", emptyResponse: true)
        every(0.3, [(0, 3), (4.5, 8.9)], offset: 0.006, type: 0x03, address: "C1:00:00:00:01:04",
              data: "0201060303AAFE0E16AAFE10EE036578616D706C6509")
        every(0.5, [(0, 8.9)], offset: 0.008, type: 0x00, addressType: 0x00, address: publicAddress,
              data: "0201060303AAFE0E16AAFE10EE036578616D706C650A")
        return try write(events)
    }

    static let url = "0201060303AAFE0E16AAFE10EE036578616D706C6507"
    static let iBeacon = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"
    static let staticAddress = "C1:22:33:44:55:66"
    static let publicAddress = "00:1A:7D:DA:71:13"

    /// Two advertisers: a static random one, non-connectable, every 100 ms (+2 ms of advDelay)
    /// from 0 to 2 s, heard twice on one event now and then and missing two events; a public
    /// one, connectable, every 200 ms from 1 s to 2 s.
    static func site() throws -> String {
        var events: [(Double, [UInt8])] = []
        for index in 0...20 where index != 7 && index != 13 {
            let time = Double(index) * 0.102
            events.append((time, report(type: 0x03, addressType: 0x01, address: staticAddress, data: url)))
            if index % 5 == 0 { events.append((time + 0.003, report(type: 0x03, addressType: 0x01, address: staticAddress, data: url))) }
        }
        for index in 0...5 {
            events.append((1 + Double(index) * 0.205, report(type: 0x00, addressType: 0x00, address: publicAddress, data: iBeacon)))
        }
        return try write(events)
    }
}

/// The capture's advertisers and the plan, without a controller.
@Suite struct ReplayPlanTests {
    /// Each advertiser's stays as the plan lists them, the PDU type sent and captured; a
    /// silence under --gap or under five of its intervals is no going; what --check passes
    /// (an empty scan response) the replay can send; the table's columns whole.
    @Test func stayAndPDUTypeArePlannedAsCaptured() throws {
        let path = try SiteCapture.walkers()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["replay", path, "--check", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = result.stdoutLines.compactMap { JSONValue(parsing: $0) }.filter { $0["event"]?.string == "plan" }
        try #require(plan.count == 5, "\(result.stdout)")
        func spans(_ entry: JSONValue) -> [[Double]] { entry["spans"]?.array?.map { $0.array?.compactMap(\.number) ?? [] } ?? [] }
        let walker = spans(plan[0])
        #expect(walker.count == 2 && walker[0][0] == 0 && abs(walker[0][1] - 3.0) < 0.1 && abs(walker[1][0] - 5.9) < 0.01,
                "a1 goes at 2.7 s (+ its period) and comes back at 5.9 s: \(walker)")
        #expect(plan[1]["pduType"]?.string == "ADV_SCAN_IND" && plan[1]["capturedPduType"]?.string == "ADV_SCAN_IND", "\(plan[1])")
        #expect(plan[2]["pduType"]?.string == "ADV_SCAN_IND", "an empty scan response: \(plan[2])")
        #expect(spans(plan[3]).count == 1 && spans(plan[4]).count == 1, "1.8 s pauses of a 300 ms advertiser: no going")
        #expect(plan[4]["pduType"]?.string == "ADV_IND" && plan[0]["pduType"]?.string == "ADV_NONCONN_IND")
        let shorter = try runBeaconEmit(["replay", path, "--check", "--json", "--gap", "1"])
        let paused = shorter.stdoutLines.compactMap { JSONValue(parsing: $0) }.filter { $0["event"]?.string == "plan" }
        #expect(paused.count == 5 && spans(paused[3]).count == 2, "over a --gap of 1 and 5 x 300 ms: \(shorter.stdout)")
        let table = try runBeaconEmit(["replay", path, "--check"])
        #expect(table.status == 0 && table.stdout.contains("a1 is there 0.0-3.0 s, 5.9-9.2 s"), "\(table.stdout)")
        // The audit agrees: the walker's 3 s away is no events missed, and it says so.
        let audit = try runBeaconEmit(["audit", "--replay", path, "--address", "C1:00:00:00:01:01", "--json", "--allow-inconclusive"])
        let judged = try #require(JSONValue(parsing: audit.stdout), "\(audit.stdout) \(audit.stderr)")
        #expect(judged["interval"]?["stays"]?.number == 2 && judged["interval"]?["eventsSent"]?.number == 21, "\(audit.stdout)")
        let badGap = try runBeaconEmit(["replay", path, "--check", "--gap", "0"])
        #expect(badGap.status == 64 && badGap.stderr.contains("--gap must be from 0.1 to 3600 seconds"), "\(badGap.stderr)")

        // An advertiser every 10.24 s: its interval whole in the table, under its own heading.
        let slow = try SiteCapture.write((0..<4).map { (Double($0) * 10.245, SiteCapture.report(
            type: 0x03, addressType: 0x01, address: SiteCapture.staticAddress, data: SiteCapture.url)) })
        defer { try? FileManager.default.removeItem(atPath: slow) }
        let wide = try runBeaconEmit(["replay", slow, "--check"])
        let lines = wide.stdoutLines
        let header = try #require(lines.first { $0.hasPrefix("name") }), row = try #require(lines.first { $0.hasPrefix("a1") })
        let column = try #require(header.range(of: "interval")).lowerBound.utf16Offset(in: header)
        #expect(row.dropFirst(column).hasPrefix("10240.0 ms"), "\(wide.stdout)")
    }

    /// One period from report times despite events heard twice, missed events and advDelay.
    @Test func theIntervalIsEstimatedRobustly() {
        // 100 ms + 5 ms of advDelay on average; an event heard twice; two missed.
        var times: [Double] = []
        for index in 0..<40 where index != 10 && index != 11 && index != 30 { times.append(Double(index) * 0.105) }
        times.append(0.3 + 0.004)
        let interval = CaptureSurvey.interval(times: times)
        #expect(interval.map { abs($0 - 100) < 1 } == true, "\(interval as Any)")
        #expect(CaptureSurvey.interval(times: [1]) == nil)
    }

    @Test func theSitesAdvertisersArePlanned() throws {
        let path = try SiteCapture.site()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["replay", path, "--check", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = result.stdoutLines.compactMap { JSONValue(parsing: $0) }.filter { $0["event"]?.string == "plan" }
        #expect(plan.count == 2, "\(result.stdout)")
        let first = try #require(plan.first), second = try #require(plan.last)
        #expect(first["address"]?.string == SiteCapture.staticAddress && first["sentAs"]?.string == SiteCapture.staticAddress,
                "a static random address is kept: \(first)")
        #expect(first["pduType"]?.string == "ADV_NONCONN_IND" && first["data"]?.string == SiteCapture.url)
        #expect((first["interval"]?.number).map { abs($0 - 96.875) < 2 } == true, "about 97 ms + 5 of advDelay: \(first)")
        #expect(second["address"]?.string == SiteCapture.publicAddress && second["sentAs"]?.string != SiteCapture.publicAddress,
                "a public address gets a static random one of its own: \(second)")
        let sentAs = try BluetoothAddress(parsing: second["sentAs"]?.string ?? "")
        #expect(sentAs.isStaticRandom)
        #expect(second["pduType"]?.string == "ADV_IND" && (second["start"]?.number).map { abs($0 - 1) < 0.01 } == true)
        // --only, --speed, and the mistakes.
        let only = try runBeaconEmit(["replay", path, "--check", "--json", "--only", SiteCapture.publicAddress, "--speed", "2"])
        #expect(only.stdoutLines.filter { $0.contains(#""event":"plan""#) }.count == 1 && only.stdout.contains(#""start":0.5,"#), "\(only.stdout)")
        // Chosen as scan chooses reports: a beacon's format or region, the strength in the capture.
        let eddystone = try runBeaconEmit(["replay", path, "--check", "--json", "--format", "eddystone"])
        #expect(eddystone.stdoutLines.filter { $0.contains(#""event":"plan""#) }.count == 1 && eddystone.stdout.contains(SiteCapture.staticAddress), "\(eddystone.stdout)")
        let region = try runBeaconEmit(["replay", path, "--check", "--json", "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "101"])
        #expect(region.stdoutLines.filter { $0.contains(#""event":"plan""#) }.count == 1 && region.stdout.contains(SiteCapture.publicAddress), "\(region.stdout)")
        let weak = try runBeaconEmit(["replay", path, "--check", "--min-rssi", "-50"])
        #expect(weak.status == 65 && weak.stderr.contains("no advertiser of the capture passes the filter given"), "\(weak.stderr)")
        let none = try runBeaconEmit(["replay", path, "--check", "--only", "11:22:33:44:55:66"])
        #expect(none.status == 65 && none.stderr.contains("no advertiser of the capture is at the address given to --only"),
                "\(none.stderr)")
        let missing = try runBeaconEmit(["replay", "/nonexistent.btsnoop", "--check"])
        #expect(missing.status == 74 && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
        let bad = try runBeaconEmit(["replay", path, "--speed", "0"])
        #expect(bad.status == 64, "\(bad.stderr)")
        let loopCheck = try runBeaconEmit(["replay", path, "--loop", "--check"])
        #expect(loopCheck.status == 64 && loopCheck.stderr.contains("--loop runs the plan"), "\(loopCheck.stderr)")
    }
}

extension Rig {
/// The site's capture put back on the air, judged by a raw HCI scanner: data and PDU type
/// exact, the static address kept and the public one mapped, intervals, and the second
/// advertiser coming a second after the first.
@Suite struct ReplayRootcanalTests {
    @Test(.notUnderEmulation("the timeline is seconds long"))
    func aSitesCaptureIsBackOnTheAir() throws {
        let path = try SiteCapture.site()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (heard, status, events, output) = try SiteCapture.replayHeard(path, seconds: 5)
        #expect(status == 0, "\(output)")
        let plan = events["plan"] ?? []
        let mapped = try BluetoothAddress(parsing: plan.last?["sentAs"]?.string ?? "")
        let staticAddress = try BluetoothAddress(parsing: SiteCapture.staticAddress)
        let first = heard.filter { $0.report.address == staticAddress }
        let second = heard.filter { $0.report.address == mapped }
        #expect(first.count >= 10 && first.allSatisfy { HexText.format($0.report.data) == SiteCapture.url },
                "the static advertiser, its data exact: \(first.count) reports")
        #expect(first.allSatisfy { $0.report.kind.map { !$0.contains(AdvertisingPDUKind.connectable) } == true },
                "non-connectable as captured")
        #expect(second.count >= 3 && second.allSatisfy { HexText.format($0.report.data) == SiteCapture.iBeacon },
                "the public advertiser from its new address: \(second.count) reports")
        #expect(second.allSatisfy { $0.report.kind.map { $0.contains(AdvertisingPDUKind.connectable) } == true },
                "connectable as captured")
        #expect(!heard.contains { $0.report.address == (try? BluetoothAddress(parsing: SiteCapture.publicAddress)) },
                "never from the public address")
        if let a = first.first?.at, let b = second.first?.at {
            #expect(abs((b - a) - 1) < 0.5, "the second comes a second after the first: \(b - a) s")
        }
        // The static advertiser's period: the plan's interval (rootcanal adds no advDelay).
        let times = first.map(\.at)
        if times.count > 5, let interval = plan.first?["interval"]?.number {
            let period = (times.last! - times.first!) / Double(times.count - 1) * 1000
            #expect(abs(period - interval) < interval * 0.15, "heard every \(period) ms, planned \(interval) ms")
        }
    }
}
}

extension Rig {
/// Six advertisers at once on two sets: they take turns of a second, and a raw HCI scanner
/// hears each at the period the plan says (`achievedInterval`), all six in every round.
@Suite struct ReplayTurnsRootcanalTests {
    /// `count` static advertisers of Eddystone-URL data of their own, every 100 ms for `seconds`.
    static func crowd(_ count: Int = 6, seconds: Int = 6) throws -> String {
        var events: [(Double, [UInt8])] = []
        for number in 1...count {
            for index in 0..<(seconds * 10) {
                events.append((Double(index) * 0.1 + Double(number) * 0.001, SiteCapture.report(
                    type: 0x03, addressType: 0x01, address: String(format: "C1:22:33:44:56:%02X", number),
                    data: String(format: "0201060303AAFE0E16AAFE10EE036578616D706C65%02X", number))))
            }
        }
        return try SiteCapture.write(events)
    }

    @Test(.notUnderEmulation("the turns are seconds long"))
    func moreAdvertisersThanSetsTakeTurnsAtThePeriodPlanned() throws {
        let path = try Self.crowd()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (heard, status, events, output) = try SiteCapture.replayHeard(path, ["--sets", "2", "--turn", "1"], seconds: 8)
        #expect(status == 0, "\(output)")
        let plan = events["plan"] ?? []
        #expect(plan.count == 6, "\(output)")
        // At the end, what was sent: each on the air about a third of the 6 s.
        let sent = events["sent"] ?? []
        #expect(sent.count == 6 && sent.allSatisfy { ($0["onAirSeconds"]?.number).map { abs($0 - 2) < 0.3 } == true },
                "\(sent)")
        for entry in plan {
            let address = try BluetoothAddress(parsing: entry["sentAs"]?.string ?? "")
            let times = heard.filter { $0.report.address == address }.map(\.at)
            guard let achieved = entry["achievedInterval"]?.number, let first = times.first, let last = times.last,
                  times.count > 4 else {
                Issue.record("\(address): heard \(times.count) times, plan \(entry)")
                continue
            }
            // Three rounds of a third of the time on the air: about 3 x (interval + advDelay);
            // rootcanal adds no advDelay, so the period heard is up to 5 % shorter.
            #expect(abs(achieved - 3 * (entry["interval"]?.number ?? 0) - 15) < 2, "\(entry)")
            // The period over the span it was heard in, from its first report to a full round after its last.
            let period = (last - first + 2) / Double(times.count) * 1000
            #expect(abs(period - achieved) < achieved * 0.2, "\(address): heard every \(period) ms, planned \(achieved) ms")
        }
    }
}
}

extension Rig {
/// Two advertisers heard 20 dB apart in the capture go out 20 dB apart: each set's parameters
/// carry its TX power (the virtual radio's RSSI does not follow TX power, so the commands are
/// what is checked); --same-power leaves them at the controller's default.
@Suite struct ReplayStrengthRootcanalTests {
    @Test func theCapturesStrengthsAreTheSetsTXPowers() throws {
        var events: [(Double, [UInt8])] = []
        for (number, rssi) in [(1, Int8(-40)), (2, Int8(-60))] {
            for index in 0..<10 {
                events.append((Double(index) * 0.1 + Double(number) * 0.001,
                               SiteCapture.report(type: 0x03, addressType: 0x01, address: "C1:22:33:44:55:6\(number)",
                                                  data: SiteCapture.url, rssi: rssi)))
            }
        }
        let path = try SiteCapture.write(events)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let device = "tcp:127.0.0.1:\(rigPort ?? 0)"
        let replay = try runBeaconEmit(["replay", path, "-i", device, "-v", "--duration", "0.5"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let powers = replay.stderr.split(separator: "\n").filter { $0.contains(": parameters: ") }.map { $0.components(separatedBy: "TX power ").last ?? "" }
        #expect(powers.sorted() == ["-20 dBm", "0 dBm"], "\(powers)")
        let same = try runBeaconEmit(["replay", path, "-i", device, "-v", "--duration", "0.5", "--same-power"])
        #expect(same.status == 0 && !same.stderr.contains("TX power -20 dBm"), "\(same.stderr)")
    }
}
}

extension Rig {
/// An advertiser the capture heard in extended PDUs is put back in extended PDUs (a scanner of
/// extended reports sees no legacy flag), a legacy one beside it in legacy PDUs.
@Suite struct ReplayExtendedRootcanalTests {
    /// An LE Extended Advertising Report event: a non-connectable, non-scannable extended PDU.
    static func extendedReport(address: String, data: String) -> [UInt8] {
        let address = (try? BluetoothAddress(parsing: address))?.littleEndianBytes ?? []
        let data = hex(data)
        // Subevent, one report, event type 0x0000, random address; PHYs, SID, TX power, RSSI,
        // no periodic interval, no direct address; then the data.
        var parameters: [UInt8] = [0x0D, 0x01, 0x00, 0x00, 0x01]
        parameters += address
        let fixed: [UInt8] = [0x01, 0x00, 0x00, 0x7F, 0xC9, 0x00, 0x00, 0x00]
        parameters += fixed
        parameters += [UInt8](repeating: 0, count: 6)
        parameters.append(UInt8(data.count))
        parameters += data
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }

    @Test func extendedPDUsGoOutAsCaptured() throws {
        var events: [(Double, [UInt8])] = []
        for index in 0..<10 {
            events.append((Double(index) * 0.1, Self.extendedReport(address: "C1:22:33:44:55:71", data: SiteCapture.url)))
            events.append((Double(index) * 0.1 + 0.01, SiteCapture.report(type: 0x03, addressType: 0x01,
                                                                           address: "C1:22:33:44:55:72", data: SiteCapture.url)))
        }
        let path = try SiteCapture.write(events)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let plan = try runBeaconEmit(["replay", path, "--check", "--json"])
        #expect(plan.stdout.contains(#""pduType":"ADV_EXT_IND""#) && plan.stdout.contains(#""pduType":"ADV_NONCONN_IND""#),
                "\(plan.stdout)")
        let scanner = try TestScanner(port: rigPort ?? 0, extended: true)
        let replay = try BackgroundProcess.beaconEmit(["replay", path, "-i", "tcp:127.0.0.1:\(rigPort ?? 0)"])
        let heard = try scanner.collect(timeout: .seconds(3)) { reports in
            Set(reports.filter { HexText.format($0.data) == SiteCapture.url }.map(\.address)).count == 2
        }
        #expect(replay.wait() == 0, "\(replay.stderr)")
        let extended = heard.filter { $0.address == (try? BluetoothAddress(parsing: "C1:22:33:44:55:71")) }
        let legacy = heard.filter { $0.address == (try? BluetoothAddress(parsing: "C1:22:33:44:55:72")) }
        #expect(!extended.isEmpty && extended.allSatisfy { $0.kind.map { !$0.contains(.legacy) } == true }, "\(extended)")
        #expect(!legacy.isEmpty && legacy.allSatisfy { $0.kind.map { $0.contains(.legacy) } == true }, "\(legacy)")
    }
}
}

extension Rig {
/// docs/test-rigs.md's "from a field capture to the lab", steps 4 and 5 on the virtual radio:
/// the capture's iBeacon replayed in a loop, audited from a second device at the address the
/// plan gives and at the plan's interval, passes as it does from the capture.
@Suite struct FieldToLabRootcanalTests {
    @Test(.notUnderEmulation("the audit listens for seconds"))
    func theLabsAdvertiserPassesTheAuditTheSitesDid() throws {
        let device = "tcp:127.0.0.1:\(rigPort ?? 0)"
        let site = try runBeaconEmit(["audit", "--replay", "examples/lobby.btsnoop", "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2"])
        #expect(site.status == 0 && site.stdout.hasPrefix("PASS: ibeacon"), "\(site.stdout)\(site.stderr)")
        let replay = try BackgroundProcess.beaconEmit(["replay", "examples/lobby.btsnoop", "-i", device, "--loop", "--json",
                                                       "--format", "ibeacon", "--duration", "30"])
        defer {
            replay.signal(SIGINT)
            _ = replay.wait()
        }
        _ = replay.waitForOutput(#""event":"plan""#)
        let plan = replay.stdout.split(separator: "\n").compactMap { JSONValue(parsing: String($0)) }
            .first { $0["event"]?.string == "plan" }
        let sentAs = try #require(plan?["sentAs"]?.string, "\(replay.stdout)\(replay.stderr)")
        let interval = try #require(plan?["interval"]?.number)
        let lab = try runBeaconEmit(["audit", "-i", device, "--address", sentAs, "--interval", "\(interval)", "--duration", "4"])
        #expect(lab.status == 0 && lab.stdout.hasPrefix("PASS: ibeacon"), "\(lab.stdout)\(lab.stderr)")
        #expect(lab.stdout.contains("PASS interval"), "\(lab.stdout)")
    }
}
}

extension Rig {
/// A site of eight advertisers of mixed formats (iBeacon, AltBeacon, Eddystone UID and URL),
/// intervals (100 ms to 1 s), PDU types (non-connectable, scannable with its scan response,
/// connectable) and address types (static, public, resolvable and non-resolvable private), one
/// of which goes and one comes: a raw HCI scanner hears each as captured, from an address of
/// its own (one to one), at its interval, when it was there.
@Suite struct ReplaySiteRootcanalTests {
    struct Advertiser {
        var address: String, addressType: UInt8, type: UInt8, data: String, interval: Double, from: Double, to: Double
    }

    static let site: [Advertiser] = [
        .init(address: "C1:00:00:00:00:01", addressType: 1, type: 0x03,
              data: "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200010009C5", interval: 0.1, from: 0, to: 3),
        .init(address: "00:1A:7D:00:00:02", addressType: 0, type: 0x03,
              data: "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D20001000AC5", interval: 0.2, from: 0, to: 3),
        .init(address: "5A:00:00:00:00:03", addressType: 1, type: 0x03,
              data: "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D20001000BC5", interval: 0.5, from: 0, to: 3),
        .init(address: "1A:00:00:00:00:04", addressType: 1, type: 0x03,
              data: "0201061BFF1801BEAC39ED98FF2900441A802F9C398FC199D200070008C500", interval: 0.25, from: 0, to: 3),
        .init(address: "C1:00:00:00:00:05", addressType: 1, type: 0x02,
              data: "0201060303AAFE1716AAFE00EE00112233445566778899AABBCCDDEEFF0000", interval: 0.3, from: 0, to: 3),
        .init(address: "00:1A:7D:00:00:06", addressType: 0, type: 0x00,
              data: "0201060303AAFE0E16AAFE10EE036578616D706C6508", interval: 1, from: 0, to: 3),
        .init(address: "C1:00:00:00:00:07", addressType: 1, type: 0x03,
              data: "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D20001000CC5", interval: 0.1, from: 0, to: 1.4),
        .init(address: "C1:00:00:00:00:08", addressType: 1, type: 0x03,
              data: SiteCapture.url, interval: 0.1, from: 1.6, to: 3),
    ]
    static let scanResponse = "0C09626561636F6E2D656D6974"

    @Test(.notUnderEmulation("the site's timeline is seconds long"))
    func eachAdvertiserIsBackAsCaptured() throws {
        var events: [(Double, [UInt8])] = []
        for (number, advertiser) in Self.site.enumerated() {
            var time = advertiser.from + Double(number) * 0.003
            while time < advertiser.to {
                events.append((time, SiteCapture.report(type: advertiser.type, addressType: advertiser.addressType,
                                                        address: advertiser.address, data: advertiser.data)))
                if advertiser.type == 0x02 {
                    events.append((time + 0.001, SiteCapture.report(type: 0x04, addressType: advertiser.addressType,
                                                                    address: advertiser.address, data: Self.scanResponse)))
                }
                time += advertiser.interval
            }
        }
        let path = try SiteCapture.write(events)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (heard, status, said, output) = try SiteCapture.replayHeard(path, seconds: 6)
        #expect(status == 0, "\(output)")
        let plan = said["plan"] ?? []
        try #require(plan.count == 8, "\(output)")
        let sentAs = try plan.map { try BluetoothAddress(parsing: $0["sentAs"]?.string ?? "") }
        #expect(Set(sentAs).count == 8, "one address each: \(sentAs)")
        let captured = try Self.site.map { try BluetoothAddress(parsing: $0.address) }
        var mapped = Set<BluetoothAddress>()
        for (index, address) in captured.enumerated() where Self.site[index].addressType == 0 || !address.isStaticRandom {
            mapped.insert(address)
        }
        #expect(mapped.count == 4 && !heard.contains { mapped.contains($0.report.address) },
                "nothing from a captured public, resolvable or non-resolvable address")
        let origin = heard.first { $0.report.address == sentAs[0] }?.at ?? 0
        for (index, advertiser) in Self.site.enumerated() {
            let own = heard.filter { $0.report.address == sentAs[index] && !($0.report.kind?.contains(.scanResponse) ?? false) }
            let name = "advertiser \(index + 1) (\(advertiser.address))"
            guard own.count >= 2 else {
                Issue.record("\(name): heard \(own.count) times")
                continue
            }
            #expect(own.allSatisfy { HexText.format($0.report.data) == advertiser.data }, "\(name): its data exact")
            if advertiser.addressType == 1 && (try? BluetoothAddress(parsing: advertiser.address))?.isStaticRandom == true {
                #expect(sentAs[index] == captured[index], "\(name): a static address kept")
            }
            let kind = own.first?.report.kind ?? []
            switch advertiser.type {
            case 0x00: #expect(kind.contains(.connectable), "\(name): connectable as captured, heard \(kind)")
            case 0x02: #expect(kind.contains(.scannable) && !kind.contains(.connectable), "\(name): scannable, heard \(kind)")
            default: #expect(!kind.contains(.connectable) && !kind.contains(.scannable), "\(name): non-connectable, heard \(kind)")
            }
            let times = own.map(\.at)
            if times.count >= 4, let interval = plan[index]["interval"]?.number {
                let period = (times.last! - times.first!) / Double(times.count - 1) * 1000
                #expect(abs(period - interval) < interval * 0.2, "\(name): heard every \(period) ms, planned \(interval) ms")
            }
            // When it was there: within half a second of the capture's offsets.
            #expect(abs((times.first! - origin) - advertiser.from) < 0.5, "\(name): came at \(times.first! - origin) s")
            if advertiser.to < 3 {
                #expect(abs((times.last! - origin) - advertiser.to) < 0.5, "\(name): went at \(times.last! - origin) s")
            }
        }
    }
}
}

extension Rig {
/// A crowd of 40 on a controller of 16 sets: 15 on sets of their own, 25 taking turns on the
/// last; every member heard.
@Suite struct CrowdRootcanalTests {
    @Test(.notUnderEmulation("a round of turns is seconds long"))
    func everyMemberOfTheCrowdIsHeard() throws {
        let scanner = try TestScanner(port: rigPort ?? 0)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--duration", "7", "--rotation", "100",
                                                        "--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=9,minor=1-40"])
        var minors = Set<UInt16>()
        _ = try scanner.collect(timeout: .seconds(7)) { reports in
            for report in reports.suffix(1) {
                if let data = try? AdvertisingData(parsing: report.data), case let .iBeacon(beacon)? = try? Beacon.beacons(in: data).first,
                   beacon.major == 9 {
                    minors.insert(beacon.minor)
                }
            }
            return minors.count == 40
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(minors == Set(1...40), "every member heard: missing \(Set(1...40).subtracting(minors).sorted())")
        #expect(emitter.stdout.contains("beacons 16-40 taking turns"), "\(emitter.stdout)")
    }

    /// A crowd of 24 with an address each (`address=static`) on 16 sets: the 9 taking turns on
    /// the last set each go on with their own address, so a scanner hears every member, each
    /// from one address only, the one the plan's `sentAs` says, and no two from one.
    @Test(.notUnderEmulation("a round of turns is seconds long"))
    func eachMemberOfACrowdOfAddressesIsHeardFromItsOwn() throws {
        let scanner = try TestScanner(port: rigPort ?? 0)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--duration", "6", "--rotation", "100",
                                                        "--json", "--beacon",
                                                        "uuid=39ED98FF2900441A802F9C398FC199D2,major=8,minor=1-24,address=static"])
        var heardFrom: [UInt16: Set<BluetoothAddress>] = [:]
        _ = try scanner.collect(timeout: .seconds(6)) { reports in
            for report in reports.suffix(1) {
                if let data = try? AdvertisingData(parsing: report.data), case let .iBeacon(beacon)? = try? Beacon.beacons(in: data).first,
                   beacon.major == 8 {
                    heardFrom[beacon.minor, default: []].insert(report.address)
                }
            }
            return false
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        // The plan: each member's own address, before anything was sent.
        var planned: [UInt16: String] = [:]
        for line in emitter.stdout.split(separator: "\n") where line.contains(#""event":"beacon""#) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let minor = object?["minor"] as? Int, let sentAs = object?["sentAs"] as? String { planned[UInt16(minor)] = sentAs }
        }
        #expect(planned.count == 24 && Set(planned.values).count == 24, "\(planned)")
        #expect(Set(heardFrom.keys) == Set(1...24), "every member heard: missing \(Set(1...24).subtracting(heardFrom.keys).sorted())")
        for (minor, addresses) in heardFrom.sorted(by: { $0.key < $1.key }) {
            #expect(addresses.map(\.description) == [planned[minor] ?? "?"], "minor \(minor) heard from \(addresses)")
        }
    }
}
}

/// A file named on the command line that cannot be opened: one status (74) and errno's words,
/// whichever command and option name it.
@Suite struct UnreadableFileTests {
    @Test(arguments: [
        "decode /nonexistent/x.pcap", "scan --replay /nonexistent/x.pcap", "audit --replay /nonexistent/x.pcap",
        "monitor --replay /nonexistent/x.pcap --uuid 39ED98FF2900441A802F9C398FC199D2", "replay /nonexistent/x.pcap --check",
        "run /nonexistent/x.yaml --check", "--config /nonexistent/x.yaml --check", "--hcitool-file /nonexistent/x.txt --check",
        "calibrate --write /nonexistent/x.yaml --scanner virtual --uuid random --major 1 --minor 1",
    ])
    func itIsAnIOErrorWithItsReason(command: String) throws {
        let result = try runBeaconEmit(command.split(separator: " ").map(String.init))
        #expect(result.status == 74, "\(command): \(result.stderr)")
        #expect(result.stderr.contains("/nonexistent/x.") && result.stderr.contains("No such file or directory"), "\(result.stderr)")
    }
}

extension Rig {
/// The walkers' site on the virtual radio: the advertiser that walks out is silent while it is
/// away and heard again when it comes back, each within a fraction of a second of the plan; the
/// scannable ones are heard as scannable (event type 2), the connectable one as connectable;
/// the replay ends on the capture's clock, its changes on time.
@Suite struct ReplayStaysRootcanalTests {
    @Test(.notUnderEmulation("the site's timeline is seconds long"))
    func anAdvertiserThatLeavesIsSilentUntilItComesBack() throws {
        let path = try SiteCapture.walkers()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (heard, status, said, output) = try SiteCapture.replayHeard(path, seconds: 11)
        #expect(status == 0, "\(output)")
        let plan = said["plan"] ?? []
        try #require(plan.count == 5, "\(output)")
        let sentAs = try plan.map { try BluetoothAddress(parsing: $0["sentAs"]?.string ?? "") }
        let own = sentAs.map { address in heard.filter { $0.report.address == address && !($0.report.kind?.contains(.scanResponse) ?? false) } }
        // The replay's start: the first report of anyone, all coming at 0.
        let origin = try #require(heard.first?.at)
        let walker = own[0].map { $0.at - origin }
        let away = walker.filter { $0 > 3.3 && $0 < 5.7 }
        let before = walker.filter { $0 <= 3.3 }.max(), after = walker.filter { $0 >= 5.7 }.min()
        #expect(away.isEmpty, "a1 silent while away (3.0 to 5.9 s): heard at \(away)")
        #expect(before.map { $0 > 2.4 } == true && after.map { abs($0 - 5.9) < 0.45 } == true,
                "a1 heard until it went (3.0 s) and again when it came (5.9 s): last \(before as Any), then \(after as Any)")
        for index in [1, 2] {
            #expect(!own[index].isEmpty && own[index].allSatisfy { $0.report.kind.map { $0.contains(.scannable) && !$0.contains(.connectable) } == true },
                    "a\(index + 1) scannable (ADV_SCAN_IND) as captured: \(own[index].prefix(3).map { $0.report.kind as Any })")
        }
        #expect(!own[4].isEmpty && own[4].allSatisfy { $0.report.kind.map { $0.contains(.connectable) } == true })
        let replayed = try #require(said["replayed"]?.first)
        let (seconds, planned) = (replayed["seconds"]?.number ?? 0, replayed["planned"]?.number ?? 0)
        #expect(abs(seconds - planned) < 0.5, "on the capture's clock: \(seconds) s for \(planned) s planned")
        #expect((replayed["largestLateness"]?.number ?? 9) < 0.2, "\(replayed)")
    }

    /// 40 advertisers for 20 s on the controller's 16 sets, taking turns of a second: the
    /// replay keeps the capture's clock (within half a second over 20 s), and each turn's
    /// change (16 going by one disable, 16 coming on their sets readied again, by one enable:
    /// 34 HCI commands, about 5 ms each on the virtual controller) is made within 0.2 s of when
    /// it was due, judged once made: each instant starts half its commands' time early, so the
    /// goings are made a little before it and the comings a little after (about 0.12 s either
    /// way on a quiet machine; the figures are printed). Before it starts, the plan's pace says
    /// it keeps up.
    @Test(.notUnderEmulation("the turns are seconds long"))
    func aCrowdOnFewerSetsKeepsTheCapturesClock() throws {
        let path = try ReplayTurnsRootcanalTests.crowd(40, seconds: 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (_, status, said, output) = try SiteCapture.replayHeard(path, seconds: 22)
        #expect(status == 0, "\(output)")
        let pace = try #require(said["pace"]?.first, "\(output)")
        #expect(pace["keepsUp"]?.bool == true && pace["changes"]?.number == 32, "\(pace)")
        let replayed = try #require(said["replayed"]?.first, "\(output)")
        let (seconds, planned) = (replayed["seconds"]?.number ?? 0, replayed["planned"]?.number ?? 0)
        print("crowd of 40 on 16 sets: \(seconds) s for \(planned) s planned, largest lateness "
              + "\(replayed["largestLateness"]?.number ?? -1) s, mean \(replayed["meanLateness"]?.number ?? -1) s, "
              + "largest earliness \(replayed["largestEarliness"]?.number ?? -1) s")
        #expect(abs(seconds - planned) < 0.5, "on the capture's clock: \(seconds) s for \(planned) s planned")
        #expect((replayed["largestLateness"]?.number ?? 9) < 0.2 && (replayed["largestEarliness"]?.number ?? 9) < 0.2,
                "every change within 0.2 s of its plan: \(replayed)")
        // 20 turns, each a going and a coming (the last going at the end): the total over them all.
        let (total, changes) = (replayed["totalLateness"]?.number ?? -1, replayed["changes"]?.number ?? 0)
        #expect(changes >= 40 && total >= (replayed["largestLateness"]?.number ?? 9) && abs(total / changes
                - (replayed["meanLateness"]?.number ?? 9)) < 0.002, "\(replayed)")
    }
}
}
