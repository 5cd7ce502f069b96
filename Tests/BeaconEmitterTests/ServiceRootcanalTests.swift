// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// A datagram socket standing in for systemd's notification socket: what arrived, and when.
final class NotifyListener: @unchecked Sendable {
    let path: String
    let fd: Int32

    init() throws {
        struct Failed: Error { var call: String }
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if bound != 0 { throw Failed(call: "bind") }
    }

    /// Datagrams arriving within `timeout` (stopping early when `until` says so).
    func receive(_ timeout: Duration, until done: ([(ContinuousClock.Instant, String)]) -> Bool = { _ in false })
        -> [(ContinuousClock.Instant, String)] {
        var messages: [(ContinuousClock.Instant, String)] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !done(messages) {
            var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pending, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { messages.append((.now, String(decoding: buffer[..<count], as: UTF8.self))) }
        }
        return messages
    }

    private let lock = NSLock()
    private var keptMessages: [String]?

    /// Takes the datagrams queued now, without waiting, and keeps them for `kept`.
    func keepQueued() {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { break }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        lock.withLock { keptMessages = messages }
    }

    /// What `keepQueued` took (nil before it ran).
    var kept: [String]? { lock.withLock { keptMessages } }

    deinit {
        close(fd)
        unlink(path)
    }
}

extension Rig {
/// Running as a systemd service: the notification protocol against a socket the test
/// listens on, reload changing advertising in place, journald's line format; on rootcanal,
/// with an independent scanner.
@Suite struct ServiceRootcanalTests {
    let port = rigPort ?? 0

    func configuration(minor: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("service-\(getpid()).yaml").path
        try "beacons:\n  - {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: \(minor)}\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func readyWatchdogReloadAndStoppingAsSystemdHearsThem() throws {
        let listener = try NotifyListener()
        let scanner = try TestScanner(port: port)
        let config = try configuration(minor: 2)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let proxy = try LoggingProxy(upstreamPort: port, recording: false) { listener.keepQueued() }
        // Watchdog every 600 ms: pings every 300 ms.
        let emitter = try BackgroundProcess(try beaconEmitPath(), ["-i", "tcp:127.0.0.1:\(proxy.port)", "--config", config],
                                            environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "600000"])
        defer { emitter.signal(SIGKILL) }
        // READY must not come before the beacon is on the air: the proxy looks at what the
        // notification socket holds at the one moment before the controller's answer to the
        // enable reaches the program. A READY sent before then is already queued there (a local
        // datagram is in the receiver's queue when send returns); one sent after cannot be.
        // Order, not time: nothing here depends on how fast anything runs. (The socket is not
        // read here until the proxy has looked.)
        let enabled = ContinuousClock.now + .seconds(10)
        while listener.kept == nil && ContinuousClock.now < enabled { usleep(2000) }
        let before = try #require(listener.kept, "the program never enabled advertising")
        let ready = try #require(listener.receive(.seconds(5)) { $0.contains { $0.1.hasPrefix("READY=1") } }
            .first { $0.1.hasPrefix("READY=1") }, "no READY")
        #expect(!before.contains { $0.hasPrefix("READY=1") }, "READY came before the enable was answered: \(before)")
        #expect(ready.1.hasPrefix("READY=1\nSTATUS=advertising 1 beacon on tcp:127.0.0.1:"), "\(ready.1)")
        let heard = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        #expect(heard.contains { Array($0.data) == referenceAdvertisingData }, "the beacon was not heard")

        let pings = listener.receive(.milliseconds(1600)).filter { $0.1 == "WATCHDOG=1" }.map(\.0)
        let gaps = zip(pings, pings.dropFirst()).map { $0.0.duration(to: $0.1) }
        #expect((4...7).contains(pings.count), "\(pings.count) pings in 1.6 s")
        #expect(gaps.allSatisfy { $0 > .milliseconds(200) && $0 < .milliseconds(450) }, "\(gaps)")

        // Reload: the file says minor 3 now; SIGHUP changes the beacon in place.
        _ = try configuration(minor: 3)
        emitter.signal(SIGHUP)
        let reload = listener.receive(.seconds(3)) { $0.contains { $0.1.hasPrefix("READY=1") } }.map(\.1).filter { $0 != "WATCHDOG=1" }
        #expect(reload.first?.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") == true, "\(reload)")
        #expect(reload.last?.hasPrefix("READY=1\nSTATUS=advertising 1 beacon") == true, "\(reload)")
        let after = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == threeBeaconData[2] } }
        #expect(after.contains { Array($0.data) == threeBeaconData[2] }, "the reloaded beacon is not heard")

        // A file with a mistake, an alias bomb, a file nested too deep, a chain of aliases 50,000
        // deep once composed: each reload says where, and changes nothing.
        let bomb = (1...8).map { level in "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10)
            .joined(separator: ", ") + "]" }
        for (text, place) in [("beacons:\n  - {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 101, minor: seven}\n", ":2:69: "),
                              ((["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + bomb + ["beacons: []"]).joined(separator: "\n"), ":5:10: "),
                              // Freeing the composed chain overflowed the stack and killed the emitter.
                              ("beacons:\n  - &a [0]\n" + String(repeating: "  - &a [*a]\n", count: 50_000), ":64:9: "),
                              // 5,000 deep: this reload overflowed the stack and killed the emitter.
                              ("beacons: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000), ":1:73: ")] {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            emitter.signal(SIGHUP)
            let again = listener.receive(.seconds(3)) { $0.contains { $0.1.hasPrefix("READY=1") } }.map(\.1)
            #expect(again.contains { $0.hasPrefix("READY=1\nSTATUS=advertising 1 beacon") }, "\(again)")
            #expect(emitter.waitForError("reload: --config \(config)\(place)"), "\(emitter.stderr)")
            let still = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == threeBeaconData[2] } }
            #expect(still.contains { Array($0.data) == threeBeaconData[2] }, "the beacon changed after a bad reload")
        }
        #expect(emitter.stderr.contains("the document holds more than 20000 values"), "\(emitter.stderr)")

        emitter.signal(SIGTERM)
        let stopping = listener.receive(.seconds(3)) { $0.contains { $0.1.hasPrefix("STOPPING=1") } }.map(\.1)
        #expect(stopping.contains { $0.hasPrefix("STOPPING=1\nSTATUS=stopping: received SIGTERM") }, "\(stopping)")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("reloaded \(config): 1 changed in place, 0 added, 0 removed"), "\(emitter.stdout)")
    }

    /// Under systemd, standard error is the journal's: each event a line with its priority.
    @Test func journalLinesCarryTheirPriority() throws {
        let script = """
            JOURNAL_STREAM=$(stat -L -c '%d:%i' /proc/self/fd/2) exec "$0" "$@"
            """
        let emitter = try BackgroundProcess("/bin/sh", ["-c", script, try beaconEmitPath(), "-i", "tcp:127.0.0.1:\(port)",
                                                        "--duration", "0.5"] + referenceArguments)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        let lines = emitter.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>advertising on tcp:127.0.0.1:") }, "\(emitter.stderr)")
        #expect(lines.contains { $0 == "<6>advertising off: duration elapsed" }, "\(emitter.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(emitter.stderr)")
        #expect(emitter.stdout.isEmpty, "\(emitter.stdout)")
    }
}
}
