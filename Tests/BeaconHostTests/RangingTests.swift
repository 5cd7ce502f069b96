// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import BeaconTracking
import Testing

@Suite struct RangingTests {
    @Test func referenceVectors() throws {
        #expect(abs(try #require(Ranging.accuracy(rssi: -60, measuredPower: -59)) - 1.1352362990362899) < 1e-12)
        #expect(abs(try #require(Ranging.accuracy(rssi: -3, measuredPower: -3)) - 1.01076) < 1e-4)
        #expect(abs(try #require(Ranging.accuracy(rssi: -3, measuredPower: -4)) - 0.056313514709472656) < 1e-12)
    }

    @Test func zeroRSSIIsUnknown() {
        #expect(Ranging.accuracy(rssi: 0, measuredPower: -59) == nil)
        #expect(Proximity(accuracy: nil) == .unknown)
        #expect(Proximity(accuracy: -1) == .unknown)
    }

    /// A measured power of 0 or above is what anyone on the air can send (the byte is signed):
    /// the curve does not hold there, and raised to the 10th power it overflowed every integer.
    @Test(arguments: [Int8(0), 1, 5, 127])
    func measuredPowerAtOrAboveZeroIsUnknown(power: Int8) {
        for rssi in [-128.0, -127, -60, -1] {
            #expect(Ranging.accuracy(rssi: rssi, measuredPower: Int(power)) == nil, "rssi \(rssi), power \(power)")
        }
    }

    @Test func positiveOrNonFiniteRSSIIsUnknown() {
        for rssi in [1.0, 20, 127, .infinity, -.infinity, .nan] {
            #expect(Ranging.accuracy(rssi: rssi, measuredPower: -59) == nil, "rssi \(rssi)")
        }
    }

    /// Every RSSI and measured power a report and a payload can carry gives a finite distance
    /// or none (an Eddystone frame's 1 m figure goes down to -128 - 41 dBm); the largest (-128 dBm
    /// against -1 dBm) still fits the hundredths written out.
    @Test func everyByteValueGivesAFiniteDistanceOrNone() {
        var largest = 0.0
        for rssi in Int8.min...Int8.max {
            for power in (Int(Int8.min) - EddystoneFrame.zeroToOneMetreLoss)...Int(Int8.max) {
                guard let metres = Ranging.accuracy(rssi: Double(rssi), measuredPower: power) else { continue }
                #expect(metres.isFinite && metres >= 0, "rssi \(rssi), power \(power): \(metres)")
                largest = max(largest, metres)
            }
        }
        #expect(largest > 1e15 && largest * 100 < 0x1p63)
    }

    @Test(arguments: [(0.0, Proximity.immediate), (0.4999, .immediate), (0.5, .near), (4.0, .near),
                      (4.0001, .far), (-0.1, .unknown)])
    func proximityBoundaries(accuracy: Double, expected: Proximity) {
        #expect(Proximity(accuracy: accuracy) == expected)
    }
}

@Suite struct RSSIWindowTests {
    @Test func trimmedMeanDropsTopAndBottomTenPercent() {
        var window = RSSIWindow(length: 20)
        // Ten samples: -100 and -10 are the outliers dropped; the mean of the other eight is -60.
        for (index, rssi) in [-100, -60, -60, -60, -60, -60, -60, -60, -60, -10].enumerated() {
            window.add(rssi, at: Double(index))
        }
        #expect(window.mean == -60)
    }

    @Test func fewerThanTenSamplesAreAllKept() {
        var window = RSSIWindow(length: 20)
        window.add(-50, at: 0)
        window.add(-70, at: 1)
        #expect(window.mean == -60)
    }

    @Test func samplesOlderThanTheWindowAreForgotten() {
        var window = RSSIWindow(length: 20)
        window.add(-90, at: 0)
        window.add(-50, at: 21)
        #expect(window.count == 1)
        #expect(window.mean == -50)
        window.prune(now: 50)
        #expect(window.mean == nil)
    }
}

