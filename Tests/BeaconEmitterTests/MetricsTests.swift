// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconMetrics
import Foundation
import LinuxSystem
import Testing
import Yams

/// The Python with Prometheus' own client (scripts/with-rootcanal sets it up): its text parser
/// reads the metrics in these tests, not a regular expression.
let prometheusPython = ProcessInfo.processInfo.environment["BEACON_EMIT_PYTHON"]

/// Metrics as Prometheus' parser (prometheus_client) reads them: each family's type and help,
/// and its samples.
struct ParsedMetrics {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double?
    }

    struct Family {
        var name: String
        var type: String
        var help: String
        var samples: [Sample]
    }

    let families: [Family]

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// - Throws: `Refused` with the parser's reason where it does not read the text.
    init(_ text: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/prometheus-parse").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: prometheusPython ?? "/usr/bin/python3")
        process.arguments = [script]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let read = output.fileHandleForReading.readDataToEndOfFile()
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let object = try JSONSerialization.jsonObject(with: read) as? [String: Any],
              let families = object["families"] as? [[String: Any]] else {
            throw Refused(description: "the parser refused the text: \(problems)")
        }
        self.families = families.map { family in
            Family(name: family["name"] as? String ?? "", type: family["type"] as? String ?? "",
                   help: family["help"] as? String ?? "",
                   samples: (family["samples"] as? [[String: Any]] ?? []).map { sample in
                       Sample(name: sample["name"] as? String ?? "", labels: sample["labels"] as? [String: String] ?? [:],
                              value: sample["value"] as? Double)
                   })
        }
    }

    /// The samples named `name` whose labels include `labels`.
    func samples(_ name: String, _ labels: [String: String] = [:]) -> [Sample] {
        families.flatMap(\.samples).filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
    }

    /// The one sample's value (nil where there is none, or it is NaN).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples(name, labels).first?.value
    }

    /// The family a sample of `name` belongs to.
    func family(of name: String) -> Family? {
        families.first { $0.samples.contains { $0.name == name } }
    }
}

@Suite struct PrometheusParserPresenceTests {
    @Test func theParserIsThereWhenTheTestScriptRequiresIt() throws {
        guard rigRequired else { return }
        #expect(prometheusPython != nil, "scripts/with-rootcanal sets BEACON_EMIT_PYTHON")
        // And it refuses what is not the format: it can fail these tests.
        #expect(throws: ParsedMetrics.Refused.self) { try ParsedMetrics("# TYPE x counter\nx{a=\"1\" 2\n") }
    }
}

/// An emitter's metrics follow what it reports, in base units, with bounded labels; Prometheus'
/// parser reads every line, each family with its type and help.
@Suite(.enabled(if: prometheusPython != nil, "needs scripts/with-rootcanal (Prometheus' parser)"))
struct EmitterMetricsTests {
    @Test func theMetricsFollowWhatTheEmitterReports() throws {
        let metrics = EmitterMetrics(adapter: "hci0", version: "1.2.3")
        var sample = EmitterMetrics.Sample(beacons: 3, canary: [(1, true, .milliseconds(1500)), (2, false, nil)],
                                           controlRefusals: ["idle": 2, "heldBound": 1])
        metrics.sample = { sample }
        var parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.value("beacon_emit_build_info", ["version": "1.2.3"]) == 1)
        #expect(parsed.value("beacon_emit_beacons", ["adapter": "hci0"]) == 3)
        #expect(parsed.value("beacon_emit_beacons_on_air", ["adapter": "hci0"]) == 3)
        #expect(parsed.value("beacon_emit_adapter_state", ["state": "on-air"]) == 1)
        #expect(parsed.value("beacon_emit_canary_heard", ["slot": "1"]) == 1)
        #expect(parsed.value("beacon_emit_canary_heard", ["slot": "2"]) == 0)
        #expect(parsed.value("beacon_emit_canary_last_heard_seconds", ["slot": "1"]) == 1.5)
        // Never heard yet: no age at all (a NaN charts as nothing and alerts oddly).
        #expect(parsed.samples("beacon_emit_canary_last_heard_seconds", ["slot": "2"]).isEmpty)
        #expect(parsed.value("beacon_emit_control_refusals_total", ["reason": "held_bound"]) == 1)
        // Every kind of disruption is there from the start, at 0.
        #expect(parsed.samples("beacon_emit_disruptions_total").count == EmitterMetrics.kinds.count)
        #expect(parsed.samples("beacon_emit_disruptions_total").allSatisfy { $0.value == 0 })

