// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconReports
import Foundation
import Testing

/// What a Swift program gets from the library without the command: captures replayed, text
/// decoded, lines written where it says. Only the public interface is imported (no
/// `@testable`), so these fail if what a program needs is not public.
@Suite struct LibraryReplayTests {
    /// The fixtures the command's tests use (Fixtures/pcap/README.md says how each was made).
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../BeaconEmitterTests/Fixtures").standardized

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    /// The beacon the sniffer fixtures carry (written by text2pcap from the frames in their .txt files).
    static let snifferBeacon = Beacon.iBeacon(IBeacon(
        proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!, major: 101, minor: 2,
        measuredPower: -59))

    /// Every report of a capture, through the simplest interface.
    func replayedReports(_ path: String) throws -> [ReportFeed.Timed] {
        var reports: [ReportFeed.Timed] = []
        try ReportFeed.replay(path: path, handle: { reports.append($0); return true }, tick: { _ in })
        return reports
    }

    /// The beacons of every report of a capture, read by `CaptureReader` with decoding.
    func decodedSightings(_ path: String) throws -> [[BeaconSighting]] {
        let reader = try CaptureReader(path: path, decode: true)
        defer { reader.cancel() }
        var found: [[BeaconSighting]] = []
        while true {
            let batch = reader.next()
            for index in batch.reports.indices { found.append(Array(batch.sightings(index))) }
            if let failure = batch.failure { throw failure }
            if batch.isLast { return found }
        }
    }

    @Test func aSniffersCaptureReplaysItsTwoFrames() throws {
        let reports = try replayedReports(Self.fixture("pcap/sniffer-ll-phdr.pcap"))
        #expect(reports.count == 2)
        for report in reports {
            let sightings = try report.report.sightings()
            #expect(sightings.map(\.beacon) == [Self.snifferBeacon])
            #expect(report.report.address.description == "DA:4C:10:DE:17:01")
        }
        // The sniffer's header carries the signal power: -60 dBm, then -70 dBm.
        #expect(reports.map(\.report.rssi) == [-60, -70])
    }

    /// editcap's pcapng of the btsnoop capture gives the same beacons, report for report.
    @Test func aPcapngConversionDecodesAsTheBtsnoopCapture() throws {
        let btsnoop = try decodedSightings(Self.fixture("rootcanal-scan.btsnoop"))
        let pcapng = try decodedSightings(Self.fixture("pcap/rootcanal-scan.pcapng"))
        #expect(!btsnoop.isEmpty)
        #expect(btsnoop.contains { !$0.isEmpty })
        #expect(pcapng == btsnoop)
    }

    @Test func aCutCaptureEndsWithAnErrorNamingTheFile() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("pcap/sniffer-ll.pcap")))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("library-cut-\(getpid()).pcap")
        try whole.prefix(whole.count - 3).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        // The second record starts after the 24-byte file header and the first record (16
        // bytes of header, then its captured length, little-endian at byte 32).
        let second = 24 + 16 + (0..<4).reduce(0) { $0 | Int(whole[32 + $1]) << (8 * $1) }
        var reports = 0
        #expect {
            try ReportFeed.replay(path: cut.path, handle: { _ in reports += 1; return true }, tick: { _ in })
        } throws: { error in
            "\(error)".hasPrefix("--replay \(cut.path): ") && "\(error)".contains("byte \(second): truncated")
        }
        #expect(reports == 1)
        #expect(throws: ReplayError.self) { try CaptureReader(path: cut.path + ".missing", decode: false) }
    }

    /// Lines and errors written to descriptors the caller chose.
    func written(_ body: (Int32, Int32) throws -> Void) throws -> (output: String, errors: String) {
        let directory = FileManager.default.temporaryDirectory
        let paths = ["out", "err"].map { directory.appendingPathComponent("library-\($0)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path }
        let descriptors = paths.map { open($0, O_CREAT | O_TRUNC | O_WRONLY, 0o600) }
        defer { for path in paths { unlink(path) } }
        try #require(descriptors.allSatisfy { $0 >= 0 })
        try body(descriptors[0], descriptors[1])
        for descriptor in descriptors { close(descriptor) }
        let texts = try paths.map { try String(contentsOfFile: $0, encoding: .utf8) }
        return (texts[0], texts[1])
    }

    @Test func aScanPrinterWritesJSONLinesWhereItIsTold() throws {
        let written = try written { output, _ in
            let printer = ScanPrinter(json: true, table: false, duplicates: true, descriptor: output)
            try printer.replay(path: Self.fixture("pcap/sniffer-ll-phdr.pcap"), filter: .none)
            printer.finish()
        }
        let lines = written.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        for (line, rssi) in zip(lines, [-60, -70]) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["type"] as? String == "ibeacon")
            #expect(object["uuid"] as? String == "39ED98FF-2900-441A-802F-9C398FC199D2")
            #expect(object["major"] as? Int == 101)
            #expect(object["minor"] as? Int == 2)
            #expect(object["rssi"] as? Int == rssi)
        }
    }

    /// A live extended report says which PHYs it came on, in JSON and in text; a legacy one does not.
    @Test func aScanLineSaysAnExtendedReportsPHYs() throws {
        let iBeacon = try HexText.parse("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        let address = try BluetoothAddress(parsing: "11:22:33:44:55:66")
        let coded = ScanReport(address: address, addressType: .randomDevice, rssi: -60, data: iBeacon,
                               kind: [], phys: ReportedPHYs(primary: 3, secondary: 3))
        let legacy = ScanReport(address: address, addressType: .randomDevice, rssi: -60, data: iBeacon, kind: [.legacy])
        for json in [true, false] {
            let written = try written { output, _ in
                let printer = ScanPrinter(json: json, table: false, duplicates: true, descriptor: output)
                for report in [coded, legacy] { printer.handle(TimedReport(elapsed: 0, unixTime: 0, report: report), filter: .none) }
                printer.finish()
            }
            let lines = written.output.split(separator: "\n")
            #expect(lines.count == 2, "\(written.output)")
            let phy = json ? #""primaryPHY":"coded","secondaryPHY":"coded","data":"# : " phy=coded data="
            #expect(lines.first?.contains(phy) == true, "\(written.output)")
            #expect(lines.last?.contains(json ? "PHY" : "phy=") == false, "\(written.output)")
        }
    }

    @Test func aFilterLeavesOutOtherRegions() throws {
        let other = BeaconRegion(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!)
        let written = try written { output, _ in
            let printer = ScanPrinter(json: true, table: false, duplicates: true, descriptor: output)
            try printer.replay(path: Self.fixture("pcap/sniffer-ll-phdr.pcap"), filter: ScanFilter(region: other))
            printer.finish()
        }
        #expect(written.output.isEmpty)
    }

    @Test func lineDecodersWriteBeaconsAndFailuresApart() throws {
        let iBeacon = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"
        var counts = (attempted: 0, failed: 0, found: 0)
        let written = try written { output, errors in
            let decoders = LineDecoders(json: true, output: output, errors: errors)
            decoders.decode(argument: iBeacon, number: 1)
            decoders.decode(argument: "02 01", number: 2)
            decoders.flush()
            counts = (decoders.attempted, decoders.failed, decoders.found)
        }
        #expect(counts == (2, 1, 1))
        #expect(written.output.hasPrefix(#"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59"#))
        #expect(written.output.filter { $0 == "\n" }.count == 1)
        #expect(written.errors.hasPrefix("beacon-emit: argument 2: "), "\(written.errors)")
    }
}
