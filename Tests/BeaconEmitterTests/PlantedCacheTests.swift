// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// The virtual controller runs the Python of its cached environment: a cache another user
/// made (or anyone can write) is refused before anything in it runs, and without HOME the
/// cache is the password database's home's, never `/tmp/.cache`.
@Suite struct PlantedCacheTests {
    /// A cache directory holding a planted environment whose `python` leaves a marker.
    func plantedCache(mode: mode_t) throws -> (cache: String, marker: String) {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("planted-cache-\(UUID().uuidString)").path
        let bin = cache + "/beacon-emit/rootcanal-1.10.0/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let marker = cache + "/ran"
        try "#!/bin/sh\ntouch \(marker)\n".write(toFile: bin + "/python", atomically: false, encoding: .utf8)
        chmod(bin + "/python", 0o755)
        chmod(cache, mode)
        return (cache, marker)
    }

    @Test func aCacheOthersCanWriteIsRefusedBeforeAnythingRuns() throws {
        let (cache, marker) = try plantedCache(mode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let result = try runBeaconEmit(["verify", "--device", "virtual", "--scanner", "virtual", "--uuid",
                                        "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "1", "--minor", "2", "--timeout", "1"],
                                       environment: ["HOME": "", "XDG_CACHE_HOME": cache, "BEACON_EMIT_ROOTCANAL": ""])
        #expect(result.status != 0, "\(result.stderr)")
        #expect(result.stderr.contains("the cache directory \(cache) is not to be trusted")
                && result.stderr.contains("others can write in it (mode 777)") && result.stderr.contains("XDG_CACHE_HOME"),
                "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the planted python ran")
    }

    @Test func anotherUsersCacheIsRefusedAsRoot() throws {
        guard getuid() == 0 else { return }  // only root can give a directory away
        let (cache, marker) = try plantedCache(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: cache) }
        #expect(chown(cache, 65534, 65534) == 0)
        let result = try runBeaconEmit(["verify", "--device", "virtual", "--scanner", "virtual", "--uuid",
                                        "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "1", "--minor", "2", "--timeout", "1"],
                                       environment: ["XDG_CACHE_HOME": cache, "BEACON_EMIT_ROOTCANAL": ""])
        #expect(result.status != 0 && result.stderr.contains("belongs to nobody"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "nobody's python ran as root")
    }
}

/// `beacon-emit control` against an emitter that takes no connection (stopped, hung, or
/// flooded: its queue full): it gives up after `ControlServer.connectTimeout` with exit 69 and
/// says why, where it waited until killed.
@Suite struct ControlConnectTimeoutTests {
    @Test func aFullQueueIsAnErrorWithinTheConnectTimeout() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-full-\(getpid()).sock").path
        unlink(path)
        defer { unlink(path) }
        func address() -> sockaddr_un {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            return address
        }
        func connectOnce() -> Int32? {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var target = address()
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else { close(fd); return nil }
            return fd
        }
        // A listener that never accepts, its queue filled.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var own = address()
        let bound = withUnsafePointer(to: &own) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 0) == 0)
        var queued: [Int32] = []
        defer { queued.forEach { close($0) } }
        while queued.count < 16, let fd = connectOnce() { queued.append(fd) }
        try #require(!queued.isEmpty && connectOnce() == nil, "the queue is full")
        let started = ContinuousClock.now
        // In the background, killed after 15 s: without a connect timeout it waited for ever.
        let client = try BackgroundProcess.beaconEmit(["control", path, "status"])
        let status = client.wait(timeout: .seconds(15))
        let took = started.duration(to: .now)
        #expect(status == 69, "\(status) \(client.stderr)")
        #expect(client.stderr.contains("took no new connection within 5.0 seconds"), "\(client.stderr)")
        #expect(took >= .seconds(4) && took < .seconds(15), "gave up after \(took)")
    }
}