        // A beacon's new identity that did not go on the air is counted, from 0.
        #expect(parsed.value("beacon_emit_identities_withheld_total", ["adapter": "hci0"]) == 0)
        metrics.note(.withheld("beacon 1: EID 65B88008E990B5B8 not put on the air"))
        #expect(try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
            .value("beacon_emit_identities_withheld_total", ["adapter": "hci0"]) == 1)

        // A controller reset: off the air; 300 ms later back.
        metrics.note(.offAir(.controllerReset))
        parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.value("beacon_emit_disruptions_total", ["kind": "reset"]) == 1)
        #expect(parsed.value("beacon_emit_beacons_on_air") == 0 && parsed.value("beacon_emit_beacons") == 3)
        #expect(parsed.value("beacon_emit_adapter_state", ["state": "off-air"]) == 1)
        #expect(parsed.value("beacon_emit_adapter_state", ["state": "on-air"]) == 0)
        metrics.note(.restored(.controllerReset, gap: .milliseconds(300), afterUsable: .milliseconds(40)))
        metrics.note(.offAir(.adapterRemoved))
        metrics.note(.restored(.adapterRemoved, gap: .seconds(20), afterUsable: .milliseconds(100)))
        metrics.noteControl(command: "add", outcome: .ok)
        metrics.noteControl(command: "remove", outcome: .refused)
        metrics.noteControl(command: "{nonsense", outcome: .error)
        // The canary loses beacon 2, beacon 1 is removed; the socket refuses two more idle clients.
        sample = .init(beacons: 2, canary: [(2, false, .seconds(12))], controlRefusals: ["idle": 4, "heldBound": 1])
        parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.value("beacon_emit_disruptions_total", ["kind": "unplug"]) == 1)
        #expect(parsed.value("beacon_emit_restore_seconds_count") == 2)
        #expect(abs((parsed.value("beacon_emit_restore_seconds_sum") ?? 0) - 20.3) < 1e-9)
        #expect(parsed.value("beacon_emit_restore_seconds_bucket", ["le": "0.5"]) == 1)
        #expect(parsed.value("beacon_emit_restore_seconds_bucket", ["le": "30.0"]) == 2)
        #expect(parsed.value("beacon_emit_beacons_on_air") == 2)
        #expect(parsed.value("beacon_emit_control_requests_total", ["command": "add", "outcome": "ok"]) == 1)
        #expect(parsed.value("beacon_emit_control_requests_total", ["command": "remove", "outcome": "refused"]) == 1)
        #expect(parsed.value("beacon_emit_control_requests_total", ["command": "other", "outcome": "error"]) == 1)
        #expect(parsed.value("beacon_emit_control_refusals_total", ["reason": "idle"]) == 4)
        // A removed beacon's canary series go with it: labels stay bounded.
        #expect(parsed.samples("beacon_emit_canary_heard", ["slot": "1"]).isEmpty)
        #expect(parsed.value("beacon_emit_canary_last_heard_seconds", ["slot": "2"]) == 12)
        // Beacon 3 is added in the slot beacon 1 left; 1,000 more come and go over the process's
        // life: the slots stay 1 and 2, whatever the control ids grow to.
        sample = .init(beacons: 2, canary: [(2, false, .seconds(12)), (3, true, .seconds(1))])
        parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.value("beacon_emit_canary_heard", ["slot": "1"]) == 1)
        #expect(parsed.value("beacon_emit_canary_heard", ["slot": "2"]) == 0)
        for id in 4..<1004 {
            sample = .init(beacons: 2, canary: [(2, false, .seconds(12)), (id, true, nil)])
            _ = metrics.exposition()
        }
        parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.samples("beacon_emit_canary_heard").map { $0.labels["slot"] ?? "" }.sorted() == ["1", "2"])
        #expect(parsed.value("beacon_emit_canary_last_heard_seconds", ["slot": "2"]) == 12)
        // Types and help lines, as Prometheus reads them.
        #expect(parsed.family(of: "beacon_emit_disruptions_total")?.type == "counter")
        #expect(parsed.family(of: "beacon_emit_restore_seconds_sum")?.type == "histogram")
        #expect(parsed.family(of: "beacon_emit_beacons")?.type == "gauge")
        #expect(parsed.family(of: "process_cpu_seconds_total")?.type == "counter")
        #expect(parsed.families.allSatisfy { !$0.help.isEmpty }, "\(parsed.families.filter { $0.help.isEmpty }.map(\.name))")
        // The process's own, as Prometheus clients export them.
        #expect((parsed.value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((parsed.value("process_open_fds") ?? 0) >= 3)
        let started = parsed.value("process_start_time_seconds") ?? 0
        #expect(abs(started - Date().timeIntervalSince1970) < 24 * 3600, "\(started)")
        metrics.note(.stopped(reason: "SIGTERM", keptOn: false))
        parsed = try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(parsed.value("beacon_emit_adapter_state", ["state": "stopped"]) == 1 && parsed.value("beacon_emit_beacons_on_air") == 0)
    }
}