@Suite struct RegionTests {
    let uuid = UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!
    var beacon: Beacon { .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 2)) }

    @Test func uuidMajorMinorNarrowTheRegion() {
        #expect(BeaconRegion(uuid: uuid).matches(beacon))
        #expect(BeaconRegion(uuid: uuid, major: 101).matches(beacon))
        #expect(BeaconRegion(uuid: uuid, major: 101, minor: 2).matches(beacon))
        #expect(!BeaconRegion(uuid: uuid, major: 101, minor: 3).matches(beacon))
        #expect(!BeaconRegion(uuid: uuid, major: 100).matches(beacon))
        #expect(!BeaconRegion(uuid: UUID()).matches(beacon))
    }

    @Test func altBeaconMatchesOnItsIdentifiers() {
        #expect(BeaconRegion(uuid: uuid, major: 7).matches(.altBeacon(AltBeacon(id1: uuid, id2: 7, id3: 9))))
    }
}

@Suite struct RegionMonitorTests {
    @Test func initialInsideThenExitAfterSilenceThenEnter() {
        var monitor = RegionMonitor(start: 0, exitAfter: 30)
        #expect(monitor.sighted(at: 0.5) == [.initialState(.inside, at: 0.5)])
        #expect(monitor.sighted(at: 10) == [])
        #expect(monitor.tick(now: 39.9) == [])
        #expect(monitor.tick(now: 40) == [.exit(at: 40)])
        #expect(monitor.tick(now: 100) == [])
        #expect(monitor.sighted(at: 101) == [.enter(at: 101)])
    }

    @Test func initialOutsideOnlyOnceThenEnter() {
        var monitor = RegionMonitor(start: 0, exitAfter: 5, initialWindow: 2)
        #expect(monitor.tick(now: 1) == [])
        #expect(monitor.tick(now: 2) == [.initialState(.outside, at: 2)])
        #expect(monitor.tick(now: 3) == [])
        #expect(monitor.sighted(at: 4) == [.enter(at: 4)])
        #expect(monitor.nextDeadline == 9)
    }

    @Test func briefGapsDoNotExit() {
        var monitor = RegionMonitor(start: 0, exitAfter: 30)
        _ = monitor.sighted(at: 0)
        for second in stride(from: 1.0, through: 120, by: 20) {
            #expect(monitor.tick(now: second) == [])
            #expect(monitor.sighted(at: second) == [])
        }
    }
}

