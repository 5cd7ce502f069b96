// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import LinuxSystem
import Testing

/// The pieces that run beacon-emit as a service: the notification protocol's environment and
/// datagrams, a reload's changes, the telemetry counters.
@Suite struct ServiceTests {
    @Test func theWatchdogIsHalfItsTimeoutAndOnlyForItsProcess() {
        let ours = ServiceNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000"])
        #expect(ours?.watchdogInterval == .seconds(15))
        let other = ServiceNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000",
                                                  "WATCHDOG_PID": "\(getpid() + 1)"])
        #expect(other != nil && other?.watchdogInterval == nil)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_PID": "\(getpid())",
                                              "WATCHDOG_USEC": "2000000"])?.watchdogInterval == .seconds(1))
        #expect(ServiceNotifier(environment: [:]) == nil)
        #expect(ServiceNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
    }

    /// A datagram to an abstract-namespace socket (`@name`), as systemd's may be.
    @Test func aNotificationReachesAnAbstractSocket() throws {
        let name = "beacon-emit-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
            }
        }
        try #require(bound == 0)
        let notifier = try #require(ServiceNotifier(environment: ["NOTIFY_SOCKET": "@" + name]))
        #expect(notifier.notify(["READY=1", ServiceNotifier.status("two\nlines")]))
        var buffer = [UInt8](repeating: 0, count: 256)
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pending, 1, 1000) == 1)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        #expect(String(decoding: buffer[..<max(0, count)], as: UTF8.self) == "READY=1\nSTATUS=two lines")
    }

    @Test func theJournalIsRecognisedByStandardErrorsDeviceAndInode() {
        var info = stat()
        fstat(STDERR_FILENO, &info)
        #expect(JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]))
        #expect(!JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]))
        #expect(!JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "garbage"]))
        #expect(!JournalStream.isStandardError(environment: [:]))
    }

    static func beacon(_ minor: UInt16) -> Beacon {
        .iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!, major: 1, minor: minor))
    }

    @Test func aReloadChangesOnlyWhatChanged() throws {
        let live = FakeRunning([Self.beacon(1), Self.beacon(2), Self.beacon(3)])
        let counts = try live.apply([Self.beacon(1), Self.beacon(9)])
        #expect(counts == (1, 0, 1))
        #expect(live.changes == ["update 2", "remove 3"])
        #expect(live.beacons == [Self.beacon(1), Self.beacon(9)])
        live.changes = []
        #expect(try live.apply([Self.beacon(1), Self.beacon(9), Self.beacon(4), Self.beacon(5)]) == (0, 2, 0))
        #expect(live.changes == ["add", "add"])
        #expect(throws: HostError.self) { try live.apply([]) }
    }

    @Test func telemetryCountsPDUsAndTenthsAndWraps() {
        let start = EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: UInt32.max - 1, uptimeDeciseconds: 7)
        let moved = start.advanced(by: 2.5, intervalUnits: 160)  // 100 ms
        #expect(moved.uptimeDeciseconds == 32)
        // 25 events x 3 PDUs = 75 more, wrapping at 2^32 as the field does.
        #expect(moved.advertisingPDUCount == 73)
        #expect(moved.batteryMillivolts == 3000)
        let context = MotionContext(intervalUnits: 160, aes: BoringAES())
        #expect(Beacon.eddystone(.tlm(start)).motion?.advanced(by: 2.5, context) == .eddystone(.tlm(moved)))
        #expect(referenceBeacon.motion == nil, "only a TLM beacon's content moves")
        #expect(start.isMovedOn(.eddystone(.tlm(moved))) && !start.isMovedOn(referenceBeacon))
    }
}

@Suite struct SignalWatcherTests {
    /// A signal only writes to the pipe (in C), and leaves errno as the interrupted code had it.
    @Test func reloadSignalReachesThePipeAndKeepsErrno() {
        let descriptor = SignalWatcher.installReload()
        #expect(descriptor >= 0)
        _ = SignalWatcher.drainReload()
        errno = EAGAIN
        raise(SIGHUP)
        #expect(errno == EAGAIN)
        #expect(Descriptor(descriptor).isReadable)
        #expect(SignalWatcher.drainReload())
        #expect(!SignalWatcher.drainReload())
    }
}
