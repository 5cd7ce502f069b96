// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// The kernel's monitor channel, scripted: packets queued as the kernel would copy them.
final class ScriptedMonitor: PacketTransport {
    let name = "the scripted monitor"
    var queued: [MgmtPacket] = []
    func send(_ packet: MgmtPacket) throws(TransportError) { Issue.record("nothing is sent on the monitor") }
    func receive(timeout: Duration) throws(TransportError) -> MgmtReceiveResult {
        queued.isEmpty ? .timedOut : .packet(queued.removeFirst())
    }
    func close() {}

    /// A management socket opened by `process` (HCI_MON_CTRL_OPEN, as `create_monitor_ctrl_open` lays it out).
    func opened(_ cookie: UInt32, _ process: String) {
        var parameters: [UInt8] = []
        parameters.appendLE(cookie)
        parameters += [0x02, 0x00, 0x01, 0x16, 0x00, 0x01, 0x00, 0x00, 0x00, 16]
        parameters += Array(process.utf8.prefix(15)) + [UInt8](repeating: 0, count: 16 - min(15, process.utf8.count))
        queued.append(MgmtPacket(code: MonitorMessage.controlOpen, index: MgmtPacket.nonController, parameters: parameters))
    }

    /// A command from socket `cookie` (HCI_MON_CTRL_COMMAND).
    func command(_ cookie: UInt32, _ packet: MgmtPacket) {
        var parameters: [UInt8] = []
        parameters.appendLE(cookie)
        parameters.appendLE(packet.code)
        queued.append(MgmtPacket(code: MonitorMessage.controlCommand, index: packet.index,
                                 parameters: parameters + packet.parameters))
    }

    /// The kernel's Command Complete to socket `cookie` (HCI_MON_CTRL_EVENT).
    func completes(_ cookie: UInt32, _ opcode: MgmtOpcode, status: MgmtStatus = .success, index: UInt16 = 0) {
        var parameters: [UInt8] = []
        parameters.appendLE(cookie)
        parameters.appendLE(MgmtEventCode.commandComplete.rawValue)
        parameters.appendLE(opcode.rawValue)
        parameters.append(status.rawValue)
        queued.append(MgmtPacket(code: MonitorMessage.controlEvent, index: index, parameters: parameters))
    }

    /// Another program's whole Add Advertising of `instance`, answered with `status`.
    func foreignAdd(_ cookie: UInt32, _ process: String, instance: UInt8, status: MgmtStatus = .success) {
        opened(cookie, process)
        command(cookie, try! AddAdvertising(instance: instance, advertisingData: [2, 1, 6]).packet(index: 0))
        completes(cookie, .addAdvertising, status: status)
    }
}

@Suite struct TakeoverWatchTests {
    static let ours: UInt32 = 0x1000
    static let bluetoothd: UInt32 = 0x2000

    /// A watch that has learnt our socket from our first command.
    func watch() -> (TakeoverWatch, ScriptedMonitor) {
        let monitor = ScriptedMonitor()
        let watch = TakeoverWatch(transport: monitor, index: 0, process: "beacon-emit")
        let first = ReadAdvertisingFeatures().packet(index: 0)
        watch.sent(first)
        monitor.opened(Self.ours, "beacon-emit")
        monitor.command(Self.ours, first)
        return (watch, monitor)
    }

    @Test func anotherProgramsCompletedWriteToOurInstanceIsATakeover() throws {
        let (watch, monitor) = watch()
        monitor.foreignAdd(Self.bluetoothd, "bluetoothd", instance: 3)
        #expect(try watch.drain(ours: [3]) == [InstanceTakeover(instance: 3, process: "bluetoothd")])
    }

    @Test func extendedParametersOrDataFromAnotherProgramCountToo() throws {
        let (watch, monitor) = watch()
        monitor.opened(Self.bluetoothd, "btmgmt")
        monitor.command(Self.bluetoothd, AddExtendedAdvertisingParameters(instance: 2, flags: [], minimumInterval: 160, maximumInterval: 160).packet(index: 0))
        #expect(try watch.drain(ours: [2]).isEmpty, "nothing until the kernel answered")
        monitor.completes(Self.bluetoothd, .addExtendedAdvertisingParameters)
        #expect(try watch.drain(ours: [2]) == [InstanceTakeover(instance: 2, process: "btmgmt")])
    }

