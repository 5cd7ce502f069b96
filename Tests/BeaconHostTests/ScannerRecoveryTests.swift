// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// A controller that answers every command with success, and delivers events pushed to it
/// (reports, a hardware error, a Reset's completion nobody asked for) in order.
final class AnsweringController: PacketTransport {
    let name = "answering"
    private(set) var sent: [HCIOpcode] = []
    var events: [[UInt8]] = []
    /// Events that arrive only after this many commands have been sent.
    var later: [(afterCommands: Int, event: [UInt8])] = []

    func send(_ packet: H4Packet) throws(TransportError) {
        let opcode = HCIOpcode(UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8)
        sent.append(opcode)
        // Supported commands with LE extended scanning unset; other reads all zeros.
        events.append(complete(opcode.rawValue, returning: [UInt8](repeating: 0, count: 64)))
    }

    func receive(timeout: Duration) throws(TransportError) -> ReceiveResult {
        while let first = later.first, sent.count >= first.afterCommands {
            events.append(first.event)
            later.removeFirst()
        }
        return events.isEmpty ? .timedOut : .packet(H4Packet(type: .event, body: events.removeFirst()))
    }

    func close() {}
}

@Suite struct ScannerRecoveryTests {
    static let report = hex("3E 0C 02 01 03 00 01 02 03 04 05 06 00 C4   // one report, no data, RSSI -60")
    /// Reset, Set Event Mask, LE Set Event Mask, scan off, parameters, on.
    static let ownedStart: [HCIOpcode] = [.reset, .setEventMask, .leSetEventMask, .leSetScanEnable,
                                          .leSetScanParameters, .leSetScanEnable]

    func reports(from scanner: AdvertisementScanner, within: Duration) throws -> Int {
        var count = 0
        let end = ContinuousClock.now + within
        while ContinuousClock.now < end {
            if try scanner.nextReport(timeout: .milliseconds(20)) != nil { count += 1 }
        }
        return count
    }

    @Test func hardwareErrorResetsAndScansAgain() throws {
        let transport = AnsweringController()
        let scanner = AdvertisementScanner(controller: HCIController(transport: transport))
        var lines: [String] = []
        scanner.log = { lines.append($0) }
        try scanner.start()
        transport.events += [Self.report, hex("10 01 07  // Hardware Error 0x07"), Self.report]
        transport.later = [(afterCommands: 12, event: Self.report)]
        #expect(try reports(from: scanner, within: .milliseconds(400)) == 3)
        #expect(transport.sent == Self.ownedStart + Self.ownedStart)
        #expect(lines.first?.contains("hardware error (code 0x7)") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("scanning again after") == true, "\(lines)")
    }

    /// A Reset completing that this host did not send: someone reset the controller under
    /// the scan (a bridge, a bootloader). Counted as a stray answer, and the scan comes back.
    @Test func unaskedResetScansAgain() throws {
        let transport = AnsweringController()
        let controller = HCIController(transport: transport)
        let scanner = AdvertisementScanner(controller: controller)
        var lines: [String] = []
        scanner.log = { lines.append($0) }
        try scanner.start()
        transport.events += [complete(0x0C03)]
        transport.later = [(afterCommands: 12, event: Self.report)]
        #expect(try reports(from: scanner, within: .milliseconds(400)) == 1)
        #expect(transport.sent == Self.ownedStart + Self.ownedStart)
        #expect(lines.first?.contains("reset") == true, "\(lines)")
        #expect(controller.unsolicited.counts[.strayAnswer] == 1)
    }

    /// A malformed report between two good ones: skipped, counted, the scan goes on.
    @Test func malformedReportIsSkipped() throws {
        let transport = AnsweringController()
        let controller = HCIController(transport: transport)
        let scanner = AdvertisementScanner(controller: controller)
        try scanner.start()
        transport.events += [Self.report, hex("3E 0C 02 01 03 00 01 02 03 04 05 06 09 C4  // data length 9, none there"),
                             hex("3E 0D 0D 01 13 00 01 01 02 03 04 05 06 01 00 FF  // extended, cut"), Self.report]
        #expect(try reports(from: scanner, within: .milliseconds(100)) == 2)
        #expect(controller.unsolicited.counts == [.malformedEvent: 2])
    }
}