/// The endpoint, driven by hand from this thread as the emitter's loop drives it: it answers
/// `GET /metrics`, 404s other paths, 400s what is no HTTP, and drops a client that sends
/// nothing, too much, or takes nothing, while it answers the others.
@Suite struct MetricsEndpointTests {
    /// A client connected to the endpoint, its socket non-blocking.
    final class Client {
        let socket: Descriptor
        var received: [UInt8] = []
        var closed = false

        init(_ port: UInt16) throws {
            socket = try TCPConnection.connect(host: "127.0.0.1", port: port, name: "endpoint")
            _ = fcntl(socket.rawValue, F_SETFL, fcntl(socket.rawValue, F_GETFL) | O_NONBLOCK)
        }

        func send(_ text: String) {
            _ = Array(text.utf8).withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Reads what there is (`atMost` bytes); true once the endpoint closed the connection.
        func take(atMost: Int = .max) -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            var taken = 0
            while !closed && taken < atMost {
                let count = chunk.withUnsafeMutableBytes {
                    Glibc.recv(socket.rawValue, $0.baseAddress, min($0.count, atMost - taken), 0)
                }
                if count > 0 {
                    received += chunk[..<count]
                    taken += count
                } else if count == 0 || errno != EAGAIN { closed = true } else { break }
            }
            return closed
        }

        var text: String { String(decoding: received, as: UTF8.self) }

        deinit { socket.close() }
    }

    /// Serves until `done` holds, or `limit` passes (a bound for a failing test: a loaded machine
    /// never comes near it).
    func serve(_ endpoint: MetricsEndpoint, every pause: Double = 0.005, limit: Duration = .seconds(10), until done: () -> Bool) {
        let end = ContinuousClock.now + limit
        while !done() && ContinuousClock.now < end {
            endpoint.serve()
            Thread.sleep(forTimeInterval: pause)
        }
    }

    @Test func itAnswersGetMetricsAndNothingElse() throws {
        let endpoint = try MetricsEndpoint(address: MetricsAddress(port: 0)) { Array("beacon_emit_beacons 1\n".utf8) }
        defer { endpoint.close() }
        let scrape = try Client(endpoint.port)
        scrape.send("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n")
        let other = try Client(endpoint.port)
        other.send("GET / HTTP/1.1\r\n\r\n")
        let post = try Client(endpoint.port)
        post.send("POST /metrics HTTP/1.0\r\n\r\n")
        let garbage = try Client(endpoint.port)
        garbage.send("\u{16}\u{03}\u{01}\u{02}\u{00}\r\n\r\n")
        serve(endpoint) { [scrape, other, post, garbage].allSatisfy { $0.take() } }
        #expect(scrape.text.hasPrefix("HTTP/1.1 200 OK\r\n") && scrape.text.hasSuffix("\r\n\r\nbeacon_emit_beacons 1\n"), "\(scrape.text)")
        #expect(scrape.text.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(other.text.hasPrefix("HTTP/1.1 404 "), "\(other.text)")
        #expect(post.text.hasPrefix("HTTP/1.1 404 "), "\(post.text)")
        #expect(garbage.text.hasPrefix("HTTP/1.1 400 "), "\(garbage.text)")
        #expect(endpoint.counts.scrapes == 1 && endpoint.counts.notFound == 2 && endpoint.counts.badRequests == 1)
    }

