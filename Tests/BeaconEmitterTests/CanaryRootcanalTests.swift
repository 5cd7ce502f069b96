// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import Foundation
import Testing

extension Rig {
/// `advertise --canary`: a second device on the virtual radio listens for the emitter's own
/// beacons. A controller that answers every command with success but never advertises (a
/// proxy that swallows the enable) is caught within the bound, reprogrammed once, reported
/// while it stays silent, and heard again once the proxy lets the enable through.
@Suite(.serialized) struct CanaryRootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }
    static let iBeacon = ["--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "101", "--minor", "2"]

    /// The JSON lines printed so far.
    static func events(_ emitter: BackgroundProcess) -> [JSONValue] {
        emitter.stdout.split(separator: "\n").compactMap { JSONValue(parsing: String($0)) }
    }

    /// Waits until an event matching `predicate` is printed; the time it was seen.
    static func waitForEvent(_ emitter: BackgroundProcess, timeout: Duration,
                             _ predicate: (JSONValue) -> Bool) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if events(emitter).contains(where: predicate) { return .now }
            if !emitter.process.isRunning { return nil }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    static func control(_ path: String, _ request: String) throws -> JSONValue? {
        JSONValue(parsing: try runBeaconEmit(["control", path, request]).stdoutLines.first ?? "")
    }

    /// A beacon of an app's layout, which nothing decodes without its layout: the canary reads
    /// the air with the layouts of the beacons it watches, and hears it (no episode in 5 s at a
    /// 2 s bound; the status says heard).
    @Test func aLayoutsBeaconIsHeardByTheCanary() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("canary-layout-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", device, "--canary", device, "--canary-after", "2", "--json", "--control", socket, "--duration", "30",
             "--layout", "acme=" + LayoutCommandTests.acme, "--id", "0x01020304", "--id", "258", "--data", "0x1234", "--data", "5",
             "--measured-power", "-70"])
        defer { if emitter.process.isRunning { emitter.signal(SIGTERM); _ = emitter.wait() } }
        _ = try #require(Self.waitForEvent(emitter, timeout: .seconds(10)) { $0["event"]?.string == "advertising" },
                         "\(emitter.stderr)")
        Thread.sleep(forTimeInterval: 5)
        let status = try Self.control(socket, "status")
        #expect(status?["canary"]?["beacons"]?.array?.first?["heard"] == .bool(true), "\(String(describing: status))")
        #expect(!Self.events(emitter).contains { ["off-air", "not-heard"].contains($0["event"]?.string ?? "") }, "\(emitter.stdout)")
    }

    @Test func aSilentControllerIsCaughtReprogrammedOnceReportedAndHeardAgain() throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        proxy.swallowEnables()
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("canary-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", "tcp:127.0.0.1:\(proxy.port)", "--canary", device, "--canary-after", "2", "--json",
             "--control", socket, "--duration", "30", "--metrics", "127.0.0.1:0"] + Self.iBeacon)
        defer { if emitter.process.isRunning { emitter.signal(SIGTERM); _ = emitter.wait() } }
        let advertising = try #require(Self.waitForEvent(emitter, timeout: .seconds(10)) { $0["event"]?.string == "advertising" },
                                       "\(emitter.stderr)")
        // Caught within the bound (2 s), give or take the loop's turn and the output's way here.
        let caught = try #require(Self.waitForEvent(emitter, timeout: .seconds(6)) {
            $0["event"]?.string == "off-air" && $0["cause"]?.string == "not-heard"
        }, "\(emitter.stdout) \(emitter.stderr)")
        let detection = advertising.duration(to: caught)
        #expect(detection >= .milliseconds(1900) && detection <= .milliseconds(3500), "caught after \(detection)")
        // Reprogrammed once through the restore: the proxy swallowed a second enable.
        #expect(Self.waitForEvent(emitter, timeout: .seconds(3)) {
            $0["event"]?.string == "restored" && $0["cause"]?.string == "not-heard"
        } != nil, "\(emitter.stdout)")
        let status = try Self.control(socket, "status")
        #expect(status?["canary"]?["beacons"]?.array?.first?["heard"] == .bool(false), "\(String(describing: status))")
        // The metrics say the same: not heard, one disruption of that kind, the state.
        let printed = try #require(emitter.stderr.split(separator: "\n").first { $0.contains("metrics: http://127.0.0.1:") })
        let metricsPort = try #require(UInt16(printed.split(separator: ":").last?.split(separator: "/").first ?? ""))
        var metrics = try ParsedMetrics(try scrape(metricsPort))
        #expect(metrics.value("beacon_emit_canary_heard", ["slot": "1"]) == 0)
        #expect(metrics.value("beacon_emit_disruptions_total", ["kind": "not_heard"]) == 1)
        // Still silent: reported twice more, never reprogrammed again.
        #expect(Self.waitForEvent(emitter, timeout: .seconds(8)) { _ in
            Self.events(emitter).filter { $0["event"]?.string == "not-heard" }.count >= 2
        } != nil, "\(emitter.stdout)")
        let offAir = Self.events(emitter).filter { $0["event"]?.string == "off-air" }
        #expect(offAir.count == 1, "\(offAir)")
        #expect(proxy.swallowedEnables == 2)
        // The controller radiates: heard again, and the status says so.
        proxy.releaseEnables()
        #expect(Self.waitForEvent(emitter, timeout: .seconds(3)) { $0["event"]?.string == "heard-again" } != nil,
                "\(emitter.stdout)")
        let heard = try Self.control(socket, "status")
        #expect(heard?["canary"]?["beacons"]?.array?.first?["heard"] == .bool(true), "\(String(describing: heard))")
        #expect((heard?["canary"]?["beacons"]?.array?.first?["lastHeardMsAgo"]?.integer ?? .max) < 1000)
        metrics = try ParsedMetrics(try scrape(metricsPort))
        #expect(metrics.value("beacon_emit_canary_heard", ["slot": "1"]) == 1)
        #expect((metrics.value("beacon_emit_canary_last_heard_seconds", ["slot": "1"]) ?? 99) < 1)
        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(proxy.swallowedEnables == 2)
    }

    /// On a controller that advertises, the canary hears every beacon and never complains,
    /// through a bound shorter than the run; the status and the text say when each was heard.
    @Test func beaconsOnTheAirAreHeardAndNeverReported() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("canary-ok-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", device, "--canary", device, "--canary-after", "1", "--control", socket, "--duration", "4",
             "--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=101,minor=1",
             "--eddystone-url", "https://example.com"])
        Thread.sleep(forTimeInterval: 2.5)
        let status = try Self.control(socket, "status")
        let beacons = status?["canary"]?["beacons"]?.array ?? []
        #expect(beacons.count == 2, "\(String(describing: status))")
        for beacon in beacons {
            #expect(beacon["heard"] == .bool(true) && (beacon["lastHeardMsAgo"]?.integer ?? .max) < 500, "\(beacon)")
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stderr.contains("canary: listening on \(device)"), "\(emitter.stderr)")
        #expect(!emitter.stdout.contains("not heard"), "\(emitter.stdout)")
    }

    /// Under systemd, the status says when each beacon was last heard (every few seconds).
    @Test func theServiceStatusSaysWhenEachBeaconWasHeard() throws {
        let listener = try NotifyListener()
        let emitter = try BackgroundProcess(try beaconEmitPath(),
                                            ["-i", device, "--canary", device, "--duration", "7"] + Self.iBeacon,
                                            environment: ["NOTIFY_SOCKET": listener.path])
        let statuses = listener.receive(.seconds(8)) { $0.contains { $0.1.contains("heard") } }.map(\.1)
        let heard = try #require(statuses.first { $0.contains("heard") }, "\(statuses) \(emitter.stderr)")
        #expect(heard.hasPrefix("STATUS=advertising 1 beacon on \(device); beacon 1 heard 0."), "\(heard)")
        #expect(heard.hasSuffix(" s ago"), "\(heard)")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
    }

    @Test(arguments: [
        (["--canary-after", "3"], "--canary-after needs --canary DEVICE"),
        (["--canary", "hci0", "-i", "hci0"], "--canary must be another device than --device"),
        (["--canary", "virtual", "-i", "tcp:127.0.0.1:1"], "--canary virtual needs --device virtual"),
        (["--canary", "hci0", "--canary-after", "0.2"], "--canary-after must be from 1 to 86400 seconds"),
    ])
    func misusedOptionsAreRefused(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(arguments + Self.iBeacon)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
}
