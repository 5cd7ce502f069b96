// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem
import Dispatch
import Foundation

/// Reads a btsnoop capture on a thread of its own, a few batches of reports ahead of the
/// thread that handles them (reading and parsing are a third of a replay's work). At most
/// eight batches wait, slack that keeps both cores of a small machine busy; memory stays
/// bounded however long the capture.
public final class CaptureReader: @unchecked Sendable {
    /// Events read from the capture, in order, with their reports.
    public struct Batch: Sendable {
        public struct Event: Sendable {
            public internal(set) var elapsed: Double
            public internal(set) var unixTime: Double
            /// Which of `reports` the event carried.
            public internal(set) var reports: Range<Int>
        }

        public internal(set) var events: [Event] = []
        /// The reports, each with `data` left empty: its bytes are `bytes[dataRanges[index]]`.
        public internal(set) var reports: [AdvertisingReportFields] = []
        public internal(set) var dataRanges: [Range<Int>] = []
        public internal(set) var bytes: [UInt8] = []
        /// When decoding: each report's beacons, `sightings[sightingRanges[index]]`, or why its
        /// data did not decode.
        public internal(set) var sightings: [BeaconSighting] = []
        public internal(set) var sightingRanges: [Range<Int>] = []
        public internal(set) var failures: [CodecError?] = []
        /// Set on the last batch when reading stopped on an error.
        public internal(set) var failure: (any Error)?
        public internal(set) var isLast = false
        /// On the last batch: the link-layer PDUs left out because their CRC failed
        /// (`PcapParser.badCRCPackets`), for the reader to say so.
        public internal(set) var badCRCPackets = 0

        /// A batch with room for about `reports` reports (growing an array copies it).
        init(reservingFor reports: Int, decode: Bool) {
            events.reserveCapacity(reports)
            self.reports.reserveCapacity(reports + 64)
            dataRanges.reserveCapacity(reports + 64)
            bytes.reserveCapacity(reports * 40)
            if decode {
                sightings.reserveCapacity(reports + 64)
                sightingRanges.reserveCapacity(reports + 64)
                failures.reserveCapacity(reports + 64)
            }
        }

        /// Report `index` as `scan` takes it, its data a slice of `bytes` (or left empty when
        /// the caller has no use for it: no reference to `bytes` taken and dropped).
        func report(_ index: Int, withData: Bool = true) -> ReportView {
            ReportView(reports[index], data: withData ? bytes[dataRanges[index]] : [])
        }

        /// The advertising data of report `index`.
        public func data(_ index: Int) -> ArraySlice<UInt8> {
            bytes[dataRanges[index]]
        }

        /// The beacons decoded from report `index` (when decoding).
        public func sightings(_ index: Int) -> ArraySlice<BeaconSighting> {
            sightings[sightingRanges[index]]
        }
    }

    private static let reportsPerBatch = 2048
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var ready: [Batch] = []
    private var cancelled = false
    private let available = DispatchSemaphore(value: 0)
    private let space = DispatchSemaphore(value: 8)
    private let finished = DispatchSemaphore(value: 0)

    /// How errors name the file ("--replay PATH").
    private let name: String

    /// Opens the capture at `path` and starts reading it. With `decode`, the beacons in each
    /// report are decoded here too.
    /// - Parameter name: how errors name the file (default `--replay PATH`).
    /// - Throws: `ReplayError` when the file cannot be opened.
    /// - Parameter includeBadCRC: hand out link-layer PDUs whose CRC failed too (they are left
    ///   out and counted: `Batch.badCRCPackets`).
    public init(path: String, decode: Bool, name: String? = nil, includeBadCRC: Bool = false) throws {
        self.name = name ?? "--replay \(path)"
        let file: FileHandle
        do {
            // A capture is a regular file: a FIFO (which would wait for a writer), a device or a
            // directory is refused before a byte is read.
            file = FileHandle(fileDescriptor: try FileSystem.openForReading(path), closeOnDealloc: true)
        } catch {
            throw ReplayError(message: "\(self.name): cannot read the file: " + FileSystem.whyNotOpened(error, path: path),
                              unreadable: true)
        }
        DispatchQueue.global().async { [self] in
            readCapture(file, path: path, decode: decode, includeBadCRC: includeBadCRC)
            try? file.close()
            finished.signal()
        }
    }

    /// What to say when `count` damaged PDUs were left out of `name`; nil for none.
    public static func badCRCNotice(_ count: Int, in name: String) -> String? {
        guard count > 0 else { return nil }
        return "\(name): \(count) PDU\(count == 1 ? "" : "s") with a bad CRC left out (damaged on the air: "
            + "--include-bad-crc keeps them)"
    }

    /// The next batch, waiting for it. After the batch marked last, there are no more.
    public func next() -> Batch {
        available.wait()
        let batch = lock.withLock { ready.removeFirst() }
        space.signal()
        return batch
    }

    /// Stops reading (if it has not stopped) and waits until the file is closed.
    public func cancel() {
        lock.withLock { cancelled = true }
        space.signal()
        finished.wait()
    }

