// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

@Suite struct CommandEngineTests {
    @Test func returnsTypedReturnParameters() throws {
        let transport = ScriptedTransport([
            .init(command: hex("3B 20 00  // LE Read Number of Supported Advertising Sets"),
                  answers: [complete(0x203B, returning: [0x10])]),
        ])
        let controller = HCIController(transport: transport)
        #expect(try controller.send(LEReadNumberOfSupportedAdvertisingSets()).numberOfSets == 16)
        #expect(controller.roundTrips == 1)
    }

    @Test func refusalCarriesOpcodeStatusAndContext() {
        let transport = ScriptedTransport([
            .init(command: LESetAdvertisingEnable(enable: true).packet.bytes, answers: [complete(0x200A, status: 0x0C)]),
        ])
        let controller = HCIController(transport: transport)
        do {
            try controller.send(LESetAdvertisingEnable(enable: true), context: "set 0")
            Issue.record("no error")
        } catch let HostError.controllerRefused(opcode, status, context) {
            #expect(opcode == .leSetAdvertisingEnable)
            #expect(status == .commandDisallowed)
            #expect(context == "set 0")
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    @Test func commandStatusFailureIsARefusal() {
        let transport = ScriptedTransport([
            .init(command: hex("03 0C 00"), answers: [hex("0F 04  01  01  03 0C   // Command Status: Unknown Command")]),
        ])
        #expect(throws: HostError.self) { try HCIController(transport: transport).send(Reset()) }
    }

    @Test func timesOutAtTheDeadline() {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [])])
        let controller = HCIController(transport: transport, commandTimeout: .milliseconds(50))
        let start = ContinuousClock.now
        do {
            try controller.send(Reset())
            Issue.record("no timeout")
        } catch let HostError.commandTimeout(opcode, timeout, ignored) {
            #expect(opcode == .reset)
            #expect(timeout == .milliseconds(50))
            #expect(ignored == nil)
        } catch {
            Issue.record("wrong error \(error)")
        }
        #expect(start.duration(to: .now) < .seconds(1))
    }

    @Test func waitsForCreditsBeforeSending() throws {
        // The first answer grants zero credits; a no-op Command Complete (opcode 0) grants one.
        let transport = ScriptedTransport([
            .init(command: hex("03 0C 00"), answers: [hex("0E 04  00  03 0C  00"), hex("0E 03  01  00 00")]),
            .init(command: hex("01 10 00"), answers: [complete(0x1001, returning: hex("0C 0000 0C E000 0000"))]),
        ])
        let controller = HCIController(transport: transport)
        try controller.send(Reset())
        #expect(try controller.send(ReadLocalVersionInformation()).hciVersion == 0x0C)
        #expect(transport.remainingSteps == 0)
    }

    @Test func otherEventsArePassedOn() throws {
        let report = hex("3E 0C 02 01 03 00 01 02 03 04 05 06 00 C4")
        let transport = ScriptedTransport([
            .init(command: hex("03 0C 00"), answers: [report, complete(0x0C03)]),
        ])
        let controller = HCIController(transport: transport)
        try controller.send(Reset())
        let event = try controller.nextEvent(timeout: .milliseconds(10))
        #expect(event == (try HCIEvent(parsing: report)))
    }

    /// A watcher must hear of another program's reset at once, not when its wait ends (a
    /// session waiting a second would leave the beacons off the air for most of it).
    @Test func anObservedPacketEndsTheWait() throws {
        let report = hex("3E 0C 02 01 03 00 01 02 03 04 05 06 00 C4")
        let transport = ScriptedTransport([.init(command: nil, answers: [complete(0x0C03), report])])
        let controller = HCIController(transport: transport)
        var observed: [ObservedPacket] = []
        controller.observer = { observed.append($0) }
        #expect(try controller.nextEvent(timeout: .seconds(1)) == nil)
        #expect(observed.count == 1)
        #expect(try controller.nextEvent(timeout: .milliseconds(10)) == (try HCIEvent(parsing: report)))
        controller.observer = nil
        #expect(observed.count == 1)
    }

    @Test func hardwareErrorEndsTheCommand() {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [hex("10 01 07")])])
        do {
            try HCIController(transport: transport).send(Reset())
            Issue.record("no error")
        } catch let HostError.hardwareError(code) {
            #expect(code == 7)
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    @Test func closedLinkIsATransportError() {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [])])
        transport.closeWhenDone = true
        do {
            try HCIController(transport: transport).send(Reset())
            Issue.record("no error")
        } catch let HostError.transport(.closed(name), _) {
            #expect(name == "scripted")
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    /// A malformed event is input nobody asked for: passed over, counted and reported; the
    /// command's own answer after it still counts.
    @Test func malformedEventIsPassedOverAndCounted() throws {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [
            hex("3E 0C 02 05 03 00 01 02 03 04 05 06 00 C4  // Num_Reports 5, one report's bytes"),
            hex("10 02 07 00                              // Hardware Error with a byte too many"),
            complete(0x0C03),
        ])])
        let controller = HCIController(transport: transport)
        var reports: [UnsolicitedInputReport] = []
        controller.reportUnsolicited = { reports.append($0) }
        try controller.send(Reset())
        #expect(controller.unsolicited.counts == [.malformedEvent: 2])
        #expect(reports.map(\.count) == [1], "reported the first; the second is not a power of ten")
        #expect(reports.first?.detail.contains("LE Advertising Report") == true)
    }

    /// What an owned controller sends unasked: answers to other commands, data packets,
    /// events never enabled. All counted, none ends the command.
    @Test func strayAnswersDataAndUnknownEventsAreCounted() throws {
        final class Mixed: PacketTransport {
            let name = "mixed"
            var queue: [H4Packet] = [
                H4Packet(type: .event, body: complete(0x2006)),                       // another opcode
                H4Packet(type: .event, body: hex("0F 04 00 01 0A 20")),               // Command Status, another opcode
                H4Packet(type: .event, body: hex("0E 03 01 00 00")),                  // no-op credits: normal
                H4Packet(type: .aclData, body: hex("01 20 02 00 AA BB")),
                H4Packet(type: .isoData, body: hex("01 00 01 00 AA")),
                H4Packet(type: .command, body: hex("03 0C 00")),
                H4Packet(type: .event, body: hex("13 05 01 40 00 01 00           // Number Of Completed Packets")),
                H4Packet(type: .event, body: hex("3E 02 01 00                    // LE Connection Complete, cut")),
                H4Packet(type: .event, body: complete(0x0C03)),
            ]
            func send(_ packet: H4Packet) throws(TransportError) {}
            func receive(timeout: Duration) throws(TransportError) -> ReceiveResult {
                queue.isEmpty ? .timedOut : .packet(queue.removeFirst())
            }
            func close() {}
        }
        let controller = HCIController(transport: Mixed())
        try controller.send(Reset())
        #expect(controller.unsolicited.counts == [.strayAnswer: 2, .dataPacket: 2, .commandFromController: 1,
                                                  .unknownEvent: 2])
        #expect(controller.unsolicited.summary?.contains("2 answers to commands this host did not send") == true)
    }

    /// On a kernel socket the kernel's own commands and answers are normal traffic.
    @Test func kernelTrafficIsNotUnsolicited() throws {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [
            complete(0x2006), hex("13 05 01 40 00 01 00"), complete(0x0C03),
        ])])
        let controller = HCIController(transport: transport, sharedWithKernel: true)
        try controller.send(Reset())
        #expect(controller.unsolicited.total == 0)
    }

    /// Every command's return parameters start with its status: a Command Complete that
    /// ends at the opcode answers nothing, even for a command that returns only a status.
    @Test func commandCompleteWithoutStatusIsMalformed() {
        let transport = ScriptedTransport([
            .init(command: LESetAdvertisingEnable(enable: true).packet.bytes,
                  answers: [hex("0E 03  01  0A 20   // Command Complete, LE Set Advertising Enable, no status")]),
        ])
        do {
            try HCIController(transport: transport).send(LESetAdvertisingEnable(enable: true))
            Issue.record("taken as success")
        } catch let HostError.malformedEvent(error) {
            #expect(error.description.contains("LE Set Advertising Enable"))
            #expect(error.description.contains("status"))
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    /// A flood while a command waits keeps at most the queue's limit for the caller.
    @Test func floodWhileWaitingIsBounded() throws {
        let report = hex("3E 0C 02 01 03 00 01 02 03 04 05 06 00 C4")
        let flood = [[UInt8]](repeating: report, count: 10_000)
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: flood + [complete(0x0C03)])])
        let controller = HCIController(transport: transport)
        try controller.send(Reset())
        // Full at 4096, the oldest 2048 let go each time: at the 4097th, 6145th and 8193rd.
        #expect(controller.unsolicited.counts[.droppedEvent] == 3 * 2048)
        var kept = 0
        while try controller.nextEvent(timeout: .zero) != nil { kept += 1 }
        #expect(kept == 10_000 - 3 * 2048)
        #expect(kept <= UnsolicitedInputCounter.queueLimit)
    }

    /// A command whose answer never comes, while the controller sends garbage: the timeout
    /// says what was passed over.
    @Test func timeoutNamesWhatWasIgnored() {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [hex("0E 01 01"), hex("0E 01 01")])])
        let controller = HCIController(transport: transport, commandTimeout: .milliseconds(20))
        do {
            try controller.send(Reset())
            Issue.record("no timeout")
        } catch let HostError.commandTimeout(_, _, ignored) {
            #expect(ignored == "2 events that do not parse")
        } catch {
            Issue.record("wrong error \(error)")
        }
    }

    @Test func disableThatIsAlreadyOffSucceeds() throws {
        let transport = ScriptedTransport([
            .init(command: LESetAdvertisingEnable(enable: false).packet.bytes, answers: [complete(0x200A, status: 0x0C)]),
            .init(command: LESetAdvertisingEnable(enable: false).packet.bytes, answers: [complete(0x200A, status: 0x12)]),
        ])
        let controller = HCIController(transport: transport)
        try controller.sendDisable(LESetAdvertisingEnable(enable: false))
        #expect(throws: HostError.self) { try controller.sendDisable(LESetAdvertisingEnable(enable: false)) }
    }
}