    @Test func ourOwnWritesARefusedWriteAndOtherInstancesAreNot() throws {
        let (watch, monitor) = watch()
        monitor.command(Self.ours, try AddAdvertising(instance: 3, advertisingData: [2, 1, 6]).packet(index: 0))
        monitor.completes(Self.ours, .addAdvertising)
        monitor.foreignAdd(Self.bluetoothd, "bluetoothd", instance: 3, status: .invalidParameters)
        monitor.foreignAdd(Self.bluetoothd + 1, "bluetoothd", instance: 1)
        var other = try AddAdvertising(instance: 3, advertisingData: [2, 1, 6]).packet(index: 0)
        other.index = 1
        monitor.opened(Self.bluetoothd + 2, "btmgmt")
        monitor.command(Self.bluetoothd + 2, other)
        monitor.completes(Self.bluetoothd + 2, .addAdvertising, index: 1)
        #expect(try watch.drain(ours: [3]).isEmpty, "ours, refused, instance 1, and hci1's instance 3")
    }

    @Test func nothingIsJudgedBeforeOurSocketIsKnown() throws {
        let monitor = ScriptedMonitor()
        let watch = TakeoverWatch(transport: monitor, index: 0, process: "beacon-emit")
        monitor.foreignAdd(Self.bluetoothd, "bluetoothd", instance: 3)
        #expect(try watch.drain(ours: [3]).isEmpty, "our own first write must never look foreign")
    }

    @Test func anotherRunOfOurNameIsNotTakenForUs() throws {
        let monitor = ScriptedMonitor()
        let watch = TakeoverWatch(transport: monitor, index: 0, process: "beacon-emit")
        let first = ReadAdvertisingFeatures().packet(index: 0)
        watch.sent(first)
        // Another program sends the same command first: it is not ours (its name differs).
        monitor.opened(Self.bluetoothd, "bluetoothd")
        monitor.command(Self.bluetoothd, first)
        monitor.opened(Self.ours, "beacon-emit")
        monitor.command(Self.ours, first)
        monitor.command(Self.bluetoothd, try AddAdvertising(instance: 3, advertisingData: [2, 1, 6]).packet(index: 0))
        monitor.completes(Self.bluetoothd, .addAdvertising)
        #expect(try watch.drain(ours: [3]) == [InstanceTakeover(instance: 3, process: "bluetoothd")])
    }

    @Test func monitorGarbageIsCountedNotFatal() throws {
        let (watch, monitor) = watch()
        monitor.queued.append(MgmtPacket(code: MonitorMessage.controlOpen, index: 0xFFFF, parameters: [1, 2]))
        monitor.queued.append(MgmtPacket(code: 3, index: 0, parameters: [0x0E, 0x04]))  // an HCI event: not ours to read
        var reports: [UnsolicitedInputReport] = []
        watch.reportUnsolicited = { reports.append($0) }
        #expect(try watch.drain(ours: [3]).isEmpty)
        #expect(watch.malformed == 1)
        #expect(reports.map(\.kind) == [.malformedEvent], "reported, as every input nobody asked for")
    }
}

@Suite struct SharedAdapterTests {
    /// An advertiser on hci0 (instances 1 to 3, 1 another program's: ours is 2) with a watch that knows our socket.
    func session(_ extra: [ScriptedKernel.Step]) throws -> (ManagedSession, ScriptedKernel, ScriptedMonitor) {
        let kernel = ScriptedKernel([featuresStep(taken: [1])] + addSteps(instance: 2) + extra)
        let client = MgmtClient(transport: kernel, index: 0)
        let monitor = ScriptedMonitor()
        let watch = TakeoverWatch(transport: monitor, index: 0, process: "beacon-emit")
        client.sent = { watch.sent($0) }
        let advertiser = ManagedAdvertiser(client: client, options: AdvertisingOptions(beacons: [referenceBeacon]))
        try advertiser.start()
        monitor.opened(TakeoverWatchTests.ours, "beacon-emit")
        for packet in kernel.sent { monitor.command(TakeoverWatchTests.ours, packet) }
        return (ManagedSession(advertiser: advertiser, watch: watch, openMonitor: { _ in nil }), kernel, monitor)
    }