@Suite struct BeaconTrackerTests {
    func sighting(minor: UInt16, rssi: Int8) -> BeaconSighting {
        BeaconSighting(beacon: .iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                                major: 1, minor: minor)),
                       address: BluetoothAddress(UInt64(minor)), addressType: .publicDevice, rssi: rssi)
    }

    @Test func rangesClosestFirst() {
        var tracker = BeaconTracker()
        tracker.observe(sighting(minor: 1, rssi: -80), at: 0)
        tracker.observe(sighting(minor: 2, rssi: -50), at: 0)
        tracker.observe(sighting(minor: 3, rssi: -65), at: 0)
        #expect(tracker.ranged.map { $0.sighting.address?.value } == [2, 3, 1])
        #expect(tracker.ranged.first?.proximity == .immediate)
    }

    @Test func entriesAgeOutAndCapacityIsBounded() {
        var tracker = BeaconTracker(ageOut: 10, capacity: 100)
        for minor in 0..<1000 { tracker.observe(sighting(minor: UInt16(minor), rssi: -60), at: Double(minor) / 100) }
        // Full tables drop their least recently seen eighth (12 of 100) at once.
        #expect(tracker.entries.count <= 100 && tracker.entries.count > 100 - 12)
        let minors = tracker.entries.values.compactMap { entry -> UInt16? in
            if case let .iBeacon(beacon) = entry.sighting.beacon { beacon.minor } else { nil }
        }
        #expect(minors.min() == UInt16(1000 - tracker.entries.count), "the newest beacons are the ones kept")
        tracker.prune(now: 1000)
        #expect(tracker.entries.isEmpty)
    }

    /// A frame that identifies nothing, or whose content moves, is kept by its format and sender:
    /// telemetry and an EID from one sender are two beacons, and a frame type the codec does
    /// not decode is a third (each asked of its format, none of them a catch-all).
    @Test func framesWithoutIdentifiersAreKeptByFormatAndSender() throws {
        let sender = BluetoothAddress(0xC0FFEE)
        let tlm = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 3000, advertisingPDUCount: 1, uptimeDeciseconds: 1)))
        let movedTLM = Beacon.eddystone(.tlm(EddystoneTLM(batteryMillivolts: 2990, advertisingPDUCount: 9, uptimeDeciseconds: 8)))
        let eid = Beacon.eddystone(.eid(try EddystoneEID(txPowerAt0m: -20, eid: Array(repeating: 7, count: 8))))
        let other = Beacon.eddystone(.other(frameType: 0x50, payload: [1, 2, 3]))
        var tracker = BeaconTracker()
        for (index, beacon) in [tlm, movedTLM, eid, other, tlm].enumerated() {
            tracker.observe(BeaconSighting(beacon: beacon, address: sender, addressType: .randomDevice, rssi: -60), at: Double(index))
        }
        #expect(Set(tracker.entries.keys) == [.sender("eddystone-tlm", sender), .sender("eddystone-eid", sender),
                                              .sender("eddystone", sender)])
        #expect(tracker.entries[.sender("eddystone-tlm", sender)]?.reports == 3)
    }

    @Test func smoothedRSSIUsesTheWindow() {
        var tracker = BeaconTracker(windowLength: 20)
        tracker.observe(sighting(minor: 1, rssi: -50), at: 0)
        let entry = tracker.observe(sighting(minor: 1, rssi: -70), at: 1)
        #expect(entry.smoothedRSSI == -60)
        #expect(entry.reports == 2)
    }
}

@Suite struct BTSnoopParserTests {
    /// A two-record H4 capture written out by hand.
    let capture = hex("""
        62 74 73 6E 6F 6F 70 00  00 00 00 01  00 00 03 EA   // "btsnoop", version 1, datalink 1002
        00 00 00 04  00 00 00 04  00 00 00 00  00 00 00 00  // record 1: 4 bytes, sent
        00 E0 3F 3A 2B 5C 40 00                              // timestamp
        01 03 0C 00                                          // H4 command: Reset
        00 00 00 07  00 00 00 07  00 00 00 03  00 00 00 00  // record 2: 7 bytes, received event
        00 E0 3F 3A 2B 5C 40 10                              // 16 microseconds later
        04 0E 04 01 03 0C 00                                 // H4 event: Command Complete
        """)

