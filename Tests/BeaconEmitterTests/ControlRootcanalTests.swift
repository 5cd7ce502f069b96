// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import BeaconReports
import Foundation
import Testing

/// A raw Unix-socket client, written here rather than taken from the code under test.
final class SocketClient {
    let fd: Int32

    init(path: String) throws {
        struct Failed: Error { var call: String; var code: Int32 }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 { throw Failed(call: "connect", code: errno) }
    }

    /// Writes all of `text` (a send that took part of it, interrupted, is followed by the rest).
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno != EINTR && errno != EAGAIN {
                return
            }
        }
    }

    /// What was read past the last line returned (a line is never cut by a timeout or a signal).
    private var buffered: [UInt8] = []

    /// The next line, or nil after `timeout` (or at the connection's end).
    func readLine(timeout: Duration = .seconds(3)) -> String? {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<end], as: UTF8.self)
                buffered.removeSubrange(...end)
                return line
            }
            guard ContinuousClock.now < deadline else { return nil }
            var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pending, 1, 100) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffered += chunk[..<count]
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return nil
            }
        }
    }

    /// One request, its reply parsed.
    func request(_ line: String, timeout: Duration = .seconds(3)) -> [String: Any] {
        write(line + "\n")
        guard let reply = readLine(timeout: timeout) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(reply.utf8))) as? [String: Any] ?? ["unparsed": reply]
    }

    deinit { close(fd) }
}

extension Rig {
/// `advertise --control` on rootcanal, watched by an independent scanner on the same radio.
@Suite struct ControlRootcanalTests {
    let port = rigPort ?? 0

    /// The CPU time a process has used (user and system), from /proc.
    static func cpuTime(of pid: Int32) -> Duration? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command's name: state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return .milliseconds((user + system) * 1000 / Int(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// A crowd of 1,100 connections that send nothing, against an emitter whose descriptors
    /// run out before the crowd does: the emitter stays idle (it spun a core on EMFILE), and a
    /// real `control status` is answered within seconds (it hung). Then 10,000 adds: refused
    /// past the emitter's bound with the reason, and `list` still answers (it failed for
    /// everyone once a reply outgrew the server's unsent limit).
    @Test func aCrowdOfSilentClientsAndTenThousandAddsLeaveTheSocketServing() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-crowd-\(getpid()).sock").path
        // 24 descriptors: the emitter's own and a few clients; the crowd runs them out.
        let emitter = try BackgroundProcess("/bin/sh", ["-c", #"ulimit -n 24 && exec "$0" "$@""#, try beaconEmitPath(),
                                                        "-i", "tcp:127.0.0.1:\(port)", "--control", path, "--duration", "120"]
                                            + referenceArguments)
        defer { emitter.signal(SIGTERM); emitter.wait() }
        let bound = ContinuousClock.now + .seconds(10)
        while !emitter.stderr.contains("control socket: \(path)") && ContinuousClock.now < bound {
            Thread.sleep(forTimeInterval: 0.01)
        }
        try #require(emitter.stderr.contains("control socket: \(path)"), "\(emitter.stderr)")
        // This process needs a descriptor for each member of the crowd.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 4096))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var crowd: [Int32] = []
        defer { crowd.forEach { close($0) } }
        let connecting = ContinuousClock.now + .seconds(20)
        while crowd.count < 1100 && ContinuousClock.now < connecting {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { break }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 {
                crowd.append(fd)
            } else {
                close(fd)
                Thread.sleep(forTimeInterval: 0.001)  // the backlog is full: the emitter takes them in turn
            }
        }
        #expect(crowd.count == 1100, "\(crowd.count) connected")
        // Idle while the crowd sits there: well under a tenth of a core over two seconds.
        let before = try #require(Self.cpuTime(of: emitter.pid))
        Thread.sleep(forTimeInterval: 2)
        let used = try #require(Self.cpuTime(of: emitter.pid)) - before
        #expect(used < .milliseconds(200), "the emitter used \(used) of CPU in 2 s beside the crowd")
        let started = ContinuousClock.now
        let status = try runBeaconEmit(["control", path, "status"])
        #expect(status.status == 0 && status.stdout.contains(#""state":"on-air""#), "\(status.status) \(status.stderr)")
        #expect(started.duration(to: .now) < .seconds(5), "status took \(started.duration(to: .now))")
        crowd.forEach { close($0) }
        crowd = []