    /// Decodes the beacons of a report into the batch.
    private static func decode(_ fields: AdvertisingReportFields, into batch: inout Batch, data: inout [UInt8]) {
        var failure: CodecError? = nil
        let start = batch.sightings.count
        do throws(CodecError) {
            // From a copy indexed from 0: offsets in errors count from the start of the data.
            data.removeAll(keepingCapacity: true)
            data.append(contentsOf: fields.data)
            try ScanReport.appendSightings(inData: data[...], address: fields.address, addressType: fields.addressType,
                                           rssi: ScanReport.available(fields.rssi),
                                           txPower: fields.reportedTxPower.flatMap(ScanReport.available),
                                           to: &batch.sightings)
        } catch {
            failure = error
        }
        batch.sightingRanges.append(start..<batch.sightings.count)
        batch.failures.append(failure)
    }

    /// Hands a batch over; false once cancelled.
    private func deliver(_ batch: Batch) -> Bool {
        space.wait()
        let accepted = lock.withLock {
            if cancelled { return false }
            ready.append(batch)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Reads the capture in the format its first bytes name (btsnoop, pcap, pcapng), whatever
    /// the file is called.
    private func readCapture(_ file: FileHandle, path: String, decode: Bool, includeBadCRC: Bool) {
        // Read into one buffer of our own (a Data per read was allocated, grown and copied).
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var count = 0
        do {
            count = try read(file, into: &chunk, path: path)
            let start = chunk[..<count]
            if start.starts(with: Array("btsnoop".utf8)) || count < 4 {
                try readCapture(file, path: path, decode: decode, parser: BTSnoopParser(), chunk: &chunk, count: count)
            } else if PcapParser.format(of: start) != nil {
                var parser = PcapParser()
                parser.includeBadCRC = includeBadCRC
                try readCapture(file, path: path, decode: decode, parser: parser, chunk: &chunk, count: count)
            } else {
                // What it holds is not said: the file may be any the user can read (/etc/passwd).
                throw ReplayError(message: "\(name): not a btsnoop, pcap or pcapng capture (it does not start as one does)")
            }
        } catch {
            var batch = Batch(reservingFor: 0, decode: decode)
            batch.failure = error
            batch.isLast = true
            _ = deliver(batch)
        }
    }

    /// Reads from the file into `chunk`; 0 at its end.
    private func read(_ file: FileHandle, into chunk: inout [UInt8], path: String) throws -> Int {
        do {
            guard case let .done(count) = try Descriptor(file.fileDescriptor).read(into: &chunk) else { return 0 }
            return count
        } catch {
            throw ReplayError(message: "\(name): cannot read the file: \(SystemCallError.message(error.errno))")
        }
    }

    /// Reads the capture with `parser`, starting with the `count` bytes already in `chunk`.
    /// Reading errors end the last batch (delivered here); the first throws only when the
    /// batch cannot be handed over.
    private func readCapture<Parser: CapturePacketSource>(_ file: FileHandle, path: String, decode: Bool, parser: Parser,
                                                          chunk: inout [UInt8], count firstCount: Int) throws {
        var batch = Batch(reservingFor: Self.reportsPerBatch, decode: decode)
        var data: [UInt8] = []
        var parser = parser
        var first: Int64?
        var reports: [AdvertisingReportFields] = []
        var packet = BTSnoopParser.PacketView(timestamp: 0, type: .event, body: [])
        var count = firstCount
        do {
            while true {
                if count == 0 { break }
                parser.append(chunk[..<count])
                while try parser.nextPacket(into: &packet) {
                    guard packet.type == .event else { continue }
                    // Advertising reports are read from the bytes as they are; other events are
                    // parsed whole. Events that do not parse are skipped, as a scanner would.
                    do {
                        if try !LEMetaEvent.advertisingReports(inEvent: packet.body, into: &reports) {
                            _ = try HCIEvent(parsing: packet.body)
                        }
                    } catch {
                        continue
                    }
                    let origin = first ?? packet.timestamp
                    first = origin
                    let start = batch.reports.count
                    for index in reports.indices {
                        let dataStart = batch.bytes.count
                        batch.bytes.append(contentsOf: reports[index].data)
                        batch.dataRanges.append(dataStart..<batch.bytes.count)
                        if decode { Self.decode(reports[index], into: &batch, data: &data) }
                        // The fields without the data (a slice of the parser's buffer, held apart).
                        batch.reports.append(AdvertisingReportFields(
                            address: reports[index].address, addressType: reports[index].addressType,
                            rssi: reports[index].rssi, reportedTxPower: reports[index].reportedTxPower, data: [],
                            kind: reports[index].kind))
                    }
                    // The reports are slices of the parser's buffer: let go of them before it changes.
                    reports.removeAll(keepingCapacity: true)
                    batch.events.append(Batch.Event(
                        elapsed: BTSnoopParser.seconds(from: origin, to: packet.timestamp),
                        unixTime: BTSnoopParser.unixTime(packet.timestamp),
                        reports: start..<batch.reports.count))
                    if batch.reports.count >= Self.reportsPerBatch {
                        guard deliver(batch) else { return }
                        batch = Batch(reservingFor: Self.reportsPerBatch, decode: decode)
                    }
                }
                count = try read(file, into: &chunk, path: path)
            }
            try parser.finish()
        } catch let error as CodecError {
            batch.failure = ReplayError(message: "\(name): \(error)")
        } catch {
            batch.failure = error
        }
        batch.badCRCPackets = parser.badCRCPackets
        batch.isLast = true
        _ = deliver(batch)
    }
}

