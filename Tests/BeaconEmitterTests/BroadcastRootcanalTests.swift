// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Synchronization
import Testing

extension Rig {
/// The async library (`BeaconBroadcast`) against the virtual controller: what a Swift test
/// suite or app on Linux does with beacons, heard by a second device.
@Suite struct BroadcastRootcanalTests {
    let port = rigPort ?? 0
    let uuid = UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!

    func beacon(minor: UInt16) -> Beacon { .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: minor)) }

    /// Started, changed in place and added to while on the air (a second device hears each),
    /// its events an async sequence; cancelling the task takes the beacons off the air.
    @Test func cancellingTheTaskTakesTheBeaconsOffTheAir() async throws {
        let configuration = BeaconAdvertisement.Configuration(device: .tcp(host: "127.0.0.1", port: port),
                                                              options: AdvertisingOptions(beacons: [beacon(minor: 1)]))
        let scanner = try TestScanner(port: port)
        let changed = Mutex<(updated: Bool, added: BeaconID?, events: [String])>((false, nil, []))
        let task = Task {
            try await BeaconBroadcast.withBeacons(configuration) { beacons in
                try await beacons.update(1, to: beacon(minor: 2))
                let added = try await beacons.add(beacon(minor: 3))
                changed.withLock { ($0.updated, $0.added) = (true, added) }
                for await event in beacons.events {
                    changed.withLock { $0.events.append("\(event)") }
                }
            }
        }
        let heard = try scanner.collect(timeout: .seconds(10)) { reports in
            reports.contains { $0.data == threeBeaconData[1] } && reports.contains { $0.data == threeBeaconData[2] }
        }
        #expect(heard.contains { $0.data == threeBeaconData[1] }, "\(heard.map { HexText.format($0.data) })")
        #expect(heard.contains { $0.data == threeBeaconData[2] }, "\(heard.map { HexText.format($0.data) })")
        #expect(changed.withLock { $0.updated && $0.added == 2 }, "the added beacon is the second: id 2")
        // The start's own report is among the events (the flow's steps come before it).
        let events = changed.withLock { $0.events }
        #expect(events.contains { $0.hasPrefix("advertising(") }, "\(events)")
        let cancelled = ContinuousClock.now
        task.cancel()
        _ = await task.result
        print("off the air \(cancelled.duration(to: .now)) after the task was cancelled")
        #expect(cancelled.duration(to: .now) < .seconds(3))
        // Off the air: a device that starts scanning now hears none of them.
        let after = try TestScanner(port: port).collect(timeout: .milliseconds(800)) { _ in false }
        #expect(!after.contains { threeBeaconData.contains($0.data) }, "\(after.map { HexText.format($0.data) })")
    }

    /// A beacon's own interval through the library: given at the start, changed with an
    /// update; an independent scanner hears the slow beacon a fifth as often, then as often.
    @Test(.notUnderEmulation("report counts over 2.5 s windows are native speed's"))
    func aBeaconsOwnIntervalIsGivenAndChanged() async throws {
        let slow = BeaconParameters(intervalUnits: 800)
        let configuration = BeaconAdvertisement.Configuration(
            device: .tcp(host: "127.0.0.1", port: port),
            options: AdvertisingOptions(beacons: [beacon(minor: 2), beacon(minor: 3)], beaconParameters: [.run, slow]))
        let broadcast = try await BeaconBroadcast.start(configuration)
        let scanner = try TestScanner(port: port)
        func counts() throws -> (fast: Int, slow: Int) {
            let heard = try scanner.collect(timeout: .milliseconds(2500)) { _ in false }
            return (heard.filter { $0.data == threeBeaconData[1] }.count, heard.filter { $0.data == threeBeaconData[2] }.count)
        }
        #expect(broadcast.parameters == [.run, slow])
        let before = try counts()
        try await broadcast.update(2, to: beacon(minor: 3), parameters: .run)
        #expect(broadcast.parameters == [.run, .run])
        _ = try scanner.collect(timeout: .milliseconds(300)) { _ in false }
        let after = try counts()
        try await broadcast.stop()
        print("the library: reports in 2.5 s: \(before.fast) and \(before.slow) (500 ms); after the update \(after.fast) and \(after.slow)")
        #expect(before.fast >= 15 && before.fast >= 3 * before.slow, "\(before)")
        #expect(after.slow >= 15 && 2 * after.slow >= after.fast, "\(after)")
    }

    /// Two broadcasts and a report stream at once are sources of the library's one loop: one
    /// thread for the three; the stream (a third device) hears both broadcasts; each leaves the
    /// loop when it ends.
    @Test func broadcastsAndAReportStreamShareTheLibrarysOneLoop() async throws {
        let device = DeviceSpecification.tcp(host: "127.0.0.1", port: port)
        func configuration(_ minor: UInt16) -> BeaconAdvertisement.Configuration {
            .init(device: device, options: AdvertisingOptions(beacons: [beacon(minor: minor)]))
        }
        let first = try await BeaconBroadcast.start(configuration(1))
        let second = try await BeaconBroadcast.start(configuration(2))
        let listening = Task { () throws -> (heard: Set<[UInt8]>, census: (threads: Int, sessions: Int)?) in
            var heard: Set<[UInt8]> = []
            var census: (threads: Int, sessions: Int)?
            for try await report in AdvertisementScanner.reports(on: device) {
                if census == nil { census = try await LibraryLoop.shared.census() }
                if threeBeaconData.contains(report.data) { heard.insert(report.data) }
                if heard.count == 2 { break }
            }
            return (heard, census)
        }
        let timeout = Task {
            try? await Task.sleep(for: .seconds(10))
            listening.cancel()
        }
        let (heard, during) = try await listening.value
        timeout.cancel()
        try await first.stop()
        try await second.stop()
        let after = try await LibraryLoop.shared.census()
        print("the library's loop: \(during.map { "\($0.sessions) sessions on \($0.threads) thread(s)" } ?? "no report") while on")
        #expect(heard == Set(threeBeaconData[0...1]), "\(heard.map { HexText.format($0) })")
        #expect(during?.threads == 1 && during?.sessions == 3, "\(String(describing: during))")
        #expect(after.threads == 1 && after.sessions == 0, "\(after)")
    }

    /// A change refused is a typed error the program can switch on; the beacons stay as they were.
    @Test func aRefusedChangeIsATypedErrorAndChangesNothing() async throws {
        let configuration = BeaconAdvertisement.Configuration(device: .tcp(host: "127.0.0.1", port: port),
                                                              options: AdvertisingOptions(beacons: [beacon(minor: 1)]))
        let broadcast = try await BeaconBroadcast.start(configuration)
        await #expect(throws: HostError.self) { try await broadcast.remove(1) }  // the last one
        #expect(broadcast.beacons == [beacon(minor: 1)])
        try await broadcast.stop()
        await #expect(throws: HostError.self) { try await broadcast.update(1, to: beacon(minor: 2)) }
    }
}
}
