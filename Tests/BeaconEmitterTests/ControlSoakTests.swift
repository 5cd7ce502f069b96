// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// How long the soak runs: BEACON_EMIT_SOAK_SECONDS (60 by default: two checkpoints; 3600 for the hour's run).
let soakSeconds = ProcessInfo.processInfo.environment["BEACON_EMIT_SOAK_SECONDS"].flatMap(Double.init) ?? 60

/// The soak's UUID: what the independent scanner counts as the soak's beacons.
private let soakUUID = "5A0C5A0C-0000-4000-8000-00000000BEEF"
private let soakUUIDBytes = hex("5A0C5A0C 0000 4000 8000 00000000BEEF")

/// One process's memory, descriptors and threads, from /proc.
struct ProcessFootprint: CustomStringConvertible {
    var rssKiB = 0
    var descriptors = 0
    var threads = 0

    init(pid: Int32) {
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) {
            for line in status.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 2, let value = Int(fields[1]) else { continue }
                if fields[0] == "VmRSS:" { rssKiB = value }
                if fields[0] == "Threads:" { threads = value }
            }
        }
        descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    var description: String { String(format: "RSS %.1f MB, %d fds, %d threads", Double(rssKiB) / 1024, descriptors, threads) }
}

/// What the soak's driver saw, shared between its threads.
final class SoakLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = (requests: 0, retries: 0, refusedFull: 0, badClients: 0, injections: 0)
    private var problems: [String] = []
    func count(_ body: (inout (requests: Int, retries: Int, refusedFull: Int, badClients: Int, injections: Int)) -> Void) {
        lock.withLock { body(&storage) }
    }
    var counts: (requests: Int, retries: Int, refusedFull: Int, badClients: Int, injections: Int) { lock.withLock { storage } }
    func problem(_ text: String) { lock.withLock { if problems.count < 20 { problems.append(text) } } }
    var allProblems: [String] { lock.withLock { problems } }
}

extension Rig {
/// `advertise --control` soaked as a rig's harness drives it: four beacons and more, changed as
/// fast as replies come, while a proxy between the emitter and the controller injects a
/// controller reset or a Hardware Error every 5 s, and clients send half lines and bad JSON.
/// Judged by an independent scanner on the same radio (at checkpoints, exactly the beacons the
/// list holds are on the air), by the control protocol itself (the list always matches what
/// the replies said; ids stay theirs), by the emitter's own events (every injection off the
/// air and back) and by its memory and descriptors.
@Suite struct ControlSoakTests {
    let port = rigPort ?? 0