    @Test func aClientThatSendsNothingTooMuchOrTakesNothingIsDroppedWhileOthersAreServed() throws {
        // An answer far larger than a socket takes at once: a client that does not read it holds it up.
        let body = [UInt8](repeating: UInt8(ascii: "#"), count: 16 << 20) + Array("\n".utf8)
        let endpoint = try MetricsEndpoint(address: MetricsAddress(port: 0)) { body }
        defer { endpoint.close() }
        endpoint.requestLimit = .milliseconds(300)
        endpoint.replyLimit = .milliseconds(300)
        let silent = try Client(endpoint.port)
        let flood = try Client(endpoint.port)
        flood.send("GET /metrics HTTP/1.1\r\n" + String(repeating: "X-Padding: 0123456789\r\n", count: 600))
        let stalled = try Client(endpoint.port)
        stalled.send("GET /metrics HTTP/1.1\r\n\r\n")
        serve(endpoint) { endpoint.counts.tooMuch == 1 }
        // Meanwhile a scraper that reads gets its answer whole.
        let scraper = try Client(endpoint.port)
        scraper.send("GET /metrics HTTP/1.1\r\n\r\n")
        serve(endpoint) { scraper.take() }
        #expect(scraper.received.count > body.count && scraper.text.hasPrefix("HTTP/1.1 200"))
        serve(endpoint) { endpoint.counts.idle == 1 && endpoint.counts.slow == 1 }
        #expect(endpoint.counts.tooMuch == 1, "the flood: \(endpoint.counts)")
        #expect(endpoint.counts.idle == 1, "the silent client: \(endpoint.counts)")
        #expect(endpoint.counts.slow == 1, "the stalled reader: \(endpoint.counts)")
        #expect(silent.take() && stalled.take(), "both closed by the endpoint")
        #expect(endpoint.descriptors.count == 1, "only the listener is left: \(endpoint.descriptors)")
    }

    /// A scraper that reads all the time is served however long its answer takes (taking nothing
    /// for `replyLimit` is what drops a client); one that has not taken it all within
    /// `wholeReplyLimit` is dropped all the same.
    @Test func aScraperThatReadsIsServedHoweverLongItTakesUpToTheWholeLimit() throws {
        // Larger than what the sockets between them hold.
        let body = [UInt8](repeating: UInt8(ascii: "#"), count: 16 << 20) + Array("\n".utf8)
        let endpoint = try MetricsEndpoint(address: MetricsAddress(port: 0)) { body }
        defer { endpoint.close() }
        endpoint.replyLimit = .milliseconds(100)
        let steady = try Client(endpoint.port)
        steady.send("GET /metrics HTTP/1.1\r\n\r\n")
        let started = ContinuousClock.now
        // 1 MiB each 20 ms: 16 turns at the least, three times the reply limit.
        serve(endpoint, every: 0.02) { steady.take(atMost: 1 << 20) }
        #expect(ContinuousClock.now - started > endpoint.replyLimit * 3)
        #expect(steady.received.count > body.count && steady.text.hasSuffix("##\n"), "\(steady.received.count) bytes")
        #expect(endpoint.counts.slow == 0 && endpoint.counts.scrapes == 1, "\(endpoint.counts)")

        // Only the whole limit can drop this one.
        endpoint.replyLimit = .seconds(60)
        endpoint.wholeReplyLimit = .milliseconds(300)
        let trickle = try Client(endpoint.port)
        trickle.send("GET /metrics HTTP/1.1\r\n\r\n")
        let asked = ContinuousClock.now
        serve(endpoint, every: 0.02) {
            _ = trickle.take(atMost: 1024)
            return endpoint.counts.slow == 1
        }
        #expect(endpoint.counts.slow == 1 && ContinuousClock.now - asked >= endpoint.wholeReplyLimit, "\(endpoint.counts)")
        #expect(trickle.received.count < body.count && endpoint.descriptors.count == 1, "\(trickle.received.count) bytes")
    }

