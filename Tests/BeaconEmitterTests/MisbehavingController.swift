// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

/// A controller on H4 over TCP (loopback, a port of its own) that answers as a legacy-only
/// controller would, except in one way it misbehaves: what cheap dongles, buggy firmware
/// and broken bridges do. Each connection is a new controller with the same misbehaviour.
final class MisbehavingController: @unchecked Sendable {
    enum Misbehaviour: String, CaseIterable, Sendable {
        case wellBehaved
        /// A Command Complete for another opcode before each answer.
        case otherOpcodeFirst
        /// Read BD_ADDR and Read Local Version Information answered with three bytes too few.
        case truncatedReturn
        /// Five bytes more after every answer's return parameters.
        case trailingBytes
        /// Every answer grants zero command credits, and none ever come.
        case zeroCredits
        /// Enabling advertising or a scan, and Read Local Version Information, answered with a
        /// Command Status error (Command Disallowed).
        case commandStatusError
        /// The same commands answered with a status no specification defines (0xEE).
        case unknownStatus
        /// The second answer's length byte promises more than follows; silence; then close.
        case lengthPastEnd
        /// A packet type byte no H4 stream has (0x00, 0xFF) before the second answer.
        case packetType00, packetTypeFF
        /// A well-formed ISO data packet (0x05) before every answer.
        case packetType05
        /// ACL and SCO data before every answer.
        case dataPackets
        /// A Hardware Error 300 ms after advertising or scanning is enabled (for info: instead
        /// of the first answer to Read Local Version Information).
        case hardwareErrorMidRun
        /// A Reset's Command Complete nobody asked for, 300 ms after advertising or scanning
        /// is enabled (for info: before the answer to Read Local Version Information).
        case unaskedReset
        /// Advertising reports that do not parse, every 20 ms once enabled.
        case malformedReports
        /// Reports at the ends of every range (RSSI 127, +20, -128; measured power +127, 0, -128;
        /// TX power 127; empty and 31-byte data), every 20 ms once enabled.
        case extremeReports
        /// 100,000 reports a second once enabled.
        case flood
        /// The first answer (Reset's) one byte every 200 ms.
        case trickle
        /// The second answer cut in the middle of an event, then the connection closed.
        case closeMidEvent
        /// Never answers anything.
        case neverAnswers
        /// Once advertising or scanning is on, each answer comes 1.2 s late (within the 2 s a
        /// command may take).
        case slowOnceEnabled
    }

    let misbehaviour: Misbehaviour
    private(set) var port: UInt16 = 0
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var connections: [Int32] = []
    private var sentReports = 0

    /// Advertising reports written so far (the flood's count).
    var reportsSent: Int { lock.withLock { sentReports } }
    fileprivate func countReports(_ count: Int) { lock.withLock { sentReports += count } }

    init(_ misbehaviour: Misbehaviour) throws {
        self.misbehaviour = misbehaviour
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    var device: String { "tcp:127.0.0.1:\(port)" }

    /// Ends every connection and the listener. Descriptors are closed only by the threads that
    /// use them (and connections only under the lock), so no number is shut down or accepted on
    /// after another test's socket took it.
    func stop() {
        lock.withLock {
            stopped = true
            for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            lock.withLock { connections.append(fd) }
            Thread.detachNewThread { [self] in
                var connection = Connection(fd: fd, misbehaviour: misbehaviour, stopped: { self.isStopped },
                                            sent: { self.countReports($0) })
                connection.serve()
                lock.withLock {
                    connections.removeAll { $0 == fd }
                    close(fd)
                }
            }
        }
    }
}

/// One controller: reads commands, answers them (misbehaving), sends what it sends unasked.
private struct Connection {
    typealias Misbehaviour = MisbehavingController.Misbehaviour
    let fd: Int32
    let misbehaviour: Misbehaviour
    let stopped: () -> Bool
    let sent: (Int) -> Void
    var commands = 0
    var enabledAt: ContinuousClock.Instant?
    var midRunSent = false
    var versionReads = 0