    @Test func aTakenInstanceIsForgottenTheBeaconMovesAndOnlyTheNewOneIsRemoved() throws {
        let (session, kernel, monitor) = try session(
            [featuresStep(taken: [1, 2])] + addSteps(instance: 3) + [completes(RemoveAdvertising(instance: 3), returning: [3])])
        var recorded: [[UInt8]] = []
        session.advertiser.instancesChanged = { recorded.append($0) }
        #expect(try session.takeIn() == .quiet, "our own commands are not a takeover")
        monitor.foreignAdd(TakeoverWatchTests.bluetoothd, "bluetoothd", instance: 2)
        #expect(try session.takeIn() == .disrupted(.instanceTakenOver(2, by: "bluetoothd")))
        #expect(session.advertiser.ours.isEmpty)
        try session.restore()
        #expect(session.plan?.handles == [3], "moved to the highest number proven free")
        #expect(recorded.last == [3], "the record names the new instance only")
        try session.stop()
        #expect(kernel.remainingSteps == 0)
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 2).packet(index: 0)), "instance 2 is bluetoothd's now")
    }

    /// Another program's Add Advertising on our number makes the kernel remove ours: its
    /// command is on the monitor channel before the removal is on the management socket, and
    /// both are read together under load. It is a takeover (our beacon moves, their number is
    /// left alone), not a removal (which a VM check under CI's load once saw, the beacon then
    /// staying off the air).
    @Test func aRemovalThatATakeoverCausedIsTheTakeover() throws {
        let (session, kernel, monitor) = try session(
            [featuresStep(taken: [1, 2])] + addSteps(instance: 3) + [completes(RemoveAdvertising(instance: 3), returning: [3])])
        monitor.foreignAdd(TakeoverWatchTests.bluetoothd, "btmgmt", instance: 2)
        kernel.deliver([.advertisingRemoved(instance: 2)])
        #expect(try session.takeIn() == .disrupted(.instanceTakenOver(2, by: "btmgmt")))
        #expect(try session.takeIn() == .quiet, "the removal was the takeover's: no second disruption")
        try session.restore()
        #expect(session.plan?.handles == [3])
        try session.stop()
        #expect(kernel.remainingSteps == 0)
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 2).packet(index: 0)), "instance 2 is btmgmt's now")
    }

    @Test func aTakenNumberHiddenFromTheListIsNeverTakenBack() throws {
        // The other program removes its 1, then bluetoothd takes our 2: the kernel holds one
        // instance, numbered 2, which Linux 6.x does not list (it lists numbers up to its count).
        let (session, kernel, monitor) = try session([featuresStep(taken: [])] + addSteps(instance: 1))
        kernel.deliver([.advertisingRemoved(instance: 1)])
        #expect(try session.takeIn() == .quiet, "not ours")
        monitor.foreignAdd(TakeoverWatchTests.bluetoothd, "bluetoothd", instance: 2)
        #expect(try session.takeIn() == .disrupted(.instanceTakenOver(2, by: "bluetoothd")))
        try session.restore()
        #expect(session.plan?.handles == [1], "never back to the unlisted 2")
        #expect(kernel.remainingSteps == 0)
    }

    @Test func aTakeoverJustBeforeStopIsSeenAndNothingIsRemoved() throws {
        let (session, kernel, monitor) = try session([])
        monitor.foreignAdd(TakeoverWatchTests.bluetoothd, "btmgmt", instance: 2)
        try session.stop()
        #expect(kernel.remainingSteps == 0)
        #expect(!kernel.sent.contains(RemoveAdvertising(instance: 2).packet(index: 0)))
    }

    @Test func restoreAfterAPowerCycleTakesTheSameNumberOnlyWhileItIsFree() throws {
        // Power off removed our 2; meanwhile another program added 2 (bluetoothd re-registering).
        let (session, kernel, _) = try session([featuresStep(taken: [1, 2])] + addSteps(instance: 3))
        kernel.deliver([.newSettings([.lowEnergy]), .advertisingRemoved(instance: 2)])
        #expect(try session.takeIn() == .disrupted(.poweredOff))
        _ = try session.takeIn()
        try session.restore()
        #expect(session.plan?.handles == [3])
        #expect(kernel.remainingSteps == 0)
        let two = AddExtendedAdvertisingParameters(instance: 2, flags: [.intervalParameters],
                                                   minimumInterval: 160, maximumInterval: 160).packet(index: 0)
        #expect(kernel.sent.filter { $0 == two }.count == 1, "2 written at start only, never over the other program's 2")
    }

    @Test func afterAResetUnderTheKernelOurHeldInstanceIsUpdatedInPlaceEvenWithEveryNumberTaken() throws {
        // The kernel still lists our 2 (and others hold 1 and 3): it is ours, not "taken by other programs".
        let (session, kernel, _) = try session(addSteps(instance: 2))
        try session.restore()
        #expect(session.plan?.handles == [2])
        #expect(kernel.remainingSteps == 0)
    }
}

@Suite struct LegacyOnlyAdapterTests {
    /// Read Advertising Features of a controller without extended advertising: no secondary
    /// PHY, no TX power, intervals and duration accepted (Linux 6.1 with `btvirt -L`).
    static let legacyFeatures: ScriptedKernel.Step = {
        var parameters: [UInt8] = []
        parameters.appendLE(UInt32(0x0001_F07F))
        parameters += [31, 31, 3, 0]
        return completes(ReadAdvertisingFeatures(), returning: parameters)
    }()