    /// Scrapes in quick succession share one rendering (a scraper asking a thousand times a
    /// second costs one a second); a change noted, or `freshFor` passing, renders anew.
    @Test func scrapesShareARenderingWhileNothingChanges() throws {
        var renderings = 0
        var changes = 0
        let endpoint = try MetricsEndpoint(address: MetricsAddress(port: 0)) {
            renderings += 1
            return Array("beacon_emit_beacons \(renderings)\n".utf8)
        }
        defer { endpoint.close() }
        endpoint.changes = { changes }
        func scrapeOnce() throws -> String {
            let client = try Client(endpoint.port)
            client.send("GET /metrics HTTP/1.1\r\n\r\n")
            serve(endpoint) { client.take() }
            return client.text
        }
        let first = try scrapeOnce()
        for _ in 0..<50 { #expect(try scrapeOnce() == first) }
        #expect(renderings == 1 && endpoint.counts.scrapes == 51, "\(renderings) renderings")
        changes += 1
        #expect(try scrapeOnce().hasSuffix("beacon_emit_beacons 2\n"), "a change noted renders anew")
        endpoint.freshFor = .milliseconds(50)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(try scrapeOnce().hasSuffix("beacon_emit_beacons 3\n"), "a rendering older than freshFor is not reused")
    }

    @Test func pastTheMostClientsTheOldestGivesWay() throws {
        let endpoint = try MetricsEndpoint(address: MetricsAddress(port: 0)) { [] }
        defer { endpoint.close() }
        let clients = try (0..<(MetricsEndpoint.maximumClients + 4)).map { _ in try Client(endpoint.port) }
        serve(endpoint) { endpoint.counts.displaced == 4 }
        #expect(endpoint.counts.displaced == 4 && endpoint.descriptors.count == MetricsEndpoint.maximumClients + 1)
        #expect(clients.prefix(4).allSatisfy { $0.take() }, "the four oldest were closed")
    }

    @Test(arguments: [
        ("9464", "127.0.0.1:9464"), (":9464", "127.0.0.1:9464"), ("0.0.0.0:80", "0.0.0.0:80"), ("[::1]:9464", "[::1]:9464"),
        ("192.168.1.20:9100", "192.168.1.20:9100"), ("0", "127.0.0.1:0"),
    ])
    func anAddressReads(text: String, address: String) throws {
        #expect(try MetricsAddress(parsing: text).description == address)
    }

    @Test(arguments: ["", "-1", "70000", "localhost:9464", "9464:", "::1:9464", "host", "[::1]9464"])
    func aBadAddressSaysWhatItTakes(text: String) {
        #expect { try MetricsAddress(parsing: text) } throws: { "\($0)".contains("--metrics takes") }
    }

    @Test func aPortInUseIsAnErrorThatSaysSo() throws {
        let first = try MetricsEndpoint(address: MetricsAddress(port: 0)) { [] }
        defer { first.close() }
        #expect { try MetricsEndpoint(address: MetricsAddress(port: first.port)) { [] } } throws: { error in
            (error as? MetricsError)?.portInUse == true && "\(error)".contains("the port is in use")
        }
    }
}

/// `GET /metrics` from `port` on this machine: the answer's body.
/// - Throws: where the endpoint does not answer 200 within `timeout`.
func scrape(_ port: UInt16, path: String = "/metrics", timeout: Duration = .seconds(3)) throws -> String {
    struct Unanswered: Error, CustomStringConvertible { var description: String }
    let socket = try TCPConnection.connect(host: "127.0.0.1", port: port, name: "metrics")
    defer { socket.close() }
    try socket.setOption(level: SOL_SOCKET, SO_RCVTIMEO, to: timeout)
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { Glibc.recv(socket.rawValue, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            if count < 0 { throw Unanswered(description: "no answer within \(timeout): errno \(errno)") }
            break
        }
        answer += chunk[..<count]
    }
    let text = String(decoding: answer, as: UTF8.self)
    guard text.hasPrefix("HTTP/1.1 200"), let head = text.range(of: "\r\n\r\n") else {
        throw Unanswered(description: "not 200: \(text.prefix(200))")
    }
    return String(text[head.upperBound...])
}

