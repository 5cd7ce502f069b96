// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import BeaconTracking
import Foundation
import Testing

extension Rig {
/// An Eddystone-EID beacon on the air, heard by a second device scanning with raw HCI
/// commands: a new identifier every 2^K seconds of the beacon's counter, each the one the
/// specification's computation gives (checked against OpenSSL in
/// `EddystoneEIDComputationTests`), each from a new non-resolvable address.
@Suite struct EddystoneEIDRootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }
    static let key = "000102030405060708090A0B0C0D0E0F"

    /// One busy process per core beside the test, as CI's busiest steps load the machine: the
    /// identity's one step must hold whatever the load (a loaded machine once made the gap
    /// between two steps hold four reports).
    static func busyCores() throws -> [BackgroundProcess] {
        try (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
            try BackgroundProcess("/bin/sh", ["-c", "while :; do :; done"])
        }
    }

    /// The EIDs in `reports` with the addresses each came from, in the order first heard.
    static func identities(in reports: [ScanReport]) -> (order: [[UInt8]], addresses: [[UInt8]: Set<BluetoothAddress>]) {
        var order: [[UInt8]] = []
        var addresses: [[UInt8]: Set<BluetoothAddress>] = [:]
        for report in reports {
            guard let data = try? AdvertisingData(parsing: report.data),
                  case let .eddystone(.eid(frame))? = try? Beacon.beacons(in: data).first else { continue }
            if addresses[frame.eid] == nil { order.append(frame.eid) }
            addresses[frame.eid, default: []].insert(report.address)
        }
        return (order, addresses)
    }

    /// The figure docs/advertising.md gives: how long the air was silent at each change of
    /// identity (the last report of one EID to the first of the next) against the gaps between
    /// reports of one EID, printed (a figure of this machine's, not a bound).
    static func sayGaps(_ timed: [(at: ContinuousClock.Instant, report: ScanReport)]) {
        var changes: [Double] = [], steady: [Double] = []
        var last: (at: ContinuousClock.Instant, eid: [UInt8])?
        for (at, report) in timed {
            guard let data = try? AdvertisingData(parsing: report.data),
                  case let .eddystone(.eid(frame))? = try? Beacon.beacons(in: data).first else { continue }
            if let last {
                let gap = Double(last.at.duration(to: at).components.attoseconds) / 1e15 + Double(last.at.duration(to: at).components.seconds) * 1000
                if last.eid == frame.eid { steady.append(gap) } else { changes.append(gap) }
            }
            last = (at, frame.eid)
        }
        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        print("EID change gap: median \(Int(median(changes))) ms, most \(Int(changes.max() ?? 0)) ms over \(changes.count) changes; "
              + "between reports of one EID: median \(Int(median(steady))) ms")
    }

    /// Nothing heard links two identities: every EID from exactly one address, every address
    /// carrying exactly one EID.
    static func expectUnlinked(_ addresses: [[UInt8]: Set<BluetoothAddress>], _ context: @autoclosure () -> String) {
        for (eid, from) in addresses {
            #expect(from.count == 1, "EID \(HexText.format(eid)) heard from \(from.count) addresses \(from): \(context())")
        }
        var carried: [BluetoothAddress: [[UInt8]]] = [:]
        for (eid, from) in addresses { for address in from { carried[address, default: []].append(eid) } }
        for (address, eids) in carried {
            #expect(eids.count == 1, "\(address) carried \(eids.count) EIDs \(eids.map { HexText.format($0) }): \(context())")
        }
    }

    /// A new identifier every second (K 0) for 40 s, while a busy process holds each core.
    @Test(.notUnderEmulation("the periods are seconds long; emulated start-up takes several"))
    func eachIdentifierGoesOutFromANewAddress() throws {
        let identity = try EddystoneEIDIdentity(identityKey: hex(Self.key), rotationExponent: 0)
        let expected = (0..<80).map { identity.ephemeralIdentifier(counter: UInt32($0), aes: BoringAES()) }
        let hogs = try Self.busyCores()
        defer { for hog in hogs { hog.signal(SIGKILL); _ = hog.wait() } }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "40", "--eddystone-eid",
                                                        "--identity-key", Self.key, "--rotation-exponent", "0",
                                                        "--clock", "2", "--verbose"])
        // Each report with when it came, for the gap a change costs.
        var timed: [(at: ContinuousClock.Instant, report: ScanReport)] = []
        let deadline = ContinuousClock.now + .seconds(42)
        while ContinuousClock.now < deadline {
            if let report = try scanner.scanner.nextReport(timeout: ContinuousClock.now.duration(to: deadline)) {
                timed.append((.now, report))
            }
        }
        let reports = timed.map(\.report)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        Self.sayGaps(timed)

        let (order, addresses) = Self.identities(in: reports)
        for report in reports where addresses.values.contains(where: { $0.contains(report.address) }) {
            #expect(report.addressType == .randomDevice, "an EID goes out from a random address: \(report.address)")
            #expect(report.address.value >> 46 == 0, "a non-resolvable private address: \(report.address)")
        }
        let counters = order.map { eid in expected.firstIndex(of: eid) }
        let heard = order.map { HexText.format($0) }
        #expect(counters.allSatisfy { $0 != nil }, "every EID heard is the specification's for some counter: \(heard)")
        #expect(order.count >= 20, "a new EID every second over 40 s: heard \(order.count)\n\(emitter.stdout)")
        #expect(counters.compactMap { $0 } == counters.compactMap { $0 }.sorted(), "the EIDs follow the counter: \(counters)")
        #expect(counters.first == 2, "the first EID is the counter's at the start (2): \(counters)")
        Self.expectUnlinked(addresses, emitter.stderr.suffix(3000).description)
        #expect(emitter.stderr.contains("eid: beacon 1: EID \(HexText.format(expected[3])) from "), "\(emitter.stderr)")
    }

    /// Three EID beacons on two sets (rootcanal has 16: fourteen iBeacons take the others):
    /// the first on a set of its own, the other two taking turns on the last, each turn put on
    /// the set with its beacon's own address, renewed with each identifier (K 0) in one step,
    /// under load: no address carries two identifiers, of one beacon or of two.
    @Test(.notUnderEmulation("the periods are seconds long"))
    func threeEIDBeaconsTakingTurnsOnTwoSetsKeepTheirIdentitiesApart() throws {
        let hogs = try Self.busyCores()
        defer { for hog in hogs { hog.signal(SIGKILL); _ = hog.wait() } }
        let keys = ["000102030405060708090A0B0C0D0E0F", "101112131415161718191A1B1C1D1E1F", "202122232425262728292A2B2C2D2E2F"]
        let iBeacons = (1...14).flatMap { ["--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=12,minor=\($0)"] }
        let eids = keys.flatMap { ["--beacon", "type=eddystone-eid,identity-key=\($0),rotation-exponent=0"] }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "15", "--rotation", "250", "--verbose"]
                                                       + iBeacons + eids)
        let reports = try scanner.collect(timeout: .seconds(17)) { _ in false }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("beacons 16-17 taking turns on set 15"), "\(emitter.stdout)")
        let (_, addresses) = Self.identities(in: reports)
        // Whose each EID is: the beacon whose key gives it for some counter.
        let identities = try keys.map { try EddystoneEIDIdentity(identityKey: hex($0), rotationExponent: 0) }
        let owners = addresses.keys.map { eid in
            identities.firstIndex { identity in (0..<40).contains { identity.ephemeralIdentifier(counter: UInt32($0), aes: BoringAES()) == eid } }
        }
        #expect(owners.allSatisfy { $0 != nil }, "every EID heard is one of the three beacons': \(owners)")
        #expect(Set(owners.compactMap { $0 }) == [0, 1, 2], "all three heard: \(owners)")
        #expect(addresses.count >= 3 * 8, "a new EID every second for each of three over 15 s: \(addresses.count)")
        Self.expectUnlinked(addresses, emitter.stderr.suffix(3000).description)
    }

    /// An EID beacon added over the control socket beside an iBeacon gets a set and an address
    /// of its own, renewed with each identifier in the same step (K 0: every second), under load.
    @Test(.notUnderEmulation("the periods are seconds long"))
    func anEIDAddedOverTheControlSocketRotatesItsAddress() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("eid-\(UUID().uuidString).sock").path
        let hogs = try Self.busyCores()
        defer { for hog in hogs { hog.signal(SIGKILL); _ = hog.wait() } }
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "60", "--control", socket]
                                                       + referenceArguments)
        defer {
            emitter.signal(SIGTERM)
            _ = emitter.wait()
        }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let added = try runBeaconEmit(["control", socket, "add", "type=eddystone-eid,identity-key=\(Self.key),rotation-exponent=0"])
        #expect(added.status == 0, "\(added.stdout) \(added.stderr)")
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .seconds(12)) { _ in false }
        var iBeaconHeard = false
        for report in reports {
            guard let data = try? AdvertisingData(parsing: report.data), let beacon = try? Beacon.beacons(in: data).first else { continue }
            if case .iBeacon = beacon { iBeaconHeard = true }
        }
        let (_, addresses) = Self.identities(in: reports)
        #expect(iBeaconHeard, "the iBeacon stays on its own set")
        #expect(addresses.count >= 6, "a new EID every second: \(addresses.count)")
        #expect(addresses.values.flatMap { $0 }.allSatisfy { $0.value >> 46 == 0 }, "non-resolvable addresses: \(addresses)")
        Self.expectUnlinked(addresses, emitter.stderr.suffix(3000).description)
    }
}
}