@Suite struct UnsolicitedInputCounterTests {
    @Test func reportsTheFirstThenPowersOfTen() {
        var counter = UnsolicitedInputCounter()
        var reported: [Int] = []
        for _ in 0..<1500 {
            if let report = counter.count(.malformedEvent, detail: "x") { reported.append(report.count) }
        }
        #expect(reported == [1, 10, 100, 1000])
        #expect(counter.total == 1500)
    }
}

/// The management command engine keeps what arrives while a command waits by the same rule.
@Suite struct MgmtCommandEngineTests {
    @Test func floodWhileWaitingIsBounded() throws {
        // 10,000 Advertising Added events on hci0 before the answer to Read Advertising Features.
        let flood = (0..<10_000).map { MgmtEvent.advertisingAdded(instance: UInt8($0 % 200 + 1)).packet(index: 0) }
        var step = completes(ReadAdvertisingFeatures(), returning: [0, 0, 0, 0, 31, 0, 31, 0, 5, 0])
        step.answers = flood + step.answers
        let client = MgmtClient(transport: ScriptedKernel([step]), index: 0)
        var traced: [String] = []
        client.trace = { traced.append($0) }
        _ = try client.send(ReadAdvertisingFeatures())
        var kept: [MgmtEvent] = []
        while let event = try client.nextEvent(timeout: .zero) { kept.append(event) }
        // Full at 4096, the oldest 2048 let go each time: at the 4097th, 6145th and 8193rd.
        #expect(kept.count == 10_000 - 3 * 2048)
        #expect(kept.first == .advertisingAdded(instance: UInt8(3 * 2048 % 200 + 1)))
        #expect(traced.filter { $0.contains("dropped the 2048 oldest") }.count == 3)
    }
}

