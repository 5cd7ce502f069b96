// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Glibc
import Testing

/// A source whose descriptor is a pipe the test writes to; serving it drains the pipe, notes
/// how it was served and runs `action`.
private final class PipeSource: RunLoopSource {
    let descriptor: Int32
    var descriptors: [Int32] { [descriptor] }
    let writeEnd: Int32
    let servesWhileCommandWaits: Bool
    private(set) var served: [String] = []
    var action: () -> Void = {}

    init(whileCommandWaits: Bool) {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0 && fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        descriptor = ends[0]
        writeEnd = ends[1]
        servesWhileCommandWaits = whileCommandWaits
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }

    func poke() {
        var byte: UInt8 = 1
        precondition(write(writeEnd, &byte, 1) == 1)
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }

    func serve() {
        drain()
        served.append("by the loop")
        action()
    }

    func serveWhileCommandWaits(ready: [Int32]) {
        drain()
        served.append("while a command waited")
        action()
    }
}

/// A command's wait for its answer runs the loop it is in (`EventLoop`): the sources that
/// may be served meanwhile are, the others and a signal wait for the command to end.
@Suite struct CommandWaitLoopTests {
    /// Reads what the host wrote to the controller's end, up to `count` bytes, within a second.
    private func readCommand(_ fd: Int32, count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(1)
        var buffer = [UInt8](repeating: 0, count: 64)
        while bytes.count < count && ContinuousClock.now < deadline {
            var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pending, 1, 50) > 0 else { continue }
            let got = read(fd, &buffer, buffer.count)
            if got <= 0 { break }
            bytes += buffer[0..<got]
        }
        return bytes
    }

    @Test func aCommandsWaitServesWhatMayBeServedAndLeavesTheRest() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let controllerEnd = ends[1]
        defer { close(controllerEnd) }
        let controller = HCIController(transport: HCIDescriptorTransport(name: "a test link", descriptor: ends[0]),
                                       commandTimeout: .seconds(2))
        let signal = PipeSource(whileCommandWaits: false)
        let watchdog = PipeSource(whileCommandWaits: true)
        let telemetry = PipeSource(whileCommandWaits: false)
        let loop = EventLoop(interrupt: signal.descriptor, sources: [watchdog, telemetry], what: "the test")
        defer { loop.close() }
        controller.loop = loop

        // The controller answers only once the watchdog was served: the answer can come only
        // from a wait that served it.
        var commandSeen: [UInt8] = []
        watchdog.action = {
            commandSeen = readCommand(controllerEnd, count: 4)
            let answer: [UInt8] = [0x04] + complete(0x1009, returning: [0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
            _ = answer.withUnsafeBytes { write(controllerEnd, $0.baseAddress, $0.count) }
        }
        signal.poke()
        watchdog.poke()
        telemetry.poke()
        let started = ContinuousClock.now
        let address = try controller.send(ReadBDAddr()).address
        #expect(started.duration(to: .now) < .seconds(1), "the answer came from the first wait's round")
        #expect(address.description == "01:02:03:04:05:06")
        #expect(commandSeen == [0x01, 0x09, 0x10, 0x00], "Read BD_ADDR went out before the wait")
        #expect(watchdog.served == ["while a command waited"])
        #expect(telemetry.served.isEmpty, "a source that may send commands waits for the command to end")
        #expect(loop.servedWhileCommandsWaited == 1)

        // Back in the loop: the signal is there still, and the telemetry is served, the
        // watchdog (served already, nothing new) not again.
        #expect(try loop.wait(beside: [], until: .now + .milliseconds(200)))
        loop.serveReady()
        #expect(telemetry.served == ["by the loop"])
        #expect(watchdog.served == ["while a command waited"])
    }

    @Test func withoutALoopTheWaitIsOnTheLinkAlone() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        defer { close(ends[1]) }
        let controller = HCIController(transport: HCIDescriptorTransport(name: "a test link", descriptor: ends[0]),
                                       commandTimeout: .milliseconds(300))
        let watchdog = PipeSource(whileCommandWaits: true)
        let loop = EventLoop(interrupt: nil, sources: [watchdog], what: "the test")
        defer { loop.close() }
        watchdog.poke()
        #expect(throws: HostError.self) { try controller.send(ReadBDAddr()) }
        #expect(watchdog.served.isEmpty)
        // With the loop, the same silence is waited out serving the watchdog, and times out alike.
        controller.loop = loop
        let started = ContinuousClock.now
        #expect(throws: HostError.self) { try controller.send(ReadBDAddr()) }
        #expect(started.duration(to: .now) >= .milliseconds(300))
        #expect(watchdog.served == ["while a command waited"])
    }
}

/// The one loop type's run: sources with input served, timers as deadlines of their own (no
/// descriptor), a signal ending it.
@Suite struct EventLoopRunTests {
    @Test func aTimerIsADeadlineOfItsOwnAndInputIsServed() throws {
        let input = PipeSource(whileCommandWaits: false)
        var ticks = 0
        let timer = TickSource(every: .milliseconds(10)) { ticks += 1 }
        let loop = EventLoop(interrupt: nil, sources: [input, timer], what: "the test")
        defer { loop.close() }
        input.poke()
        let started = ContinuousClock.now
        // Ended by the condition, long before the end: only the timer's own deadlines wake it.
        let interrupted = try loop.run(until: .now + .seconds(30)) { ticks < 5 }
        #expect(!interrupted)
        #expect(ticks == 5)
        #expect(started.duration(to: .now) < .seconds(30))
        #expect(input.served == ["by the loop"])
    }

    @Test func aSignalEndsTheRun() throws {
        let signal = PipeSource(whileCommandWaits: false)
        let timer = TickSource(every: .seconds(60)) {}
        let loop = EventLoop(interrupt: signal.descriptor, sources: [timer], what: "the test")
        defer { loop.close() }
        signal.poke()
        #expect(try loop.run(until: .now + .seconds(30)))
    }
}
