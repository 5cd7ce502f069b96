// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import BeaconReports
import Foundation
import Testing

/// `run --report`, rendered by a real browser (Debian's `chromium --headless`): the screenshot
/// is not blank, and the page the browser built holds every beacon, step and expectation of the
/// run's JSON with its result, references nothing outside itself, and draws the spans on the
/// air where the rig's record has them. Without chromium these are skipped, unless the rig is
/// required (CI, where scripts/install-deps --tests installs it).
enum Browser {
    static let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static var missing: Bool {
        path == nil && ProcessInfo.processInfo.environment["BEACON_EMIT_REQUIRE_RIG"] != "1"
    }

    /// Runs chromium headless on a file with `arguments`; its standard output.
    static func run(_ file: String, _ arguments: [String]) throws -> String {
        let browser = try #require(path, "chromium is not installed (scripts/install-deps --tests installs it)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: browser)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                             "--user-data-dir=" + FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)").path]
            + arguments + ["file://" + file]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// A screenshot's PNG bytes.
    static func screenshot(_ file: String) throws -> Data {
        let png = FileManager.default.temporaryDirectory.appendingPathComponent("shot-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: png) }
        _ = try run(file, ["--screenshot=" + png, "--window-size=1280,1000"])
        return try Data(contentsOf: URL(fileURLWithPath: png))
    }
}

extension Rig {
@Suite(.disabled(if: Browser.missing, "chromium is not installed")) struct ReportBrowserTests {
    let port = rigPort ?? 0

    func events(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// A phone's hostile log line (a Prepend scalar, U+0600, glued to `<` and `>`: one grapheme
    /// cluster with each) in a run's report, opened in the browser: no element is made of it and
    /// nothing runs (the title stays the report's). And markup that ever slipped through raw
    /// runs nothing either: the page's Content-Security-Policy forbids script.
    @Test(.notUnderEmulation("a browser under emulation takes minutes"))
    func hostileTextRunsNothingInTheBrowser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let line = "BEACON-EMIT enter region=store \u{0600}<img src=x onerror=document.title='PWNED1' \u{0600}>"
        let logged = directory + "/line.txt"
        try (line + "\n").write(toFile: logged, atomically: true, encoding: .utf8)
        let path = directory + "/hostile.yaml", report = directory + "/hostile.html"
        try """
            device: tcp:127.0.0.1:\(port)
            beacons:
              lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 1, minor: 2}
            regions:
              store: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2}
            phones:
              pixel: {log: "cat \(logged); sleep 5", preset: marker}
            steps:
              - advertise: lobby
              - expect: {phone: pixel, region: store, event: enter, within: 3}

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try runBeaconEmit(["run", path, "--report", report])
        #expect(run.status == 0, "the line meets the expectation: \(run.stdout)\(run.stderr)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.contains("\u{0600}&lt;img src=x onerror=document.title=&apos;PWNED1&apos;"), "the line is in the report, escaped")
        let dom = try Browser.run(report, ["--dump-dom"])
        #expect(!dom.contains("<title>PWNED"), "nothing ran: \(dom.prefix(600))")
        #expect(!dom.contains("<img src=\"x\""), "no element made of the line")

        // Raw markup, as if an escape were ever missed: the policy stops it.
        let raw = directory + "/raw.html"
        try HTMLPage.document(title: "kept", body: "<img src=x onerror=\"document.title='PWNED2'\">"
                              + "<script>document.title='PWNED3'</script>").write(toFile: raw, atomically: true, encoding: .utf8)
        let rawDOM = try Browser.run(raw, ["--dump-dom"])
        #expect(rawDOM.contains("<title>kept</title>"), "nothing ran: \(rawDOM.prefix(600))")
    }

    /// A scenario on the virtual radio, one expectation passing and one failing, a controller
    /// reset in the middle: its report in the browser.
    @Test(.notUnderEmulation("a browser under emulation takes minutes"))
    func aRunsReportRendersInABrowser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lobby.yaml", report = directory + "/lobby.html"
        try """
            scanner: tcp:127.0.0.1:\(port)
            exitAfter: 2
            beacons:
              lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
              door: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 3}
            regions:
              store: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101}
            steps:
              - advertise: [lobby, door]
              - expect: {seen: lobby, within: 3}
              - wait: 2
              - stop: lobby
              - expect: {seen: lobby, within: 1}
              - stop: door
              - expect: {region: store, event: exit, within: 5}

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let proxy = try LoggingProxy(upstreamPort: port)
        let runner = try BackgroundProcess.beaconEmit(["run", path, "-i", "tcp:127.0.0.1:\(proxy.port)", "--json", "--report", report])
        #expect(runner.waitForOutput(#""event":"step","step":"3""#), "\(runner.stdout)\(runner.stderr)")
        proxy.sendToController(Reset().packet)
        #expect(runner.wait(timeout: .seconds(30)) == 1, "\(runner.stdout)\(runner.stderr)")
        let said = events(runner.stdout)
        let started = Date()
        let dom = try Browser.run(report, ["--dump-dom"])
        let shot = try Browser.screenshot(report)
        print("the browser's check of a run's report took \(Date().timeIntervalSince(started)) s")
        // Not blank: a picture against a blank page of the same size.
        let blank = directory + "/blank.html"
        try "<!DOCTYPE html><html><body></body></html>".write(toFile: blank, atomically: true, encoding: .utf8)
        let empty = try Browser.screenshot(blank)
        #expect(shot.count > 4 * empty.count, "\(shot.count) bytes against a blank page's \(empty.count)")
        // Every expectation of the JSON, with its result, in the table and on the axis.
        let results = said.filter { $0["event"] as? String == "expectation" }
        #expect(results.map { $0["result"] as? String } == ["pass", "fail", "pass"], "\(runner.stdout)")
        for result in results {
            let text = try #require(result["expectation"] as? String)
            let passed = result["result"] as? String == "pass"
            #expect(dom.contains("<td>\(text)</td>"), "\(text)")
            #expect(dom.contains("data-step=\"\(result["step"] as? String ?? "")\" data-result=\"\(passed ? "pass" : "fail")\""))
        }
        #expect(dom.components(separatedBy: "<tr data-result=").count - 1 == 3)
        #expect(dom.contains(#"<tr data-result="fail">"#) && dom.range(of: #"<tr data-result="fail">"#)!.lowerBound
                < dom.range(of: #"<tr data-result="pass">"#)!.lowerBound, "failures first")
        for step in said.filter({ $0["event"] as? String == "step" }) {
            #expect(dom.contains("step \(step["step"] as? String ?? ""): \(step["action"] as? String ?? "")"), "\(step)")
        }
        #expect(dom.contains("controller") && dom.contains("class=\"off\""), "the reset is marked")
        // Nothing outside the page: no fetched script, style, font or image, no link out.
        for reference in ["src=", "href=", "url(", "@import", "<script", "<link"] {
            #expect(!dom.contains(reference), "\(reference) in the report")
        }
        // The spans on the air against the rig's own record: each beacon from when its
        // advertise was made (the step after it starts then) to when its stop was, within a
        // tenth of a second.
        let steps = said.filter { $0["event"] as? String == "step" }
        let at = { (action: String) -> Double? in
            guard let index = steps.firstIndex(where: { $0["action"] as? String == action }), index + 1 < steps.count else { return nil }
            return steps[index + 1]["at"] as? Double
        }
        for (beacon, stop) in [("lobby", "stop lobby"), ("door", "stop door")] {
            let span = try #require(dom.firstMatch(of: try Regex("data-beacon=\"\(beacon)\" data-from=\"([0-9.]+)\" data-to=\"([0-9.]+)\"")),
                                    "\(beacon)'s span")
            let from = Double(span.output[1].substring ?? "") ?? -1, to = Double(span.output[2].substring ?? "") ?? -1
            #expect(abs(from - (at("advertise lobby, door") ?? 99)) < 0.1 && abs(to - (at(stop) ?? 99)) < 0.1,
                    "\(beacon) on the air \(from) to \(to)")
        }
    }

