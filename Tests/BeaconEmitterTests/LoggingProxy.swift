// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// A TCP proxy between beacon-emit and rootcanal that records every H4 packet each way, so a
/// test can check the commands on the wire (rootcanal forgets a device whose link closes, so
/// only the wire shows whether advertising was disabled before the program let go).
/// It can also slip extra commands to the controller right after it answers a given command,
/// to put the controller in a state the program did not ask for.
final class LoggingProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let upstreamPort: UInt16
    private let lock = NSLock()
    private var toController: [H4Packet] = []
    private var toHost: [H4Packet] = []
    private var closedByHost = false
    private var clientDescriptor: Int32 = -1
    private var upstreamDescriptor: Int32 = -1
    /// After the controller's Command Complete for this opcode, send these commands first.
    private let injectAfter: (opcode: HCIOpcode, commands: [HCICommandPacket])?

    /// Whether packets are kept for `commands` and `events` (not for a long soak).
    private let recording: Bool
    /// While true, an advertising enable (legacy or extended, switching on) is not passed on:
    /// the proxy answers it with success itself, so the host believes it advertises while the
    /// controller radiates nothing.
    private var swallowing = false
    private var swallowed: [HCICommandPacket] = []
    /// Opcodes whose next Command Complete from the controller is not passed to the host
    /// (the answer to an enable the proxy let through late).
    private var answersToDrop: [HCIOpcode] = []
    /// While true, the host's packets wait here instead of reaching the controller (a
    /// controller that stopped answering); `releaseCommands` sends them on.
    private var holding = false
    private var held: [[UInt8]] = []
    /// Serializes writes to the host (the relay thread, the swallowed enables' answers).
    private let hostWrites = NSLock()
    /// Runs once, on the relay thread, just before the controller's answer to the first
    /// advertising enable (switching on) reaches the host: whatever the host did before that
    /// moment, it did without knowing it was on the air.
    private let beforeFirstEnableAnswer: (@Sendable () -> Void)?
    /// The opcode of an enable (switching on) passed to the controller and not yet answered.
    private var enablePending: HCIOpcode?

    init(upstreamPort: UInt16, injectAfter: (opcode: HCIOpcode, commands: [HCICommandPacket])? = nil,
         recording: Bool = true, beforeFirstEnableAnswer: (@Sendable () -> Void)? = nil) throws {
        self.upstreamPort = upstreamPort
        self.beforeFirstEnableAnswer = beforeFirstEnableAnswer
        self.recording = recording
        self.injectAfter = injectAfter
        (listener, port) = try LocalTCP.listen(backlog: 1)
        Thread.detachNewThread { [self] in serve() }
    }

    enum ProxyError: Error { case setup(Int32) }

    /// Commands the host sent, in order.
    var commands: [HCICommandPacket] {
        lock.withLock { toController.compactMap { try? $0.command() } }
    }

    /// Events the controller sent to the host, in order.
    var events: [HCIEvent] {
        lock.withLock { toHost.compactMap { try? $0.event() } }
    }

    var hostClosed: Bool { lock.withLock { closedByHost } }

    private func serve() {
        let client = accept(listener, nil, nil)
        close(listener)
        guard client >= 0 else { return }
        guard let upstream = LocalTCP.connect(port: upstreamPort) else {
            close(client)
            return
        }
        var on: Int32 = 1
        setsockopt(upstream, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        lock.withLock {
            clientDescriptor = client
            upstreamDescriptor = upstream
        }
        Thread.detachNewThread { [self] in relayEvents(from: upstream, to: client) }
        var decoder = H4StreamDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { break }
            decoder.append(buffer[0..<count])
            while let packet = try? decoder.next() {
                if recording { lock.withLock { toController.append(packet) } }
                if let command = try? packet.command(), Self.enablesAdvertising(command),
                   lock.withLock({ swallowing ? { swallowed.append(command); return true }() : false }) {
                    // The controller's own answer, as it would be: success, one command slot free.
                    let opcode = command.opcode.rawValue
                    writeToHost(client, [0x04, 0x0E, 0x04, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00])
                    continue
                }
                if lock.withLock({ holding ? { held.append(packet.bytes); return true }() : false }) { continue }
                if let command = try? packet.command(), Self.enablesAdvertising(command) {
                    lock.withLock { enablePending = command.opcode }
                }
                writeAll(upstream, packet.bytes)
            }
        }
        lock.withLock { closedByHost = true }
        shutdown(upstream, Int32(SHUT_RDWR))
        close(client)
    }

    private func relayEvents(from upstream: Int32, to client: Int32) {
        var decoder = H4StreamDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var injected = false
        var enableAnswered = false
        while true {
            let count = read(upstream, &buffer, buffer.count)
            if count <= 0 { break }
            decoder.append(buffer[0..<count])
            while let packet = try? decoder.next() {
                if !injected, let injectAfter, case let .commandComplete(complete)? = try? packet.event(),
                   complete.opcode == injectAfter.opcode {
                    injected = true
                    inject(injectAfter.commands, upstream: upstream, decoder: &decoder)
                }
                if case let .commandComplete(complete)? = try? packet.event(),
                   lock.withLock({ () -> Bool in
                       guard let index = answersToDrop.firstIndex(of: complete.opcode) else { return false }
                       answersToDrop.remove(at: index)
                       return true
                   }) {
                    continue
                }
                if !enableAnswered, let beforeFirstEnableAnswer, case let .commandComplete(complete)? = try? packet.event(),
                   lock.withLock({ enablePending == complete.opcode }) {
                    enableAnswered = true
                    beforeFirstEnableAnswer()
                }
                if recording { lock.withLock { toHost.append(packet) } }
                writeToHost(client, packet.bytes)
            }
        }
        close(upstream)
    }

    /// Sends a command to the controller as if another program had; its answer goes to the host.
    func sendToController(_ command: HCICommandPacket) {
        let upstream = lock.withLock { upstreamDescriptor }
        if upstream >= 0 { writeAll(upstream, command.h4Bytes) }
    }

    /// Sends an event to the host as if the controller had (a Hardware Error, say).
    func sendToHost(_ event: HCIEvent) {
        let client = lock.withLock { clientDescriptor }
        if client >= 0 { writeToHost(client, event.h4Bytes) }
    }

    /// From now on the host's commands wait in the proxy: the controller seems to have stopped.
    func holdCommands() {
        lock.withLock { holding = true }
    }

    /// The held commands go to the controller, in order, and later ones pass again.
    func releaseCommands() {
        let (packets, upstream) = lock.withLock { () -> ([[UInt8]], Int32) in
            holding = false
            defer { held = [] }
            return (held, upstreamDescriptor)
        }
        if upstream >= 0 { packets.forEach { writeAll(upstream, $0) } }
    }

    /// From now on, advertising enables are answered by the proxy and never reach the controller.
    func swallowEnables() {
        lock.withLock { swallowing = true }
    }

    /// Enables pass again, and the last one swallowed goes to the controller now (its answer
    /// kept from the host, which had its answer long ago): the controller starts radiating.
    func releaseEnables() {
        let (last, upstream) = lock.withLock { () -> (HCICommandPacket?, Int32) in
            swallowing = false
            let last = swallowed.last
            if let last { answersToDrop.append(last.opcode) }
            return (last, upstreamDescriptor)
        }
        if let last, upstream >= 0 { writeAll(upstream, last.h4Bytes) }
    }

    /// The enables the proxy answered itself.
    var swallowedEnables: Int { lock.withLock { swallowed.count } }

    static func enablesAdvertising(_ command: HCICommandPacket) -> Bool {
        (command.opcode == .leSetAdvertisingEnable || command.opcode == .leSetExtendedAdvertisingEnable)
            && command.parameters.first == 1
    }

    private func writeToHost(_ client: Int32, _ bytes: [UInt8]) {
        hostWrites.withLock { writeAll(client, bytes) }
    }

    /// Sends each command and swallows the controller's answer to it.
    private func inject(_ commands: [HCICommandPacket], upstream: Int32, decoder: inout H4StreamDecoder) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for command in commands {
            writeAll(upstream, command.h4Bytes)
            answered: while true {
                while let packet = try? decoder.next() {
                    if case let .commandComplete(complete)? = try? packet.event(), complete.opcode == command.opcode {
                        break answered
                    }
                }
                let count = read(upstream, &buffer, buffer.count)
                if count <= 0 { return }
                decoder.append(buffer[0..<count])
            }
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }
}

