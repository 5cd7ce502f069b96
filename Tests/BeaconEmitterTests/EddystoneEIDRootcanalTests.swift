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

    @Test(.notUnderEmulation("the periods are seconds long; emulated start-up takes several"))
    func eachIdentifierGoesOutFromANewAddress() throws {
        let identity = try EddystoneEIDIdentity(identityKey: hex(Self.key), rotationExponent: 2)
        // The counter starts at 2: the first period ends 2 s in, then one every 4 s.
        let expected = (0..<8).map { period in
            (start: UInt32(period * 4), eid: identity.ephemeralIdentifier(counter: UInt32(period * 4), aes: BoringAES()))
        }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "15", "--eddystone-eid",
                                                        "--identity-key", Self.key, "--rotation-exponent", "2",
                                                        "--clock", "2", "--verbose"])
        let reports = try scanner.collect(timeout: .seconds(16)) { _ in false }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")

        // Each EID heard, in the order first heard, with the addresses it came from.
        var order: [[UInt8]] = []
        var addresses: [[UInt8]: [BluetoothAddress: Int]] = [:]
        for report in reports {
            guard let data = try? AdvertisingData(parsing: report.data),
                  case let .eddystone(.eid(frame))? = try? Beacon.beacons(in: data).first else { continue }
            if addresses[frame.eid] == nil { order.append(frame.eid) }
            addresses[frame.eid, default: [:]][report.address, default: 0] += 1
            #expect(report.addressType == .randomDevice, "an EID goes out from a random address: \(report.address)")
            #expect(report.address.value >> 46 == 0, "a non-resolvable private address: \(report.address)")
        }
        let periods = order.map { eid in expected.firstIndex { $0.eid == eid } }
        let heard = order.map { HexText.format($0) }, computed = expected.map { HexText.format($0.eid) }
        #expect(periods.allSatisfy { $0 != nil }, "every EID heard is the specification's for some period: \(heard) against \(computed)")
        #expect(order.count >= 3, "a new EID every 4 s over 15 s: heard \(order.map { HexText.format($0) })\n\(emitter.stdout)")
        #expect(periods.compactMap { $0 } == periods.compactMap { $0 }.sorted(), "the EIDs follow the counter: \(periods)")
        #expect(periods.first == 0, "the first EID is the counter's at the start (2): \(periods)")

        // Each EID from an address of its own: the one it was mostly heard from, never another EID's.
        let mainAddress = order.map { eid in addresses[eid]!.max { $0.value < $1.value }!.key }
        #expect(Set(mainAddress).count == mainAddress.count, "each EID has a new address: \(mainAddress)")
        for (eid, heard) in addresses {
            let strays = heard.filter { $0.key != mainAddress[order.firstIndex(of: eid)!] }.values.reduce(0, +)
            #expect(strays <= 1, "\(HexText.format(eid)) was heard from \(heard) (one report at a change at most)")
        }
        #expect(emitter.stderr.contains("eid: beacon 1: EID \(HexText.format(expected[1].eid)) from "), "\(emitter.stderr)")
    }

    /// An EID beacon added over the control socket beside an iBeacon gets a set and an address
    /// of its own, renewed with each identifier (K 1: every 2 s).
    @Test(.notUnderEmulation("the periods are seconds long"))
    func anEIDAddedOverTheControlSocketRotatesItsAddress() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("eid-\(UUID().uuidString).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "8", "--control", socket]
                                                       + referenceArguments)
        defer { _ = emitter.wait() }
        Thread.sleep(forTimeInterval: 1)
        let added = try runBeaconEmit(["control", socket, "add", "type=eddystone-eid,identity-key=\(Self.key),rotation-exponent=1"])
        #expect(added.status == 0, "\(added.stdout) \(added.stderr)")
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .seconds(5)) { _ in false }
        var addresses: [[UInt8]: Set<BluetoothAddress>] = [:]
        var iBeaconHeard = false
        for report in reports {
            guard let data = try? AdvertisingData(parsing: report.data), let beacon = try? Beacon.beacons(in: data).first else { continue }
            if case let .eddystone(.eid(frame)) = beacon { addresses[frame.eid, default: []].insert(report.address) }
            if case .iBeacon = beacon { iBeaconHeard = true }
        }
        #expect(iBeaconHeard, "the iBeacon stays on its own set")
        #expect(addresses.count >= 2, "a new EID every 2 s: \(addresses)")
        let all = addresses.values.flatMap { $0 }
        #expect(Set(all).count >= addresses.count, "each EID from an address of its own: \(addresses)")
        #expect(all.allSatisfy { $0.value >> 46 == 0 }, "non-resolvable addresses: \(all)")
    }
}
}