    @Test func readsRecordsSplitAtEveryPoint() throws {
        for cut in 0...capture.count {
            var parser = BTSnoopParser()
            var records: [BTSnoopParser.Record] = []
            parser.append(capture[..<cut])
            while let record = try parser.next() { records.append(record) }
            parser.append(capture[cut...])
            while let record = try parser.next() { records.append(record) }
            #expect(records.map(\.packet) == [H4Packet(type: .command, body: hex("03 0C 00")),
                                              H4Packet(type: .event, body: hex("0E 04 01 03 0C 00"))], "cut \(cut)")
            #expect(records.last.map { $0.timestamp - records[0].timestamp } == 16)
        }
    }

    /// One packet kept and refilled record after record reads what a fresh one per record
    /// reads, fed in chunks of every size (its body lets go of the buffer before it changes).
    @Test func aKeptPacketReadsWhatFreshOnesRead() throws {
        let twice = capture + capture.dropFirst(16)
        for size in 1...twice.count {
            var parser = BTSnoopParser()
            var packet = BTSnoopParser.PacketView(timestamp: 0, type: .aclData, body: [])
            var read: [H4Packet] = []
            var stamps: [Int64] = []
            var start = 0
            while start < twice.count {
                parser.append(twice[start..<min(start + size, twice.count)])
                start += size
                while try parser.nextPacket(into: &packet) {
                    read.append(H4Packet(type: packet.type, body: Array(packet.body)))
                    stamps.append(packet.timestamp)
                }
                #expect(packet.body.isEmpty)
            }
            let command = H4Packet(type: .command, body: hex("03 0C 00"))
            let event = H4Packet(type: .event, body: hex("0E 04 01 03 0C 00"))
            #expect(read == [command, event, command, event], "chunks of \(size)")
            #expect(stamps.map { $0 - stamps[0] } == [0, 16, 0, 16], "chunks of \(size)")
        }
    }

    @Test func rejectsSomethingElse() {
        var parser = BTSnoopParser()
        parser.append(Array("not a capture at all".utf8))
        #expect(throws: CodecError.self) { _ = try parser.next() }
    }

    /// A record claiming more than an HCI packet can hold is refused where its length field is,
    /// counted in the whole file, after the records before it were read (here: fed a byte at a
    /// time, so the buffer has been emptied and refilled).
    @Test func tooLongARecordNamesItsLengthAndPlace() throws {
        var bytes = capture
        let second = 16 + 24 + 4  // the second record's header
        bytes.replaceSubrange((second + 4)..<(second + 8), with: hex("00 01 11 45"))  // 69957 bytes
        var parser = BTSnoopParser()
        var failure: CodecError?
        var records = 0
        for byte in bytes {
            parser.append([byte])
            do {
                while try parser.next() != nil { records += 1 }
            } catch {
                failure = error
                break
            }
        }
        #expect(records == 1)
        let error = try #require(failure)
        #expect(error.offset == second + 4)
        #expect(error.description.contains("included length"), "\(error)")
        #expect(error.description.contains("69957"), "\(error)")
    }

    @Test func linuxMonitorOpcodesPickThePacketType() throws {
        var bytes = capture
        bytes[14] = 0x07 // datalink 2001 (0x07D1)
        bytes[15] = 0xD1
        bytes[16 + 11] = 0x02 // record 1 flags: index 0, opcode 2 (command), no H4 type byte
        var parser = BTSnoopParser()
        parser.append(bytes.prefix(16 + 24) + hex("03 0C 00 00"))
        let record = try parser.next()
        #expect(record?.packet.type == .command)
    }
}

@Suite struct RSSIWindowAgainstSortTests {
    /// Adds `steps` random samples, `gap` seconds apart at most, and after every `every`-th
    /// holds the window to the definition computed from scratch: sort the samples of the last
    /// `length` seconds, drop a tenth at each end, average the rest. Returns the samples kept.
    @discardableResult
    func matchSorting(length: Double, steps: Int, gap: Double, rssi range: ClosedRange<Int>,
                      every: Int = 1) -> Int {
        var generator = SystemRandomNumberGenerator()
        var window = RSSIWindow(length: length)
        var kept: [(time: Double, rssi: Int)] = []
        var time = 0.0
        for step in 0..<steps {
            time += Double.random(in: 0...gap, using: &generator)
            let rssi = Int.random(in: range, using: &generator)
            window.add(rssi, at: time)
            kept.append((time, rssi))
            guard step % every == every - 1 else { continue }
            kept.removeAll { $0.time < time - length }
            let sorted = kept.map(\.rssi).sorted()
            let drop = sorted.count / 10
            let middle = sorted[drop..<(sorted.count - drop)]
            #expect(window.mean == Double(middle.reduce(0, +)) / Double(middle.count))
            #expect(window.count == kept.count)
        }
        return kept.count
    }

    /// The window keeps its values in order as samples come and go; its mean must be the
    /// definition's after every sample.
    @Test func incrementalMeanMatchesSortingEveryTime() {
        matchSorting(length: 5, steps: 2000, gap: 0.8, rssi: -100 ... -30)
    }

    /// A beacon advertising fast fills the window with a thousand samples and more, with many
    /// equal values: added and dropped in the middle of the order, the mean must still be the
    /// definition's.
    @Test func largeWindowsMatchSorting() {
        #expect(matchSorting(length: 20, steps: 6000, gap: 0.02, rssi: -90 ... -60, every: 100) > 1000)
    }
}