    static func data(minor: Int) -> [UInt8] {
        hex("0201061AFF4C000215") + soakUUIDBytes + [0x00, 0x07, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    }

    static func spec(minor: Int) -> String { "uuid=\(soakUUID),major=7,minor=\(minor)" }

    @Test(.notUnderEmulation("the air is checked against the list in windows set for native speed (under emulation a scanner misses updates), and qemu-user adds a thread to every process"))
    func controlSurvivesResetsAndHardwareErrors() throws {
        let proxy = try LoggingProxy(upstreamPort: port, recording: false)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(getpid()).sock").path
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--control", path, "--json"]
                                                       + (1...4).flatMap { ["--beacon", Self.spec(minor: $0)] })
        defer { emitter.signal(SIGTERM); emitter.wait() }
        try #require(emitter.waitForOutput(#""event":"advertising""#), "\(emitter.stderr)")
        let pid = emitter.process.processIdentifier
        let atStart = ProcessFootprint(pid: pid)
        let log = SoakLog()
        let started = ContinuousClock.now
        let end = started + .seconds(soakSeconds)
        let warmUp = started + .seconds(min(30, soakSeconds / 4))
        var afterWarmUp: ProcessFootprint?
        var peakRSS = atStart.rssKiB

        // The harness: one connection, requests back to back, its own record of the beacons.
        // Each request holds `paused`, each injection `injecting` (never both: an injection
        // lands in the middle of requests); a checkpoint takes both.
        let paused = NSLock(), injecting = NSLock()
        Thread.detachNewThread {
            Self.drive(path: path, until: end, paused: paused, log: log)
        }
        // The disruptions: a reset sent to the controller as another program would, or a
        // Hardware Error sent to the emitter as the controller would, in turn.
        Thread.detachNewThread {
            var next = started + .seconds(5)
            while next < end - .seconds(2) {
                while ContinuousClock.now < next { Thread.sleep(forTimeInterval: 0.05) }
                injecting.withLock {
                    log.count { $0.injections += 1 }
                    if log.counts.injections % 2 == 1 {
                        proxy.sendToController(Reset().packet)
                    } else {
                        proxy.sendToHost(.hardwareError(hardwareCode: 0x2A))
                    }
                }
                next += .seconds(5)
            }
        }

        // Checkpoints every 30 s: the load paused (no injection either), the air must hold
        // exactly what the list says.
        var checkpoints = 0
        var nextCheckpoint = started + .seconds(30)
        while ContinuousClock.now < end {
            Thread.sleep(forTimeInterval: 0.5)
            let footprint = ProcessFootprint(pid: pid)
            peakRSS = max(peakRSS, footprint.rssKiB)
            if afterWarmUp == nil, ContinuousClock.now >= warmUp { afterWarmUp = footprint }
            if ContinuousClock.now >= nextCheckpoint && ContinuousClock.now < end - .seconds(5) {
                try paused.withLock { try injecting.withLock { try checkAir(path: path, scanner: scanner, log: log) } }
                checkpoints += 1
                nextCheckpoint = .now + .seconds(30)
            }
        }
        Thread.sleep(forTimeInterval: 1)  // the harness's last request
        try paused.withLock { try injecting.withLock { try checkAir(path: path, scanner: scanner, log: log) } }
        checkpoints += 1
        let atEnd = ProcessFootprint(pid: pid)

        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr.suffix(2000))")
        let events = emitter.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        let offAir = events.filter { $0["event"] as? String == "off-air" }
        let gaps = events.filter { $0["event"] as? String == "restored" }.compactMap { ($0["gapMs"] as? NSNumber)?.doubleValue }.sorted()
        let counts = log.counts
        let median = gaps.isEmpty ? 0 : gaps[gaps.count / 2]
        print("""
            soak: \(Int(soakSeconds)) s, \(counts.requests) requests (\(counts.retries) answered retry, \
            \(counts.refusedFull) refused: every set in use), \(counts.badClients) bad clients, \
            \(counts.injections) injections, \(offAir.count) off the air, \(gaps.count) restored \
            (gap median \(Int(median)) ms, worst \(Int(gaps.last ?? 0)) ms), \(checkpoints) air checks
            soak: emitter at start \(atStart); after warm-up \(afterWarmUp ?? atStart); at the end \(atEnd); \
            peak RSS \(String(format: "%.1f", Double(peakRSS) / 1024)) MB
            """)
        #expect(log.allProblems.isEmpty, "\(log.allProblems)")
        #expect(counts.injections >= 2 && counts.requests > counts.injections * 10)
        #expect(offAir.count == counts.injections, "every injection takes the beacons off the air: \(offAir)")
        #expect(gaps.count == counts.injections, "and every one is recovered")
        #expect((gaps.last ?? 0) < 2000)
        #expect(counts.retries == 0, "a restore well inside the hold limit leaves nothing to retry")
        // Flat: descriptors as after the warm-up, memory within a few MB of it.
        let warm = afterWarmUp ?? atStart
        #expect(atEnd.descriptors <= warm.descriptors + 1, "descriptors grew: \(warm) then \(atEnd)")
        #expect(atEnd.rssKiB <= warm.rssKiB + 8 * 1024, "memory grew: \(warm) then \(atEnd)")
        #expect(atEnd.threads == 1)
    }