extension MgmtCommandEngineTests {
    /// An event that does not parse is counted and reported, never thrown; the events around
    /// it still arrive.
    @Test func malformedEventsAreCountedAndReported() throws {
        let truncated = MgmtPacket(code: MgmtEventCode.advertisingAdded.rawValue, index: 0, parameters: [])  // no Instance
        let kernel = ScriptedKernel([.init(command: nil, answers: [
            MgmtEvent.advertisingAdded(instance: 1).packet(index: 0), truncated,
            MgmtEvent.advertisingRemoved(instance: 1).packet(index: 0),
        ])])
        let client = MgmtClient(transport: kernel, index: 0)
        var reports: [UnsolicitedInputReport] = []
        client.reportUnsolicited = { reports.append($0) }
        #expect(try client.nextEvent(timeout: .zero) == .advertisingAdded(instance: 1))
        #expect(try client.nextEvent(timeout: .zero) == .advertisingRemoved(instance: 1))
        #expect(try client.nextEvent(timeout: .zero) == nil)
        #expect(client.unsolicited.counts[.malformedEvent] == 1)
        #expect(reports.count == 1)
        #expect(reports.first?.detail.hasPrefix("Advertising Added") == true, "\(reports)")
        #expect(reports.first?.detail.contains("Instance") == true, "\(reports)")
    }
}