extension Rig {
/// `advertise --metrics` on the virtual radio, scraped as Prometheus would and read with its
/// parser: values that follow a beacon added over the control socket and a controller reset
/// injected on the wire; silent, flooding and stalled scrapers dropped while the beacons stay on
/// the air and a real scrape is answered.
@Suite struct MetricsRootcanalTests {
    var port: UInt16 { rigPort ?? 0 }

    @Test func theEndpointFollowsTheEmitter() throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let control = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--json", "--control", control,
                                                        "--metrics", "127.0.0.1:0"] + referenceArguments)
        defer { emitter.signal(SIGTERM); _ = emitter.wait() }
        try #require(emitter.waitForOutput(#""event":"advertising""#), "\(emitter.stderr)")
        let printed = try #require(emitter.stderr.split(separator: "\n").first { $0.contains("metrics: http://127.0.0.1:") })
        let metricsPort = try #require(UInt16(printed.split(separator: ":").last?.split(separator: "/").first ?? ""))
        var parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_beacons") == 1 && parsed.value("beacon_emit_beacons_on_air") == 1, "\(parsed.families.map(\.name))")
        #expect(parsed.samples("beacon_emit_beacons").first?.labels["adapter"] == "tcp:127.0.0.1:\(proxy.port)")

        // A beacon added over the control socket.
        let added = try runBeaconEmit(["control", control, "add", "uuid=39ED98FF2900441A802F9C398FC199D2,major=5,minor=5"])
        #expect(added.status == 0, "\(added.stderr)")
        parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_beacons") == 2 && parsed.value("beacon_emit_beacons_on_air") == 2)
        #expect(parsed.value("beacon_emit_control_requests_total", ["command": "add", "outcome": "ok"]) == 1)

        // A controller reset on the wire: counted, and the restore's time observed.
        proxy.sendToController(Reset().packet)
        #expect(emitter.waitForOutput(#""event":"restored""#), "\(emitter.stdout) \(emitter.stderr)")
        parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_disruptions_total", ["kind": "reset"]) == 1)
        #expect(parsed.value("beacon_emit_restore_seconds_count") == 1)
        #expect((parsed.value("beacon_emit_restore_seconds_sum") ?? 99) < 5)
        #expect(parsed.value("beacon_emit_beacons_on_air") == 2 && parsed.value("beacon_emit_adapter_state", ["state": "on-air"]) == 1)

        // Scrapers that misbehave: 12 that send nothing, one that floods, one that reads nothing.
        let silent = try (0..<12).map { _ in try TCPConnection.connect(host: "127.0.0.1", port: metricsPort, name: "silent") }
        let flood = try TCPConnection.connect(host: "127.0.0.1", port: metricsPort, name: "flood")
        let padding = Array(("GET /metrics HTTP/1.1\r\n" + String(repeating: "X: 0123456789\r\n", count: 4000)).utf8)
        _ = padding.withUnsafeBytes { Glibc.send(flood.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        defer { (silent + [flood]).forEach { $0.close() } }
        // A real scrape is answered at once: by taking the place of a scraper that holds one, not
        // after the silent ones are dropped for sending nothing (which the answer would count as
        // "idle", in a rendering made after they connected: a starved scrape waits past the rendering's
        // freshness). Judged by what the endpoint counted, not by a clock a loaded machine stretches.
        parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_beacons_on_air") == 2)
        #expect((parsed.value("beacon_emit_metrics_requests_total", ["outcome": "idle"]) ?? 0) == 0,
                "the scrape waited for the silent scrapers to be dropped")
        // The beacons stay on the air meanwhile (a second device hears them).
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        #expect(reports.contains { Array($0.data) == referenceAdvertisingData }, "the beacon went off the air")
        #expect(emitter.stdout.components(separatedBy: #""event":"off-air""#).count == 2, "no disruption but the one injected")
        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(throws: (any Error).self) { try scrape(metricsPort, timeout: .seconds(1)) }
    }

    /// A bad --metrics is a usage error (64); a port in use is an error (69) before anything is sent.
    @Test func aBadValueOrAPortInUseStopsTheRunBeforeAnythingIsSent() throws {
        let bad = try runBeaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--metrics", "localhost:http"] + referenceArguments)
        #expect(bad.status == 64 && bad.stderr.contains("--metrics takes"), "\(bad.stderr)")
        let taken = try MetricsEndpoint(address: MetricsAddress(port: 0)) { [] }
        defer { taken.close() }
        let proxy = try LoggingProxy(upstreamPort: port)
        let inUse = try runBeaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--metrics", "\(taken.port)", "--duration", "1"]
                                      + referenceArguments)
        #expect(inUse.status == 69 && inUse.stderr.contains("--metrics 127.0.0.1:\(taken.port): the port is in use"), "\(inUse.stderr)")
        #expect(!proxy.commands.contains { HexText.format($0.bytes).hasPrefix("3920") }, "nothing enabled")
    }
}
}