        // 10,000 adds in batches of 500 on one connection: the first 255 join the beacon on the
        // air, every later one is refused with the bound.
        // Every request is answered, in order. (Read a byte at a time, a reply cut by a read that
        // ended early lost its start and ended its batch early: on a busy machine this test failed
        // with 25 to 60 replies "missing" that the emitter had all sent. The reader keeps what it
        // read until a line is whole.)
        let client = try SocketClient(path: path)
        var added = 0, refused = 0, other: [String] = []
        var longest = Duration.zero
        for batch in 0..<20 {
            client.write((0..<500).map { index in
                #"{"command":"add","beacon":"uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=7,minor=\#(batch * 500 + index)"}"#
            }.joined(separator: "\n") + "\n")
            for _ in 0..<500 {
                let asked = ContinuousClock.now
                guard let reply = client.readLine(timeout: .seconds(10)) else { break }
                longest = max(longest, asked.duration(to: .now))
                if reply.contains(#""ok":true"#) {
                    added += 1
                } else if reply.contains("an emitter carries at most 256 beacons") {
                    refused += 1
                } else {
                    other.append(reply)
                }
            }
        }
        if longest > .seconds(1) { print("control-crowd: the longest wait for a reply to an add was \(longest)") }
        #expect(added == 255 && refused == 10_000 - 255 && other.isEmpty, "\(added) added, \(refused) refused, \(other.prefix(3))")
        let list = try runBeaconEmit(["control", path, "list"])
        #expect(list.status == 0, "\(list.status) \(list.stderr)")
        let beacons = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])?["beacons"] as? [Any]
        #expect(beacons?.count == 256, "\(list.stdout.prefix(200))")
    }

    /// Each change over the socket is a line of the emitter's own output, as any other change of
    /// its air is (an add printed nothing on the emitter's side).
    @Test func eachChangeOverTheSocketIsSaidByTheEmitter() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-said-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--control", path, "--json"]
                                                       + referenceArguments)
        defer { emitter.signal(SIGTERM); emitter.wait() }
        try #require(emitter.waitForOutput(#""event":"advertising""#), "\(emitter.stderr)")
        let client = try SocketClient(path: path)
        #expect(client.request(#"{"command":"add","beacon":"uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=7,minor=3"}"#)["id"] as? Int == 2)
        #expect(client.request(#"{"command":"update","id":2,"fields":{"minor":4}}"#)["ok"] as? Bool == true)
        #expect(client.request(#"{"command":"remove","id":2}"#)["ok"] as? Bool == true)
        #expect(emitter.waitForOutput(#"{"event":"control","command":"remove","id":2}"#), "\(emitter.stdout)")
        let lines = emitter.stdout.split(separator: "\n").filter { $0.contains(#""event":"control""#) }
        #expect(lines.count == 3, "\(emitter.stdout)")
        #expect(lines.first?.hasPrefix(#"{"event":"control","command":"add","id":2,"beacon":{"type":"ibeacon","#) == true
                && lines.first?.contains(#""major":7,"minor":3"#) == true, "\(lines)")
        #expect(lines.dropFirst().first?.contains(#""command":"update","id":2"#) == true
                && lines.dropFirst().first?.contains(#""minor":4"#) == true, "\(lines)")
    }

    /// While a command waits for a controller that stopped answering, clients pipelining valid
    /// requests padded to 60 KB cannot grow the emitter: what is held for them is bounded (one
    /// such client took the emitter from 25 to 97 MB in two seconds). It answers afterwards.
    @Test func aPipeliningClientWhileTheControllerIsStoppedLeavesMemoryBounded() throws {
        let proxy = try LoggingProxy(upstreamPort: port, recording: false)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-pipe-\(getpid()).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--control", path, "--json"]
                                                       + referenceArguments)
        defer { emitter.signal(SIGTERM); emitter.wait() }
        try #require(emitter.waitForOutput(#""event":"advertising""#), "\(emitter.stderr)")
        let before = ProcessFootprint(pid: emitter.pid)
        proxy.holdCommands()
        // A change whose command now waits for the controller's answer.
        let waiting = try SocketClient(path: path)
        waiting.write(#"{"command":"update","id":1,"fields":{"minor":9}}"# + "\n")
        Thread.sleep(forTimeInterval: 0.2)
        // Six pipelining clients: adds padded to 60 KB, back to back for two seconds, their
        // sockets non-blocking so that a server that stops reading one does not stop this test.
        // (With the waiting one and the status below, eight of this user's: the most one user holds.)
        let floods = try (0..<6).map { _ in try SocketClient(path: path) }
        for flood in floods { _ = fcntl(flood.fd, F_SETFL, fcntl(flood.fd, F_GETFL) | O_NONBLOCK) }
        let padding = String(repeating: " ", count: 60_000)
        var sent = 0, peak = before.rssKiB, minor = 0
        let end = ContinuousClock.now + .seconds(2)
        var pending = [[UInt8]](repeating: [], count: floods.count)
        while ContinuousClock.now < end {
            var wroteAny = false
            for (index, flood) in floods.enumerated() {
                if pending[index].isEmpty {
                    minor += 1
                    pending[index] = Array((#"{"command":"add",\#(padding)"beacon":"uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=8,minor=\#(minor)"}"# + "\n").utf8)
                }
                let wrote = pending[index].withUnsafeBytes { send(flood.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if wrote > 0 { sent += wrote; pending[index].removeFirst(wrote); wroteAny = true }
            }
            if !wroteAny { Thread.sleep(forTimeInterval: 0.005) }
            peak = max(peak, ProcessFootprint(pid: emitter.pid).rssKiB)
        }
        proxy.releaseCommands()
        Thread.sleep(forTimeInterval: 0.5)
        peak = max(peak, ProcessFootprint(pid: emitter.pid).rssKiB)
        print("pipelining: \(sent / 1024) KiB sent in 2 s; the emitter's RSS \(before.rssKiB) KiB before, \(peak) KiB at most")
        // The held bounds are 256 KiB and one serve's read per client: well under 8 MB more, whatever was sent.
        #expect(peak - before.rssKiB < 8 * 1024, "RSS grew from \(before.rssKiB) to \(peak) KiB with \(sent / 1024) KiB sent")
        #expect(sent > 1 << 20, "the clients sent \(sent) bytes: too little to pass the held bounds")
        let status = try runBeaconEmit(["control", path, "status"])
        #expect(status.status == 0 && status.stdout.contains(#""ok":true"#), "\(status.status) \(status.stdout) \(status.stderr)")
    }

    @Test(.notUnderEmulation("replies within the client's 3 s and updates within 300 ms are native speed's bounds"))
    func everyCommandChangesTheAirAndNothingStopsAdvertising() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(getpid()).sock").path
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--control", path, "--duration", "20"]
                                                       + referenceArguments)
        defer { emitter.signal(SIGTERM); emitter.wait() }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        // The socket is bound after advertising is on; its line on standard error says when.
        let bound = ContinuousClock.now + .seconds(5)
        while !emitter.stderr.contains("control socket: \(path)") && ContinuousClock.now < bound {
            Thread.sleep(forTimeInterval: 0.01)
        }
        var mode = stat()
        #expect(lstat(path, &mode) == 0 && mode.st_mode & 0o777 == 0o600, "\(emitter.stderr)")

        // Heard at the scanner from here on, stamped as it arrives (the test's own requests
        // take time under load; the air is timed apart from them).
        let air = AirLog(scanner: scanner)
        defer { air.stop() }
        func hears(_ data: [UInt8], within duration: Duration) -> Bool {
            let start = ContinuousClock.now
            air.listen(duration) { air.heard.contains { $0.at >= start && $0.data == data } }
            return air.heard.contains { $0.at >= start && $0.data == data }
        }
        func silent(_ data: [UInt8], for duration: Duration) -> Bool {
            air.listen(.milliseconds(300))  // what was in flight
            let start = ContinuousClock.now
            air.listen(duration)
            return !air.heard.contains { $0.at >= start && $0.data == data }
        }

        let client = try SocketClient(path: path)
        let list = client.request(#"{"command":"list"}"#)
        #expect((list["beacons"] as? [[String: Any]])?.map { $0["minor"] as? Int } == [2], "\(list)")

        let added = client.request(#"{"command":"add","beacon":"uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101,minor=3"}"#)
        #expect(added["ok"] as? Bool == true && added["id"] as? Int == 2, "\(added)")
        #expect(hears(threeBeaconData[2], within: .seconds(2)), "the added beacon is not heard")

        let updated = client.request(#"{"command":"update","id":1,"fields":{"minor":1}}"#)
        #expect(updated["ok"] as? Bool == true, "\(updated)")
        #expect(hears(threeBeaconData[0], within: .seconds(2)), "the update is not heard")
        #expect(silent(referenceAdvertisingData, for: .milliseconds(700)), "the old data is still heard")

        let removed = client.request(#"{"command":"remove","id":2}"#)
        #expect(removed["ok"] as? Bool == true, "\(removed)")
        #expect(silent(threeBeaconData[2], for: .milliseconds(700)), "the removed beacon is still heard")

        // Any payload through a request: the same keys as --beacon.
        let sensor = client.request(#"{"command":"add","beacon":"name=Hi,manufacturer-data=0x0059:0102"}"#)
        #expect(sensor["ok"] as? Bool == true, "\(sensor)")
        #expect(try hears(HexText.parse("02010605FF5900010203094869"), within: .seconds(2)), "the added payload is not heard")
        let sensorRemoved = client.request(#"{"command":"remove","id":\#(sensor["id"] as? Int ?? 0)}"#)
        #expect(sensorRemoved["ok"] as? Bool == true, "\(sensorRemoved)")

        let status = client.request(#"{"command":"status"}"#)
        #expect(status["state"] as? String == "on-air" && status["beacons"] as? Int == 1, "\(status)")

        // Bad requests get an error each and change nothing.
        #expect((client.request("{nope")["error"] as? String)?.hasPrefix("not a JSON object") == true)
        #expect((client.request(#"{"command":"dance"}"#)["error"] as? String)?.hasPrefix("unknown command") == true)
        #expect((client.request(#"{"command":"remove","id":1}"#)["error"] as? String)?.contains("the last one") == true)

        // A client that leaves mid-line, then fifty in a row: each gets its answer.
        let leaving = try SocketClient(path: path)
        leaving.write(#"{"command":"li"#)
        _ = leaving
        var answered = 0
        for _ in 0..<50 {
            let next = try SocketClient(path: path)
            if next.request(#"{"command":"list"}"#)["ok"] as? Bool == true { answered += 1 }
        }
        #expect(answered == 50)

        // Beacon 1 was on the air throughout: never a silence longer than three intervals.
        air.listen(.milliseconds(500))
        let first = air.heard.filter { $0.data == referenceAdvertisingData || $0.data == threeBeaconData[0] }.map(\.at)
        let longest = zip(first, first.dropFirst()).map { $0.0.duration(to: $0.1) }.max() ?? .zero
        #expect(first.count > 10 && longest <= .milliseconds(300), "longest silence \(longest)")

        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(lstat(path, &mode) != 0, "the socket file is left behind")
    }

    /// What an independent scanner hears for `duration`: each report's beacon.
    func hear(_ duration: Duration, scanner: TestScanner) throws -> [(ContinuousClock.Instant, Beacon)] {
        var heard: [(ContinuousClock.Instant, Beacon)] = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            guard let report = try scanner.scanner.nextReport(timeout: .milliseconds(50)) else { continue }
            for sighting in (try? report.sightings()) ?? [] { heard.append((.now, sighting.beacon)) }
        }
        return heard
    }

    /// A TLM beacon's counters move: after 5 s, 5.0 s more uptime and 150 more PDUs (50
    /// advertising events at 100 ms, three PDUs each), set in place.
    /// `--beacon ...,interval=500`: two beacons at 100 ms and 500 ms, as an independent scanner
    /// counts their reports; then the slow one's interval changed in place by a control
    /// `update`, and both are heard as often.
    @Test(.notUnderEmulation("report counts over 2.5 s windows are native speed's"))
    func eachBeaconAdvertisesAtItsOwnIntervalAndAnUpdateChangesIt() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-own-\(getpid()).sock").path
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--control", path, "--duration", "20",
                                                        "--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101,minor=2",
                                                        "--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101,minor=3,"
                                                            + "interval=500"])
        defer { emitter.signal(SIGTERM); emitter.wait() }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let bound = ContinuousClock.now + .seconds(5)
        while !emitter.stderr.contains("control socket: \(path)") && ContinuousClock.now < bound {
            Thread.sleep(forTimeInterval: 0.01)
        }
        func count(for duration: Duration) throws -> (fast: Int, slow: Int) {
            var counts = (fast: 0, slow: 0)
            let deadline = ContinuousClock.now + duration
            while ContinuousClock.now < deadline {
                guard let report = try scanner.scanner.nextReport(timeout: .milliseconds(50)) else { continue }
                if report.data == threeBeaconData[1] { counts.fast += 1 }
                if report.data == threeBeaconData[2] { counts.slow += 1 }
            }
            return counts
        }
        _ = try count(for: .milliseconds(500))
        let before = try count(for: .milliseconds(2500))
        let client = try SocketClient(path: path)
        let listed = client.request(#"{"command":"list"}"#)["beacons"] as? [[String: Any]]
        #expect(listed?.map { $0["interval"] as? Double } == [nil, 500], "\(String(describing: listed))")
        let updated = client.request(#"{"command":"update","id":2,"fields":{"interval":100}}"#)
        #expect(updated["ok"] as? Bool == true, "\(updated)")
        _ = try count(for: .milliseconds(500))
        let after = try count(for: .milliseconds(2500))
        print("advertise: reports in 2.5 s: fast (100 ms) \(before.fast), slow (500 ms) \(before.slow); after the update, "
              + "both 100 ms: \(after.fast) and \(after.slow)")
        #expect(before.fast >= 15 && before.slow >= 2 && before.fast >= 3 * before.slow, "\(before)")
        #expect(after.slow >= 15 && 2 * after.slow >= after.fast, "\(after)")
    }

    /// `--beacon ...,address=static` and `rotate-address=1`: an independent scanner hears one
    /// beacon from the controller's public address, one from a static random address of its
    /// own all along, and one from a new non-resolvable address every second.
    @Test func eachBeaconAdvertisesFromItsOwnAddressAndOneRotates() throws {
        let device = "tcp:127.0.0.1:\(port)"
        let uuid = "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101"
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "6", "--beacon", "\(uuid),minor=1",
                                                        "--beacon", "\(uuid),minor=2,address=static",
                                                        "--beacon", "\(uuid),minor=3,rotate-address=1"])
        defer { emitter.signal(SIGTERM); emitter.wait() }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let scan = try runBeaconEmit(["scan", "-i", device, "--json", "--duplicates", "--duration", "4.5"])
        #expect(scan.status == 0, "\(scan.stderr)")
        var from: [Int: [(address: String, type: String)]] = [:]
        for line in scan.stdoutLines.compactMap({ JSONValue(parsing: $0) }) {
            guard let minor = line["minor"]?.integer, let address = line["address"]?.string,
                  let type = line["addressType"]?.string else { continue }
            if !(from[minor] ?? []).contains(where: { $0.address == address }) { from[minor, default: []].append((address, type)) }
        }
        #expect(from[1]?.count == 1 && from[1]?.first?.type == "public", "\(from)")
        let made = from[2] ?? []
        #expect(made.count == 1 && made.first?.type == "random" && (made.first?.address.first.map { "CDEF".contains($0) } ?? false),
                "one static random address (top bits 11): \(from)")
        let rotated = from[3] ?? []
        #expect(rotated.count >= 3 && rotated.allSatisfy { $0.type == "random" && "0123".contains($0.address.first ?? "x") },
                "a new non-resolvable address (top bits 00) every second: \(from)")
        print("advertise: beacon 3 heard from \(rotated.count) addresses in 4.5 s; beacon 2 from \(made.first?.address ?? "?")")
        emitter.signal(SIGTERM)
        emitter.wait()
        #expect(emitter.stderr.contains("moving: beacon 3: new address "), "\(emitter.stderr)")
        #expect(emitter.stderr.contains("beacon 2 advertises from \(made.first?.address ?? "?"), an address of its own"),
                "\(emitter.stderr)")
    }

    @Test(.notUnderEmulation("a TLM frame of each update heard within a window set for native speed"))
    func tlmCountersMoveWhileAdvertising() throws {
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--eddystone-tlm", "--battery", "3000",
                                                        "--pdu-count", "1000", "--uptime", "60", "--duration", "6.5"])
        let heard = try hear(.seconds(7), scanner: scanner)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        let frames = heard.compactMap { entry -> EddystoneTLM? in
            if case let .eddystone(.tlm(frame)) = entry.1 { return frame }
            return nil
        }
        let counters = Set(frames.map { "\($0.advertisingPDUCount)/\($0.uptimeDeciseconds)" })
        #expect(counters == ["1000/600", "1150/650"], "\(counters)")
        #expect(frames.allSatisfy { $0.batteryMillivolts == 3000 })
    }

    /// A UID beacon with a TLM frame interleaved on its set: both heard, the UID most of the time.
    @Test func aTlmFrameIsInterleavedWithAUidBeacon() throws {
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(port)", "--eddystone-uid",
                                                        "--namespace", "00112233445566778899", "--instance", "AABBCCDDEEFF",
                                                        "--interleave-tlm", "battery=2900,temperature=21.5", "--duration", "3"])
        let heard = try hear(.seconds(3.5), scanner: scanner)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        var uid = 0, tlm = 0
        for (_, beacon) in heard {
            switch beacon {
            case .eddystone(.uid): uid += 1
            case let .eddystone(.tlm(frame)):
                tlm += 1
                #expect(frame.batteryMillivolts == 2900 && frame.temperature == 21.5)
            default: break
            }
        }
        #expect(tlm >= 1 && uid >= 5 * tlm, "uid \(uid), tlm \(tlm)")
    }
}
}