    init(fd: Int32, misbehaviour: Misbehaviour, stopped: @escaping () -> Bool, sent: @escaping (Int) -> Void) {
        self.fd = fd
        self.misbehaviour = misbehaviour
        self.stopped = stopped
        self.sent = sent
    }

    mutating func serve() {
        var decoder = H4StreamDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped() {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, misbehaviour == .flood ? 1 : 10)
            if ready > 0 {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { return }
                decoder.append(buffer[0..<count])
                while let packet = try? decoder.next() {
                    guard packet.type == .command, packet.body.count >= 3 else { continue }
                    commands += 1
                    guard answer(packet.body) else { return }
                }
            }
            guard unasked() else { return }
        }
    }

    /// Writes the answer to one command; false once the connection is to close.
    mutating func answer(_ body: [UInt8]) -> Bool {
        let opcode = UInt16(body[0]) | UInt16(body[1]) << 8
        let parameters = Array(body[3...])
        if misbehaviour == .slowOnceEnabled && enabledAt != nil { Thread.sleep(forTimeInterval: 1.2) }
        if (opcode == 0x200A || opcode == 0x200C) && parameters.first == 1 { enabledAt = .now }
        var returned = Self.returnParameters(opcode)
        var credits: UInt8 = 1
        var status: UInt8 = 0
        switch misbehaviour {
        case .neverAnswers: return true
        case .otherOpcodeFirst: write(Self.complete(0xFC01, status: 0, returning: []))
        case .truncatedReturn where opcode == 0x1009 || opcode == 0x1001: returned.removeLast(3)
        case .trailingBytes: returned += [0xAA, 0xBB, 0xCC, 0xDD, 0xEE]
        case .zeroCredits: credits = 0
        case .commandStatusError, .unknownStatus:
            if (opcode == 0x200A || opcode == 0x200C) && parameters.first == 1 || opcode == 0x1001 {
                if misbehaviour == .unknownStatus {
                    status = 0xEE
                } else {
                    write([0x04, 0x0F, 0x04, 0x0C, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)])
                    return true
                }
            }
        case .lengthPastEnd where commands == 2:
            write([0x04, 0x0E, 0x20, 0x01, 0x03])
            Thread.sleep(forTimeInterval: 0.5)
            return false
        case .packetType00 where commands == 2: write([0x00])
        case .packetTypeFF where commands == 2: write([0xFF])
        case .packetType05: write([0x05, 0x01, 0x00, 0x02, 0x00, 0xAA, 0xBB])
        case .dataPackets: write([0x02, 0x01, 0x20, 0x02, 0x00, 0xAA, 0xBB, 0x03, 0x01, 0x00, 0x01, 0xCC])
        case .hardwareErrorMidRun where opcode == 0x1001 && versionReads == 0:
            versionReads += 1
            write([0x04, 0x10, 0x01, 0x07])
            return true
        case .unaskedReset where opcode == 0x1001: write(Self.complete(0x0C03, status: 0, returning: []))
        case .closeMidEvent where commands == 2:
            write([0x04, 0x3E, 0x2A, 0x02, 0x01, 0x03])
            return false
        case .trickle where commands == 1:
            for byte in Self.complete(opcode, status: 0, returning: returned) {
                write([byte])
                Thread.sleep(forTimeInterval: 0.2)
            }
            return true
        default: break
        }
        write(Self.complete(opcode, status: status, returning: returned, credits: credits))
        return true
    }

    /// What is sent unasked once advertising or scanning is on; false once closing.
    mutating func unasked() -> Bool {
        guard let enabledAt else { return true }
        switch misbehaviour {
        case .hardwareErrorMidRun where !midRunSent && enabledAt.duration(to: .now) > .milliseconds(300):
            midRunSent = true
            write([0x04, 0x10, 0x01, 0x07])
        case .unaskedReset where !midRunSent && enabledAt.duration(to: .now) > .milliseconds(300):
            midRunSent = true
            write(Self.complete(0x0C03, status: 0, returning: []))
        case .malformedReports:
            for report in Self.malformedReports { write([0x04] + report) }
        case .extremeReports:
            for report in Self.extremeReports { write([0x04] + report) }
        case .flood:
            // 100 reports each millisecond the poll waits: about 100,000 a second.
            write(Self.floodBatch)
            sent(100)
        default: break
        }
        return true
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    static func complete(_ opcode: UInt16, status: UInt8, returning: [UInt8], credits: UInt8 = 1) -> [UInt8] {
        let parameters = [credits, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + returning
        return [0x04, 0x0E, UInt8(parameters.count)] + parameters
    }

    /// A legacy-only Bluetooth 5.0 controller's return parameters (after the status).
    static func returnParameters(_ opcode: UInt16) -> [UInt8] {
        switch opcode {
        case 0x1001: [0x09, 0x00, 0x00, 0x09, 0x5F, 0x00, 0x00, 0x00]   // HCI 5.0, company 0x005F
        case 0x1002: [UInt8](repeating: 0, count: 64)                    // no extended commands
        case 0x2003: [UInt8](repeating: 0, count: 8)                     // no LE features
        case 0x1009: [0x06, 0x05, 0x04, 0x03, 0x02, 0x01]
        default: []
        }
    }

    /// An iBeacon's advertising data with a measured power byte.
    static func iBeacon(power: UInt8) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + Array(0x00...0x0F) + [0x00, 0x65, 0x00, 0x02, power]
    }

    /// One legacy LE Advertising Report event (code first).
    static func legacyReport(data: [UInt8], rssi: UInt8) -> [UInt8] {
        meta([0x02, 0x01, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [rssi])
    }

    /// An LE Meta event of these parameters (its length byte right, so H4 framing holds).
    static func meta(_ parameters: [UInt8]) -> [UInt8] { [0x3E, UInt8(parameters.count)] + parameters }

    /// The fields of an extended report after Num_Reports, up to the data length (24 bytes).
    static func extendedFields(txPower: UInt8, rssi: UInt8, dataLength: UInt8) -> [UInt8] {
        [0x13, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x01, 0x00, 0xFF, txPower, rssi, 0x00, 0x00,
         0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, dataLength]
    }

    static let floodBatch: [UInt8] = (0..<100).flatMap { _ in [0x04] + extremeReports[0] }

    static let malformedReports: [[UInt8]] = [
        // Num_Reports 5, one report's bytes.
        meta([0x02, 0x05, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xC4]),
        // A data length (0x1E) past the end.
        meta([0x02, 0x01, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x1E, 0xC4]),
        // An extended report cut after its address.
        meta([0x0D, 0x01, 0x13, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]),
        // An extended report whose data length (0xFF) runs past the end.
        meta([0x0D, 0x01] + extendedFields(txPower: 0x7F, rssi: 0xC4, dataLength: 0xFF) + [0x02, 0x01]),
        // Num_Reports 0 with a report's bytes after it.
        meta([0x02, 0x00, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xC4]),
        // An LE Meta event with no subevent.
        meta([]),
    ]

    static let extremeReports: [[UInt8]] = [
        legacyReport(data: iBeacon(power: 0xC5), rssi: 0xC4),
        legacyReport(data: iBeacon(power: 0x7F), rssi: 0x80),       // +127 dBm at 1 m, -128 received
        legacyReport(data: iBeacon(power: 0x00), rssi: 0x14),       // 0 dBm at 1 m, +20 received
        legacyReport(data: iBeacon(power: 0x80), rssi: 0x7F),       // -128 at 1 m, RSSI not available
        legacyReport(data: iBeacon(power: 0x01), rssi: 0xFF),
        legacyReport(data: [], rssi: 0xC4),
        legacyReport(data: [0x1E] + [UInt8](repeating: 0xFF, count: 30), rssi: 0xC4),
        // An extended report with TX power 127 and RSSI 127, carrying the iBeacon.
        meta([0x0D, 0x01] + extendedFields(txPower: 0x7F, rssi: 0x7F, dataLength: 30) + iBeacon(power: 0xFF)),
    ]
}
