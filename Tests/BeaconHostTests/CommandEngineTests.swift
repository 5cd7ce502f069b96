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
        } catch let HostError.commandTimeout(opcode, timeout) {
            #expect(opcode == .reset)
            #expect(timeout == .milliseconds(50))
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

    @Test func malformedEventIsReportedNotTrapped() {
        let transport = ScriptedTransport([.init(command: hex("03 0C 00"), answers: [hex("0E 09 01 03 0C 00")])])
        #expect(throws: HostError.self) { try HCIController(transport: transport).send(Reset()) }
    }
}
