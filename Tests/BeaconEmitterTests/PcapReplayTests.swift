// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `scan --replay` of pcap and pcapng captures made by Wireshark's own tools
/// (Fixtures/pcap/README.md): the same beacons as the btsnoop capture they came from.
@Suite struct PcapReplayTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/pcap")

    func path(_ name: String) -> String { Self.folder.appendingPathComponent(name).path }

    /// Each JSON line without its timestamp (text2pcap writes times of its own).
    func beacons(_ lines: [String]) -> [String] {
        lines.map { $0.replacingOccurrences(of: #","timestamp":"[^"]*""#, with: "", options: .regularExpression) }
    }

    /// editcap's conversions keep the timestamps: the replay is the btsnoop one, byte for byte.
    @Test(arguments: ["rootcanal-scan.pcap", "rootcanal-scan.pcapng"])
    func editcapsConversionsReplayAsTheBtsnoopCapture(file: String) throws {
        let btsnoop = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--duplicates"])
        let converted = try runBeaconEmit(["scan", "--replay", path(file), "--json", "--duplicates"])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stdout == btsnoop.stdout)
        #expect(converted.stdoutLines.count == (try reportEventsInCapture()))
    }

    @Test func plainH4GivesTheSameBeacons() throws {
        let btsnoop = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--duplicates"])
        let h4 = try runBeaconEmit(["scan", "--replay", path("rootcanal-scan-h4.pcap"), "--json", "--duplicates"])
        #expect(h4.status == 0, "\(h4.stderr)")
        #expect(beacons(h4.stdoutLines) == beacons(btsnoop.stdoutLines))
    }

    /// An air sniffer's link-layer frames: a legacy PDU and an extended one carrying the same data.
    @Test func snifferFramesCarryTheAdvertisingData() throws {
        let expected = #"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59,"address":"DA:4C:10:DE:17:01","addressType":"random","#
        let plain = try runBeaconEmit(["scan", "--replay", path("sniffer-ll.pcap"), "--json", "--duplicates"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdoutLines.count == 2)
        #expect(plain.stdoutLines.allSatisfy { $0.hasPrefix(expected + #""rssi":null,"#) }, "\(plain.stdout)")
        // With the sniffer's header, its signal power is the RSSI.
        let header = try runBeaconEmit(["scan", "--replay", path("sniffer-ll-phdr.pcap"), "--json", "--duplicates"])
        #expect(header.status == 0, "\(header.stderr)")
        #expect(header.stdoutLines.count == 2)
        #expect(header.stdoutLines.first?.hasPrefix(expected + #""rssi":-60,"#) == true, "\(header.stdout)")
        #expect(header.stdoutLines.last?.hasPrefix(expected + #""rssi":-70,"#) == true, "\(header.stdout)")
    }

    /// A PDU whose CRC failed is no advertiser: `scan`, `decode`, `audit` and `monitor` leave it
    /// out and say how many; `--include-bad-crc` keeps it. The capture's second PDU is its first
    /// with one bit of the address flipped (DA:4C:... read as DA:0C:...), as a bit error does.
    @Test func aDamagedPDUIsNoAdvertiser() throws {
        let file = path("sniffer-ll-bad-crc.pcap")
        let notice = "\(file): 1 PDU with a bad CRC left out (damaged on the air: --include-bad-crc keeps them)"
        let scan = try runBeaconEmit(["scan", "--replay", file, "--json", "--duplicates"])
        #expect(scan.status == 0 && scan.stdoutLines.count == 1 && scan.stdout.contains(#""address":"DA:4C:10:DE:17:01""#),
                "\(scan.stdout) \(scan.stderr)")
        #expect(scan.stderr.contains(notice), "\(scan.stderr)")
        let kept = try runBeaconEmit(["scan", "--replay", file, "--json", "--duplicates", "--include-bad-crc"])
        #expect(kept.stdoutLines.count == 2 && kept.stdout.contains(#""address":"DA:0C:10:DE:17:01""#), "\(kept.stdout)")
        #expect(!kept.stderr.contains("bad CRC"), "\(kept.stderr)")
        for arguments in [["decode", file], ["audit", "--replay", file, "--allow-inconclusive"],
                          ["monitor", "--replay", file, "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2"]] {
            let result = try runBeaconEmit(arguments)
            #expect(result.stderr.contains(notice), "\(arguments): \(result.status) \(result.stderr)")
            #expect(!result.stdout.contains("DA:0C:10:DE:17:01"), "\(arguments): \(result.stdout)")
        }
    }

    /// Where the last record (pcap) or block (pcapng) of a fixture starts, walked from the layout.
    func lastRecordOffset(_ file: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(file))))
        func le32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        var offset = file.hasSuffix(".pcapng") ? 0 : 24
        var last = offset
        while offset < bytes.count {
            last = offset
            offset += file.hasSuffix(".pcapng") ? le32(offset + 4) : 16 + le32(offset + 8)
        }
        return last
    }

    /// `decode FILE`: a capture's beacons, the same as decoding what hcidump printed of it.
    @Test(arguments: ["../rootcanal-scan.btsnoop", "rootcanal-scan.pcap", "rootcanal-scan.pcapng", "rootcanal-scan-h4.pcap"])
    func decodeReadsACaptureFile(file: String) throws {
        let hcidump = try String(contentsOf: DecodeSpellingTests.folder.appendingPathComponent("hcidump-R.txt"), encoding: .utf8)
        let fromText = try runBeaconEmit(["decode", "--json"], input: hcidump)
        let fromFile = try runBeaconEmit(["decode", "--json", path(file)])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == fromText.stdout)
        #expect(fromFile.stdoutLines.count == (try reportEventsInCapture()))
    }

    @Test func decodeReadsATextFileAndReportsACutCapture() throws {
        let text = try runBeaconEmit(["decode", "--json", DecodeSpellingTests.folder.appendingPathComponent("xxd.txt").path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutLines == [DecodeSpellingTests.reference])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path("rootcanal-scan.pcapng")))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID()).pcapng")
        try bytes.prefix(2000).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        let result = try runBeaconEmit(["decode", "--json", cut.path])
        #expect(result.status == 65)
        #expect(!result.stdoutLines.isEmpty)
        #expect(result.stderr.contains("\(cut.path): pcapng capture: byte "), "\(result.stderr)")
    }

    /// The format comes from the file's first bytes, whatever its name.
    @Test func theFormatComesFromTheMagic() throws {
        let renamed = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID()).btsnoop")
        try FileManager.default.copyItem(atPath: path("rootcanal-scan.pcapng"), toPath: renamed.path)
        defer { try? FileManager.default.removeItem(at: renamed) }
        let result = try runBeaconEmit(["scan", "--replay", renamed.path, "--json", "--duplicates"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == (try reportEventsInCapture()))

        let text = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID()).pcap")
        try Data("not a capture at all".utf8).write(to: text)
        defer { try? FileManager.default.removeItem(at: text) }
        let wrong = try runBeaconEmit(["scan", "--replay", text.path])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("not a btsnoop, pcap or pcapng capture (it does not start as one does)") && !wrong.stderr.contains("6E 6F 74"), "\(wrong.stderr)")
    }

    /// A capture cut short: the beacons before the cut, then an error naming the byte offset of
    /// the record that was cut, exit 65.
    @Test(arguments: ["rootcanal-scan.pcap", "rootcanal-scan.pcapng", "rootcanal-scan-h4.pcap"])
    func aTruncatedCaptureGivesWhatCameBeforeTheCut(file: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path(file)))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID())-\(file)")
        try bytes.prefix(bytes.count - 5).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        let whole = try runBeaconEmit(["scan", "--replay", path(file), "--json", "--duplicates"])
        let result = try runBeaconEmit(["scan", "--replay", cut.path, "--json", "--duplicates"])
        #expect(result.status == 65)
        #expect(whole.stdoutLines.starts(with: result.stdoutLines) && result.stdoutLines.count >= whole.stdoutLines.count - 1,
                "the reports before the cut")
        #expect(!result.stdoutLines.isEmpty)
        // The last record starts where the file's records before it end.
        #expect(result.stderr.contains("capture: byte \(try lastRecordOffset(file)): truncated"), "\(result.stderr)")
    }
}
