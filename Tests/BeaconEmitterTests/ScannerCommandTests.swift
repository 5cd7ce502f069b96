// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// The capture made by scripts/make-capture: rootcanal, an iBeacon and an Eddystone-URL
/// advertising, beacon-emit scanning through a recording bridge.
let capturePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/rootcanal-scan.btsnoop").path

/// Advertising report events in the capture, counted straight from the btsnoop layout.
func reportEventsInCapture() throws -> Int {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath)))
    var offset = 16, reports = 0
    while offset + 24 <= bytes.count {
        let length = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8
            | Int(bytes[offset + 7])
        let data = bytes[(offset + 24)..<(offset + 24 + length)]
        // 04 3E ll 02 nn: an H4 LE Meta event, Advertising Report subevent, nn reports.
        if data.count > 4, data[data.startIndex] == 0x04, data[data.startIndex + 1] == 0x3E,
           data[data.startIndex + 3] == 0x02 {
            reports += Int(data[data.startIndex + 4])
        }
        offset += 24 + length
    }
    return reports
}

@Suite struct ReplayTests {
    @Test func replayShowsEachBeaconOnceWithRangingKeys() throws {
        let result = try runBeaconEmit(["scan", "--replay", capturePath, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix(#"{"type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2,"measuredPower":-59,"address":"DA:4C:10:DE:17:00","addressType":"public","rssi":"#) })
        #expect(lines.contains { $0.hasPrefix(#"{"type":"eddystone-url","url":"https://www.example.com/x","#) })
        #expect(lines.contains { $0.contains(#""data":"0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5""#) })
        for line in lines {
            #expect(line.contains(#""proximity":"#))
            #expect(line.contains(#""accuracy":"#))
            #expect(line.contains(#""timestamp":"2026-"#) || line.contains(#""timestamp":"20"#))
        }
    }

    @Test func duplicatesShowEveryReport() throws {
        let result = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--duplicates"])
        #expect(result.stdoutLines.count == (try reportEventsInCapture()))
        #expect(try reportEventsInCapture() > 10)
    }

    @Test func filtersApply() throws {
        let region = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--uuid", "39ED98FF2900441A802F9C398FC199D2"])
        #expect(region.stdoutLines.count == 1)
        #expect(region.stdoutLines.first?.contains(#""type":"ibeacon""#) == true)
        let eddystone = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--format", "eddystone"])
        #expect(eddystone.stdoutLines.count == 1)
        #expect(eddystone.stdoutLines.first?.contains(#""type":"eddystone-url""#) == true)
        let strong = try runBeaconEmit(["scan", "--replay", capturePath, "--json", "--min-rssi", "0"])
        #expect(strong.stdoutLines.isEmpty)
    }

    @Test func monitorReplayReportsInside() throws {
        let result = try runBeaconEmit(["monitor", "--replay", capturePath, "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2",
                                        "--major", "101", "--json"])
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 1)
        #expect(result.stdoutLines.first?.hasPrefix(#"{"event":"state","state":"inside","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"timestamp":"#) == true)
    }

    /// A capture written here: H4 datalink, each record one LE Advertising Report event.
    func writeCapture(_ events: [[UInt8]]) throws -> String {
        func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        var bytes = Array("btsnoop".utf8) + [0] + be32(1) + be32(1002)
        for (index, event) in events.enumerated() {
            let packet = [0x04] + event
            // Timestamps: 2026-01-01 (microseconds since year 0), a millisecond apart.
            let time = UInt64(0x00DC_DDB3_0F2F_8000) + 1_767_225_600_000_000 + UInt64(index) * 1000
            bytes += be32(UInt32(packet.count)) + be32(UInt32(packet.count)) + be32(1) + be32(0)
                + be32(UInt32(time >> 32)) + be32(UInt32(time & 0xFFFF_FFFF)) + packet
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).btsnoop").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An LE Advertising Report event of the given reports (address, data, RSSI -60 each).
    func reportEvent(_ reports: [(address: UInt8, data: [UInt8])], declaredCount: Int? = nil) -> [UInt8] {
        var parameters: [UInt8] = [0x02, UInt8(declaredCount ?? reports.count)]
        for report in reports {
            parameters += [0x00, 0x00, report.address, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(report.data.count)]
            parameters += report.data + [0xC4]
        }
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    /// Reports read straight from the capture's buffer still report errors at offsets within
    /// their data, and an event that does not parse is skipped whole.
    @Test func replayReportsErrorsWithinTheData() throws {
        let iBeacon = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        let cutShort = Array(iBeacon.prefix(12))
        let path = try writeCapture([
            reportEvent([(0x01, iBeacon)]),
            reportEvent([(0x02, cutShort)]),
            reportEvent([(0x03, iBeacon)], declaredCount: 2),  // says two reports, holds one: skipped
            reportEvent([(0x04, iBeacon), (0x05, cutShort)]),
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path, "--json", "--duplicates"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines
        #expect(lines.count == 4)
        #expect(lines.map { $0.contains(#""type":"unknown""#) } == [false, true, false, true])
        for line in [lines[1], lines[3]] {
            #expect(line.contains(#""data":"0201061AFF4C00021539ED98""#))
            #expect(line.contains(#""error":"advertising data: byte 5: truncated: Manufacturer Specific Data (length 26 at byte 3) needs 25 bytes, only 7 left""#))
        }
        #expect(lines[0].contains(#""address":"66:55:44:33:22:01""#))
        #expect(lines[2].contains(#""address":"66:55:44:33:22:04""#))
        #expect(lines[2].contains(#""timestamp":"2026-01-01T00:00:00.003Z""#))
    }

    /// `--address` (repeatable) keeps the reports of those advertisers only, beacon or not,
    /// in `scan` and `monitor`; a malformed address is refused.
    @Test func addressFilterKeepsThoseAdvertisers() throws {
        let iBeacon = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        let other = hex("020106")
        let path = try writeCapture([
            reportEvent([(0x01, iBeacon), (0x02, iBeacon)]),
            reportEvent([(0x02, other), (0x03, other)]),
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        func addresses(_ arguments: [String]) throws -> [String] {
            let result = try runBeaconEmit(["scan", "--replay", path, "--json", "--duplicates"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdoutLines.compactMap { $0.firstMatch(of: /"address":"([0-9A-F:]+)"/).map { String($0.1) } }
        }
        #expect(try addresses([]) == ["66:55:44:33:22:01", "66:55:44:33:22:02", "66:55:44:33:22:02", "66:55:44:33:22:03"])
        #expect(try addresses(["--address", "66:55:44:33:22:02"]) == ["66:55:44:33:22:02", "66:55:44:33:22:02"])
        #expect(try addresses(["--address", "66:55:44:33:22:03", "--address", "66:55:44:33:22:01"])
                == ["66:55:44:33:22:01", "66:55:44:33:22:03"])
        #expect(try addresses(["--address", "66:55:44:33:22:02", "--format", "ibeacon"]) == ["66:55:44:33:22:02"])
        let region = ["--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2"]
        let inside = try runBeaconEmit(["monitor", "--replay", path, "--json", "--address", "66:55:44:33:22:01"] + region)
        #expect(inside.stdoutLines.count == 1 && inside.stdout.contains(#""state":"inside""#), "\(inside.stdout)")
        let never = try runBeaconEmit(["monitor", "--replay", path, "--json", "--address", "66:55:44:33:22:03"] + region)
        #expect(never.status == 0 && never.stdoutLines.isEmpty, "\(never.stdout)")
        let bad = try runBeaconEmit(["scan", "--replay", path, "--address", "66:55:44:33:22"])
        #expect(bad.status == 64 && bad.stderr.contains("--address"), "\(bad.stderr)")
    }

    @Test func notACaptureIsAClearError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-\(UUID().uuidString).btsnoop").path
        try Data("hello, this is not btsnoop".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["scan", "--replay", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("not a btsnoop, pcap or pcapng capture (it does not start as one does)") && !result.stderr.contains("68 65 6C"),
                "\(result.stderr)")
    }

    /// A path that cannot be read as a capture (a directory) is a clear error, for scan and
    /// monitor alike, not a crash: exit 74, as for a file that is not there.
    @Test func anUnreadablePathIsAClearError() throws {
        let directory = FileManager.default.temporaryDirectory.path
        for command in [["scan"], ["monitor", "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2"]] {
            let result = try runBeaconEmit(command + ["--replay", directory])
            #expect(result.status == 74, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("--replay \(directory): cannot read the file: "), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrace"), "\(result.stderr)")
        }
        // A FIFO nobody writes to, and a device: refused at once, never waited on or read forever.
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        for path in [fifo, "/dev/zero"] {
            let result = try runBeaconEmit(["-c", "exec timeout -k 1 10 \"$0\" scan --replay \"$1\"", try beaconEmitPath(), path],
                                           executable: "/bin/sh")
            #expect(result.status == 74 && result.stderr.contains("--replay \(path): cannot read the file: it is a FIFO, a pipe "
                                                                  + "or a device, not a regular file"), "\(result.status) \(result.stderr)")
        }
    }

    @Test func regionNeedsItsParts() throws {
        #expect(try runBeaconEmit(["scan", "--replay", capturePath, "--major", "1"]).stderr.contains("--major needs --uuid"))
        #expect(try runBeaconEmit(["monitor", "--replay", capturePath]).status == 64)
    }
}

extension Rig {
@Suite struct ScanVerifyMonitorRootcanalTests {
    var device: String { "tcp:127.0.0.1:\(rigPort ?? 0)" }

    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"), arguments: [
        (["--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "101", "--minor", "2"], #""type":"ibeacon","uuid":"39ED98FF-2900-441A-802F-9C398FC199D2","major":101,"minor":2"#),
        (["--altbeacon", "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "7", "--minor", "8"], #""type":"altbeacon","companyId":280,"id1":"39ED98FF-2900-441A-802F-9C398FC199D2","id2":7,"id3":8"#),
        (["--eddystone-uid", "--namespace", "00112233445566778899", "--instance", "AABBCCDDEEFF"], #""type":"eddystone-uid","namespace":"00112233445566778899","instance":"AABBCCDDEEFF""#),
        (["--eddystone-url", "https://www.example.com/x"], #""type":"eddystone-url","url":"https://www.example.com/x""#),
        (["--eddystone-tlm", "--battery", "3000", "--temperature", "21.5"], #""type":"eddystone-tlm","version":0,"batteryMillivolts":3000,"temperature":21.5"#),
    ])
    func scanSeesEachFormat(beacon: [String], expected: String) throws {
        let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duration", "2"])
        Thread.sleep(forTimeInterval: 0.3)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "1.2"] + beacon)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(scan.wait() == 0, "\(scan.stderr)")
        let line = scan.stdout.split(separator: "\n").first { $0.contains(expected) }
        #expect(line != nil, "\(scan.stdout)")
        #expect(line?.contains(#""address":"DA:4C:10:DE:17:"#) == true)
        #expect(line?.contains(#""proximity":"#) == true)
    }

    /// `--phy coded` on the virtual radio, which models the PHYs: the exact data arrives at a
    /// scan of the Coded PHY, and a scan of LE 1M alone (extended commands) hears nothing of it.
    @Test func codedPHYAdvertisingIsHeardOnlyByACodedScan() throws {
        let reference = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"
        for (scanPHY, heard) in [(["--phy", "coded"], true), (["--extended"], false)] {
            let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duration", "2.5"] + scanPHY)
            Thread.sleep(forTimeInterval: 0.4)
            let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--phy", "coded", "--duration", "1.5", "-v"]
                                                           + referenceArguments)
            #expect(emitter.wait() == 0, "\(emitter.stderr)")
            #expect(scan.wait() == 0, "\(scan.stderr)")
            #expect(scan.stdout.contains(#""data":"\#(reference)""#) == heard, "\(scanPHY): \(scan.stdout)")
            if heard {
                let line = scan.stdout.split(separator: "\n").first { $0.contains(#""data":"\#(reference)""#) } ?? ""
                #expect(line.contains(#""primaryPHY":"coded","secondaryPHY":"coded""#), "\(line)")
            }
            #expect(emitter.stderr.contains("LE Coded PHY"), "\(emitter.stderr)")
        }
        let legacy = try runBeaconEmit(["-i", device, "--phy", "coded", "--legacy", "--duration", "0.2"] + referenceArguments)
        #expect(legacy.status == 64 && legacy.stderr.contains("--phy coded sends extended advertising"), "\(legacy.stderr)")
        let scan = try runBeaconEmit(["scan", "-i", device, "--phy", "coded", "--legacy", "--duration", "0.2"])
        #expect(scan.status == 64 && scan.stderr.contains("--phy coded scans with the extended commands"), "\(scan.stderr)")
    }

    /// A rig's mix (`--beacon ...,phy=coded` beside a legacy beacon): the legacy beacon is
    /// heard on LE 1M by any scan, the long-range one on the Coded PHY by a scan of it only.
    @Test func aLegacyBeaconAndALongRangeOneAdvertiseSideBySide() throws {
        let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"
        let legacy = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650001C5"
        let longRange = "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"
        for (scanPHY, hearsLongRange) in [(["--phy", "coded"], true), (["--extended"], false)] {
            let scan = try BackgroundProcess.beaconEmit(["scan", "-i", device, "--json", "--duration", "2.5"] + scanPHY)
            Thread.sleep(forTimeInterval: 0.4)
            let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "1.5",
                                                            "--beacon", "uuid=\(uuid),major=101,minor=1",
                                                            "--beacon", "uuid=\(uuid),major=101,minor=2,phy=coded"])
            #expect(emitter.wait() == 0, "\(emitter.stderr)")
            #expect(scan.wait() == 0, "\(scan.stderr)")
            let lines = scan.stdout.split(separator: "\n")
            let heardLegacy = lines.first { $0.contains(#""data":"\#(legacy)""#) }
            #expect(heardLegacy != nil, "\(scanPHY): \(scan.stdout)")
            let heardLongRange = lines.first { $0.contains(#""data":"\#(longRange)""#) }
            #expect((heardLongRange != nil) == hearsLongRange, "\(scanPHY): \(scan.stdout)")
            if let heardLongRange { #expect(heardLongRange.contains(#""primaryPHY":"coded","secondaryPHY":"coded""#)) }
        }
    }

    /// Found by its identifiers (the default), and byte for byte with --exact.
    @Test func verifySucceedsWithLatency() throws {
        let result = try runBeaconEmit(["verify", "--device", device, "--scanner", device] + referenceArguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("verified: ibeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2 "
                                        + "arrived from DA:4C:10:DE:17:"), "\(result.stdout)")
        #expect(result.stdout.contains("ms after advertising was enabled; its advertising data as described"), "\(result.stdout)")
        let exact = try runBeaconEmit(["verify", "--device", device, "--scanner", device, "--exact"] + referenceArguments)
        #expect(exact.status == 0, "\(exact.stderr)")
        #expect(exact.stdout.hasPrefix("verified: 30 bytes arrived intact from DA:4C:10:DE:17:"), "\(exact.stdout)")
    }

    @Test func verifyOfAWrongUUIDFailsShowingTheClosestMismatch() throws {
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "3"] + referenceArguments)
        #expect(emitter.waitForOutput("advertising on"))
        let result = try runBeaconEmit(["verify", "--scanner", device, "--uuid", "11111111-2900-441A-802F-9C398FC199D2",
                                        "--major", "101", "--minor", "2", "--timeout", "1"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("verify failed: no ibeacon uuid=11111111-2900-441A-802F-9C398FC199D2 major=101 minor=2 "
                                       + "arrived; the closest of"), "\(result.stdout)")
        #expect(result.stdout.contains("(iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2"))
        #expect(result.stdout.contains("first difference at byte 9: expected 0x11, saw 0x39"))
        emitter.wait()
    }

    /// `verify --address`: reports from other advertisers do not count (nothing arrived); the
    /// emitter's own address passes.
    @Test func verifyCountsOnlyTheAddressGiven() throws {
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "4"] + referenceArguments)
        #expect(emitter.waitForOutput("advertising on"))
        let any = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "2"] + referenceArguments)
        let from = any.stdout.firstMatch(of: /arrived from ([0-9A-F:]{17})/).map { String($0.1) }
        #expect(any.status == 0 && from != nil, "\(any.stdout)")
        let elsewhere = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "0.5", "--address", "00:11:22:33:44:55"]
                                          + referenceArguments)
        #expect(elsewhere.status == 1)
        #expect(elsewhere.stdout.hasPrefix("verify failed: no ibeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 "
                                           + "minor=2 arrived within the timeout"), "\(elsewhere.stdout)")
        let own = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "2", "--address", from ?? "?"]
                                    + referenceArguments)
        #expect(own.status == 0, "\(own.stdout) \(own.stderr)")
        emitter.wait()
    }

    @Test func verifyWithNothingOnTheAirSaysSo() throws {
        let result = try runBeaconEmit(["verify", "--scanner", device, "--timeout", "0.5"] + referenceArguments)
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("verify failed: no ibeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2 "
                                        + "arrived within the timeout"), "\(result.stdout)")
    }

    @Test func monitorEntersWhenTheEmitterStartsAndExitsAfterItStops() throws {
        let monitor = try BackgroundProcess.beaconEmit(["monitor", "-i", device, "--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2",
                                                        "--exit-after", "1", "--duration", "6", "--json"])
        #expect(monitor.waitForOutput(#""state":"outside""#, timeout: .seconds(4)))
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "1"] + referenceArguments)
        #expect(monitor.waitForOutput(#"{"event":"enter""#, timeout: .seconds(3)))
        #expect(emitter.wait() == 0)
        let stopped = ContinuousClock.now
        #expect(monitor.waitForOutput(#"{"event":"exit""#, timeout: .seconds(4)))
        let exitTook = stopped.duration(to: .now)
        #expect(exitTook >= .milliseconds(700) && exitTook < .seconds(3), "exit after \(exitTook)")
        #expect(monitor.wait() == 0)
        let events = monitor.stdout.split(separator: "\n").map { $0.split(separator: ",").first.map(String.init) ?? "" }
        #expect(events == [#"{"event":"state""#, #"{"event":"enter""#, #"{"event":"exit""#])
    }
}
}
