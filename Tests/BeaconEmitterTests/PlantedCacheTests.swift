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