/// A TCP relay to the controller that takes one host connection after another (each a new
/// link to the virtual radio) and cuts the ones open on demand: an H4 bridge that restarts.
final class CuttableRelay: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let upstreamPort: UInt16
    private let lock = NSLock()
    /// The open pairs' descriptors (host side, controller side).
    private var open: [(Int32, Int32)] = []
    private var accepted = 0

    init(upstreamPort: UInt16) throws {
        self.upstreamPort = upstreamPort
        (listener, port) = try LocalTCP.listen(backlog: 4)
        Thread.detachNewThread { [self] in acceptLinks() }
    }

    /// How many host connections were taken.
    var connections: Int { lock.withLock { accepted } }

    /// Closes every link open now, both ways (the controller behind each goes away too).
    func cut() {
        lock.withLock {
            for (host, controller) in open {
                shutdown(host, Int32(SHUT_RDWR))
                shutdown(controller, Int32(SHUT_RDWR))
            }
            open.removeAll()
        }
    }

    /// Stops taking connections and cuts the open ones.
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    private func acceptLinks() {
        while true {
            let host = accept(listener, nil, nil)
            guard host >= 0 else { break }
            guard let controller = LocalTCP.connect(port: upstreamPort) else {
                Glibc.close(host)
                continue
            }
            lock.withLock {
                accepted += 1
                open.append((host, controller))
            }
            // The second pump to end closes both.
            let ended = Counter()
            for (from, to) in [(host, controller), (controller, host)] {
                Thread.detachNewThread {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while true {
                        let count = read(from, &buffer, buffer.count)
                        if count <= 0 || !CuttableRelay.send(to, Array(buffer[0..<count])) { break }
                    }
                    shutdown(from, Int32(SHUT_RDWR))
                    shutdown(to, Int32(SHUT_RDWR))
                    if ended.increment() == 2 {
                        Glibc.close(host)
                        Glibc.close(controller)
                    }
                }
            }
        }
        Glibc.close(listener)
    }

    /// Writes all of `bytes`; false when the link is gone.
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() -> Int { lock.withLock { value += 1; return value } }
    }
}

/// TCP on the loopback address, for the test relays.
enum LocalTCP {
    /// A listening socket on a port the system picks, and that port.
    static func listen(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, Glibc.listen(listener, backlog) == 0 else { throw LoggingProxy.ProxyError.setup(errno) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, UInt16(bigEndian: address.sin_port))
    }

    /// A connected socket to `port` (nodelay), or nil (nothing left open).
    static func connect(port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}