    /// With the load paused: once the beacons are on the air, what the scanner hears of the
    /// soak's beacons is exactly what `list` holds.
    func checkAir(path: String, scanner: TestScanner, log: SoakLog) throws {
        let client = try SocketClient(path: path)
        let deadline = ContinuousClock.now + .seconds(5)
        while client.request(#"{"command":"status"}"#)["state"] as? String != "on-air" && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let list = client.request(#"{"command":"list"}"#)
        let expected = Set(((list["beacons"] as? [[String: Any]]) ?? []).compactMap { $0["minor"] as? Int }.map(Self.data(minor:)))
        // What was in flight before the pause goes by first.
        let settle = ContinuousClock.now + .milliseconds(500)
        while ContinuousClock.now < settle { _ = try scanner.scanner.nextReport(timeout: .milliseconds(50)) }
        var heard: Set<[UInt8]> = []
        let listen = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < listen {
            if let report = try scanner.scanner.nextReport(timeout: .milliseconds(50)),
               report.data.count == 30, Array(report.data[9..<25]) == soakUUIDBytes {
                heard.insert(report.data)
            }
        }
        if heard != expected || expected.isEmpty {
            log.problem("on the air \(heard.map { HexText.format($0.suffix(5)) }.sorted()), "
                        + "the list \(expected.map { HexText.format($0.suffix(5)) }.sorted())")
        }
    }

    /// The harness: add, update, list, status and remove as fast as replies come, keeping
    /// three to six beacons; every reply checked against its own record; now and then a
    /// client that leaves mid-line or sends bad JSON.
    static func drive(path: String, until end: ContinuousClock.Instant, paused: NSLock, log: SoakLog) {
        guard let client = try? SocketClient(path: path) else { return log.problem("cannot connect") }
        var record: [Int: Int] = [1: 1, 2: 2, 3: 3, 4: 4]  // id: minor
        var nextMinor = 5
        var generator = SystemRandomNumberGenerator()
        var sent = 0
        while ContinuousClock.now < end - .seconds(1) {
            paused.lock()
            defer { paused.unlock() }
            sent += 1
            if sent % 25 == 0 {
                log.count { $0.badClients += 2 }
                if let leaving = try? SocketClient(path: path) { leaving.write(#"{"command":"upd"#) }
                if let bad = try? SocketClient(path: path),
                   (bad.request("{not json")["error"] as? String)?.hasPrefix("not a JSON object") != true {
                    log.problem("bad JSON got no error")
                }
            }
            let ids = record.keys.sorted()
            let request: String
            var change: (inout [Int: Int], [String: Any]) -> Void = { _, _ in }
            switch Int.random(in: 0..<5, using: &generator) {
            case 0 where ids.count < 6:
                let minor = nextMinor
                nextMinor = nextMinor % 60000 + 1
                request = #"{"command":"add","beacon":"\#(spec(minor: minor))"}"#
                change = { record, reply in if let id = reply["id"] as? Int { record[id] = minor } }
            case 1 where ids.count > 3:
                let id = ids.randomElement(using: &generator)!
                request = #"{"command":"remove","id":\#(id)}"#
                change = { record, _ in record[id] = nil }
            case 2:
                let id = ids.randomElement(using: &generator)!
                let minor = nextMinor
                nextMinor = nextMinor % 60000 + 1
                request = #"{"command":"update","id":\#(id),"fields":{"minor":\#(minor)}}"#
                change = { record, _ in record[id] = minor }
            case 3:
                request = #"{"command":"status"}"#
            default:
                request = #"{"command":"list"}"#
            }
            let reply = client.request(request, timeout: .seconds(10))
            log.count { $0.requests += 1 }
            if reply["ok"] as? Bool == true {
                change(&record, reply)
                if let beacons = reply["beacons"] as? [[String: Any]] {
                    let listed = Dictionary(beacons.compactMap { b in (b["id"] as? Int).map { ($0, b["minor"] as? Int ?? -1) } }) { $1 }
                    if listed != record { log.problem("list \(listed.sorted { $0.key < $1.key }) but the replies said \(record.sorted { $0.key < $1.key })") }
                }
            } else if reply["retry"] as? Bool == true {
                log.count { $0.retries += 1 }
            } else if (reply["error"] as? String)?.contains("advertising sets are in use") == true {
                log.count { $0.refusedFull += 1 }
            } else {
                log.problem("\(request): \(reply)")
            }
        }
    }
}
}