    func steps(instance: UInt8, units: UInt32, seconds: UInt16, data: [UInt8] = referenceData) -> [ScriptedKernel.Step] {
        [completes(AddExtendedAdvertisingParameters(instance: instance, flags: [.intervalParameters, .durationParameter],
                                                    duration: seconds, minimumInterval: units, maximumInterval: units),
                   returning: [instance, 0x00, 31, 31]),
         completes(try! AddExtendedAdvertisingData(instance: instance, advertisingData: data), returning: [instance])]
    }

    @Test func theKernelsIntervalIsReportedAndAnIntervalItIgnoresIsAWarning() throws {
        let kernel = ScriptedKernel([Self.legacyFeatures] + steps(instance: 1, units: 32, seconds: 1))
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon], intervalUnits: 32))
        var warnings: [String] = []
        advertiser.warn = { warnings.append($0) }
        let plan = try advertiser.start()
        #expect(plan.kernelInterval == 100...150)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("the interval 20 ms cannot be honoured") == true, "\(warnings)")
        #expect(warnings.first?.contains("raw HCI access advertises every 20 ms") == true)
        #expect(kernel.remainingSteps == 0)
    }

    @Test func theDefaultIntervalIsInTheKernelsRangeAndConnectableKeepsItsOwn() throws {
        let kernel = ScriptedKernel([Self.legacyFeatures] + steps(instance: 1, units: 160, seconds: 1))
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon]))
        var warnings: [String] = []
        advertiser.warn = { warnings.append($0) }
        #expect(try advertiser.start().kernelInterval == 100...150)
        #expect(warnings.isEmpty)
    }

    @Test func rotationIsEachInstancesDurationInWholeSeconds() throws {
        let second = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650003C5")
        var withMinor3 = referenceBeacon
        if case var .iBeacon(ibeacon) = withMinor3 { ibeacon.minor = 3; withMinor3 = .iBeacon(ibeacon) }
        let kernel = ScriptedKernel([Self.legacyFeatures] + steps(instance: 1, units: 160, seconds: 1)
                                    + [{ var step = Self.legacyFeatures
                                         var parameters: [UInt8] = []
                                         parameters.appendLE(UInt32(0x0001_F07F))
                                         parameters += [31, 31, 3, 1, 1]
                                         step.answers = [MgmtEvent.commandComplete(opcode: .readAdvertisingFeatures, status: .success,
                                                                                   returnParameters: parameters).packet(index: 0)]
                                         return step }()]
                                    + steps(instance: 2, units: 160, seconds: 1, data: second))
        let advertiser = ManagedAdvertiser(client: MgmtClient(transport: kernel, index: 0),
                                           options: AdvertisingOptions(beacons: [referenceBeacon, withMinor3],
                                                                       rotationPeriod: .milliseconds(500)))
        var warnings: [String] = []
        advertiser.warn = { warnings.append($0) }
        let plan = try advertiser.start()
        #expect(plan.handles == [1, 2])
        #expect(kernel.remainingSteps == 0, "each instance's duration is 1 s")
        #expect(warnings.contains { $0.contains("each beacon's turn is 1 s") }, "\(warnings)")
    }
}

@Suite struct AdapterWaitTests {
    @Test func anAdapterThatIsNotThereIsWaitedForUntilASignal() throws {
        // These machines have no Bluetooth: hci7 is never there.
        var pipe: [Int32] = [0, 0]
        #expect(Foundation.pipe(&pipe) == 0)
        defer { close(pipe[0]); close(pipe[1]) }
        var seen: [AdapterAvailability] = []
        var ticks = 0
        let start = ContinuousClock.now
        let usable = AdapterWait.untilUsable(.kernel(index: 7), bringingUp: false, interrupt: pipe[0], interval: .milliseconds(20),
                                             waiting: { seen.append($0) },
                                             tick: { ticks += 1; if ticks == 3 { _ = write(pipe[1], "x", 1) } })
        #expect(!usable, "the signal ended the wait")
        #expect(seen == [.gone], "said once")
        #expect(ticks == 3)
        #expect(start.duration(to: .now) < .seconds(2))
        #expect(AdapterWait.lack(index: 7, bringingUp: true) == .gone, "--up cannot bring up what is not there")
        // An adapter named by its address is missing the same way while none has the address.
        let address = try BluetoothAddress(parsing: "00:AA:01:07:00:00")
        #expect(AdapterWait.lack(.adapter(address: address), bringingUp: true) == .gone)
        #expect(AdapterWait.lack(.tcp(host: "127.0.0.1", port: 1), bringingUp: false) == nil, "not a kernel adapter")
    }
}
