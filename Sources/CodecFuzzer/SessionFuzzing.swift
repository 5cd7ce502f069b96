// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import LinuxSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The host's sessions played against a controller whose byte stream is the fuzzer's input:
/// each must end with a `HostError` or carry on, never trap.
enum SessionFuzzing {
    static func controller(_ bytes: [UInt8]) -> HCIController {
        HCIController(transport: StreamFromBytes(bytes), commandTimeout: .milliseconds(1))
    }

    static let beacons = [
        Beacon.iBeacon(IBeacon(proximityUUID: UUID(uuid: (0x39, 0xED, 0x98, 0xFF, 0x29, 0x00, 0x44, 0x1A,
                                                          0x80, 0x2F, 0x9C, 0x39, 0x8F, 0xC1, 0x99, 0xD2)),
                               major: 101, minor: 2)),
    ]

    /// Advertising started on an owned controller, then watched, with live changes (add,
    /// update, remove) between the waits as a control client would make them: each disruption
    /// restored as the supervisor would, then stopped. A failed change must leave the list as
    /// it was.
    static func advertise(_ bytes: [UInt8]) {
        let controller = controller(bytes)
        let emitter = Emitter(controller: controller, ownsController: true) { _ in }
        guard let advertiser = try? emitter.start(options: AdvertisingOptions(beacons: beacons)) else { return }
        let session = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil)
        let live = session.live
        for round in 0..<64 {
            guard let signal = try? session.takeIn() else { break }
            if case .disrupted = signal, (try? session.restore()) == nil { break }
            let before = live.beacons
            let changed: Bool
            switch round % 3 {
            case 0: changed = (try? live.add(beacons[0])) != nil
            case 1: changed = live.ids.first.map { (try? live.update($0, to: beacons[0])) != nil } ?? false
            default: changed = live.ids.last.map { (try? live.remove($0)) != nil } ?? false
            }
            if !changed && live.beacons != before { fatalError("a failed change left the list changed") }
        }
        try? session.stop()
    }

    private static let devNull = FileSystem.openDiscard()

    /// A scan started, its reports ranged and printed (JSON and text), as `scan` does.
    static func scan(_ bytes: [UInt8]) {
        let scanner = AdvertisementScanner(controller: controller(bytes))
        guard (try? scanner.start()) != nil else { return }
        let printers = [true, false].map {
            ScanPrinter(json: $0, table: false, duplicates: true, descriptor: devNull)
        }
        var elapsed = 0.0
        for _ in 0..<256 {
            guard let report = try? scanner.nextReport(timeout: .zero) else { break }
            elapsed += 0.01
            for printer in printers {
                printer.handle(ReportFeed.Timed(elapsed: elapsed, unixTime: 1.7e9 + elapsed, report: report),
                               filter: ScanFilter())
            }
        }
        for printer in printers { printer.finish() }
        scanner.stop()
    }
}

/// The controller's side of an H4 link, from the fuzzer's bytes: every command the host sends
/// is taken; each receive hands over the next packet in the bytes. When they run out, or stop
/// being H4, the link fails as a real one would (closed, or framing lost).
final class StreamFromBytes: PacketTransport {
    let name = "fuzz"
    private var decoder = H4StreamDecoder()

    init(_ bytes: [UInt8]) { decoder.append(bytes) }

    func send(_ packet: H4Packet) throws(TransportError) {}

    func receive(timeout: Duration) throws(TransportError) -> ReceiveResult {
        do {
            guard let packet = try decoder.next() else { throw TransportError.closed(transport: name) }
            return .packet(packet)
        } catch let error as CodecError {
            throw .framing(error)
        } catch {
            throw .closed(transport: name)
        }
    }

    func close() {}
}