    /// A report is written whatever ends the run: a scenario that does not parse, and a run a
    /// signal interrupts.
    @Test(.notUnderEmulation("a browser under emulation takes minutes"))
    func aReportIsWrittenWhenTheRunCannotStartOrIsInterrupted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broken = directory + "/broken.yaml", report = directory + "/broken.html"
        try "beacons:\n  lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 1, minor: 99999}\nsteps: []\n"
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try runBeaconEmit(["run", broken, "-i", "tcp:127.0.0.1:\(port)", "--report", report])
        #expect(refused.status == 65)
        let page = try Browser.run(report, ["--dump-dom"])
        #expect(page.contains("ERROR") && page.contains("broken.yaml:2:") && page.contains("the run did not start"), "\(page)")
        let path = directory + "/long.yaml", interrupted = directory + "/long.html"
        try """
            beacons:
              lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
            steps:
              - advertise: lobby
              - wait: 60

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let runner = try BackgroundProcess.beaconEmit(["run", path, "-i", "tcp:127.0.0.1:\(port)", "--json", "--report", interrupted])
        #expect(runner.waitForOutput(#""event":"step","step":"2""#), "\(runner.stdout)\(runner.stderr)")
        runner.signal(SIGTERM)
        _ = runner.wait(timeout: .seconds(10))
        let dom = try Browser.run(interrupted, ["--dump-dom"])
        #expect(dom.contains("interrupted by a signal") && dom.contains("data-beacon=\"lobby\""), "\(dom)")
    }
}
}

/// `audit --report` of a capture, rendered by the browser: every rule of the JSON with its
/// verdict, the gaps' histogram holding every gap with the estimate marked where the JSON has
/// it, RSSI and events per second drawn, nothing outside the page; and a page that says why
/// where nothing was heard.
@Suite(.disabled(if: Browser.missing, "chromium is not installed")) struct AuditReportBrowserTests {
    @Test(.notUnderEmulation("a browser under emulation takes minutes"))
    func anAuditsReportRendersInABrowser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audit-report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = Readme.root.appendingPathComponent("Tests/BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop").path
        let report = directory + "/audit.html"
        let audit = try runBeaconEmit(["audit", "--replay", capture, "--json", "--report", report, "--interval", "100"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [String: Any], "\(audit.stdout)")
        let started = Date()
        let dom = try Browser.run(report, ["--dump-dom"])
        let shot = try Browser.screenshot(report)
        print("the browser's check of an audit's report took \(Date().timeIntervalSince(started)) s")
        let blank = directory + "/blank.html"
        try "<!DOCTYPE html><html><body></body></html>".write(toFile: blank, atomically: true, encoding: .utf8)
        #expect(shot.count > 4 * (try Browser.screenshot(blank)).count)
        let rules = try #require(json["rules"] as? [[String: Any]])
        #expect(!rules.isEmpty)
        for rule in rules {
            #expect(dom.contains("data-rule=\"\(rule["name"] as? String ?? "")\" data-verdict=\"\(rule["verdict"] as? String ?? "")\""),
                    "\(rule)")
        }
        #expect(dom.contains((json["verdict"] as? String ?? "?").uppercased()))
        let counts = try Regex(#"data-count="([0-9]+)""#)
        let drawn = dom.matches(of: counts).compactMap { Int($0.output[1].substring ?? "") }.reduce(0, +)
        let reports = try #require(json["reports"] as? Int)
        let over = dom.firstMatch(of: try Regex(#"; ([0-9]+) longer than"#)).flatMap { Int($0.output[1].substring ?? "") } ?? 0
        #expect(drawn + over == reports - 1, "every gap between \(reports) reports: \(drawn) drawn, \(over) longer")
        if let period = (json["interval"] as? [String: Any])?["eventPeriodMs"] as? Double {
            #expect(dom.contains("data-estimate=\"\(period == period.rounded() ? "\(Int(period))" : "\(period)")\""), "estimate \(period)")
        }
        #expect(dom.contains("data-configured=\"100\""))
        #expect(dom.contains("RSSI over time") && dom.contains("Events heard per second"))
        for reference in ["src=", "href=", "url(", "@import", "<script", "<link"] {
            #expect(!dom.contains(reference), "\(reference) in the report")
        }
        // Nothing of the advertiser asked for: a page that says so.
        let none = directory + "/none.html"
        let missed = try runBeaconEmit(["audit", "--replay", capture, "--address", "00:11:22:33:44:55", "--report", none])
        #expect(missed.status == 1)
        let page = try Browser.run(none, ["--dump-dom"])
        #expect(page.contains("ERROR") && page.contains("was not heard"), "\(page)")
    }
}