/// packaging/'s Grafana dashboard and alert rules name metrics that exist: every metric a query
/// names is one an emitter exposes (read by Prometheus' parser), and every label a query groups
/// by is one those metrics carry (or one Prometheus adds: instance, job).
@Suite(.enabled(if: prometheusPython != nil, "needs scripts/with-rootcanal (Prometheus' parser)"))
struct PackagedQueriesTests {
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging")

    /// Every metric and its labels, as an emitter with every kind of series exposes them.
    static func exposed() throws -> [String: Set<String>] {
        let metrics = EmitterMetrics(adapter: "hci0", version: "1")
        metrics.sample = { .init(beacons: 1, canary: [(1, true, .seconds(1))], controlRefusals: ["idle": 1]) }
        metrics.endpointCounts = { ["scrape": 1] }
        var labels: [String: Set<String>] = ["up": ["instance", "job"]]
        for sample in try ParsedMetrics(String(decoding: metrics.exposition(), as: UTF8.self)).families.flatMap(\.samples) {
            labels[sample.name, default: []].formUnion(sample.labels.keys)
        }
        return labels
    }

    /// The metric names in a PromQL expression: identifiers that are neither functions,
    /// keywords nor labels (a label is followed by `=`, `!=`, `=~` or stands in by/without ()).
    /// PromQL's aggregation operators (followed by `by (...)` as often as by their argument).
    static let aggregations: Set = ["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                                    "bottomk", "topk", "quantile", "limitk", "limit_ratio"]

    static func names(in expression: String) -> (metrics: [String], groupedBy: [String]) {
        var metrics: [String] = []
        var grouped: [String] = []
        let characters = Array(expression)
        var index = 0
        var inBraces = false, inQuotes = false, inGrouping = false
        while index < characters.count {
            let character = characters[index]
            if inQuotes {
                if character == "\"" { inQuotes = false }
                index += 1
                continue
            }
            switch character {
            case "\"": inQuotes = true
            case "{": inBraces = true
            case "}": inBraces = false
            case ")": inGrouping = false
            case "[":
                while index < characters.count && characters[index] != "]" { index += 1 }
            default: break
            }
            guard character.isLetter || character == "_" else {
                index += 1
                continue
            }
            var word = ""
            while index < characters.count && (characters[index].isLetter || characters[index].isNumber || characters[index] == "_") {
                word.append(characters[index])
                index += 1
            }
            let next = characters[index...].first { $0 != " " }
            if ["by", "without"].contains(word) {
                inGrouping = true
            } else if inGrouping {
                grouped.append(word)
            } else if !inBraces && next != "(" && !["and", "or", "unless", "on", "ignoring", "bool"].contains(word)
                        && !Self.aggregations.contains(word) {
                metrics.append(word)
            }
        }
        return (metrics, grouped)
    }

    static func expressions() throws -> [String] {
        let dashboard = try JSONSerialization.jsonObject(with: Data(contentsOf: packaging.appendingPathComponent("grafana/beacon-emit.json")))
        let panels = (dashboard as? [String: Any])?["panels"] as? [[String: Any]] ?? []
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        let rules = try Yams.load(yaml: String(contentsOf: packaging.appendingPathComponent("prometheus/alerts.yml"), encoding: .utf8))
        let groups = (rules as? [String: Any])?["groups"] as? [[String: Any]] ?? []
        let alerts = groups.flatMap { ($0["rules"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        return queries + alerts
    }

    @Test func everyQueryNamesMetricsAndLabelsThatExist() throws {
        let exposed = try Self.exposed()
        let expressions = try Self.expressions()
        #expect(expressions.count >= 10, "\(expressions)")
        for expression in expressions {
            let (metrics, grouped) = Self.names(in: expression)
            #expect(!metrics.isEmpty, "\(expression): names no metric")
            for metric in metrics {
                #expect(exposed[metric] != nil, "\(expression): \(metric) is not a metric an emitter exposes")
            }
            let carried = metrics.reduce(into: Set(["instance", "job"])) { $0.formUnion(exposed[$1] ?? []) }
            for label in grouped {
                #expect(carried.contains(label), "\(expression): no metric there carries the label \(label)")
            }
        }
    }

    /// docs/service.md's Metrics section names only metrics that exist, and every metric an
    /// emitter exposes.
    @Test func theServiceGuideNamesTheMetricsThatExist() throws {
        let exposed = try Self.exposed()
        let guide = try String(contentsOf: Self.packaging.deletingLastPathComponent().appendingPathComponent("docs/service.md"),
                               encoding: .utf8)
        // Its Metrics section (the Ansible role's variables elsewhere share the prefix).
        let section = guide.components(separatedBy: "\n## ").first { $0.hasPrefix("Metrics") } ?? ""
        let named = Set(section.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
            .filter { $0.hasPrefix("beacon_emit_") || $0.hasPrefix("process_") })
        let families = Set(exposed.keys.map { name in
            ["_bucket", "_sum", "_count"].reduce(name) { $0.hasSuffix($1) ? String($0.dropLast($1.count)) : $0 }
        }).subtracting(["up"])
        #expect(named.subtracting(families).isEmpty, "named but not exposed: \(named.subtracting(families).sorted())")
        #expect(families.subtracting(named).isEmpty, "exposed but not in the guide: \(families.subtracting(named).sorted())")
    }

    /// The checker itself finds a misspelled metric and a label no metric carries.
    @Test func theCheckerFindsAMistake() throws {
        let exposed = try Self.exposed()
        let (metrics, grouped) = Self.names(in: #"sum by (instance, colour) (rate(beacon_emit_disruption_total{kind="reset"}[5m]))"#)
        #expect(metrics == ["beacon_emit_disruption_total"] && exposed[metrics[0]] == nil)
        #expect(grouped == ["instance", "colour"])
    }
}

extension Rig {
/// `run --metrics`: a scenario's beacons scraped while it runs.
@Suite struct ScenarioMetricsRootcanalTests {
    @Test func aScenarioServesItsMetricsWhileItRuns() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-scenario-\(getpid()).yaml").path
        try """
        device: tcp:127.0.0.1:\(rigPort ?? 0)
        beacons:
          lobby: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 2}
          door: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: 3}
        steps:
          - advertise: [lobby, door]
          - wait: 3
          - stop: door
          - wait: 3
        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let runner = try BackgroundProcess.beaconEmit(["run", path, "--metrics", "127.0.0.1:0"])
        defer { runner.signal(SIGTERM); _ = runner.wait() }
        try #require(runner.waitForOutput("advertise"), "\(runner.stderr)")
        let printed = try #require(runner.stderr.split(separator: "\n").first { $0.contains("metrics: http://127.0.0.1:") })
        let metricsPort = try #require(UInt16(printed.split(separator: ":").last?.split(separator: "/").first ?? ""))
        Thread.sleep(forTimeInterval: 1)
        var parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_beacons") == 2 && parsed.value("beacon_emit_beacons_on_air") == 2,
                "\(parsed.samples("beacon_emit_beacons"))")
        Thread.sleep(forTimeInterval: 3)
        parsed = try ParsedMetrics(try scrape(metricsPort))
        #expect(parsed.value("beacon_emit_beacons") == 1, "\(parsed.samples("beacon_emit_beacons"))")
        #expect(runner.wait(timeout: .seconds(10)) == 0, "\(runner.stderr)")
    }
}
}
