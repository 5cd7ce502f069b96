// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

/// One advertiser of a capture, as `replay` puts it back on the air: an address and its
/// advertising data, with what the capture says of it.
public struct CapturedAdvertiser: Sendable, Equatable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var data: [UInt8]
    /// The last scan response heard from its address, where the capture holds one.
    public var scanResponse: [UInt8]?
    /// The PDU type of its reports (connectable, scannable, legacy).
    public var kind: AdvertisingPDUKind
    /// When it was first and last heard, in seconds from the capture's first report.
    public var first: Double
    public var last: Double
    /// Its reports (scan responses not counted).
    public var reports: Int
    /// Its advertising interval in ms, estimated from its report times (`CaptureSurvey.interval`);
    /// nil with fewer than two reports.
    public var interval: Double?
    /// The median RSSI of its reports, where the scanner gave one.
    public var rssi: Int?
}

/// Reads a capture's advertisers (`replay`): each address with each advertising data it sent,
/// its scan response, PDU type, times, interval and strength. Bounded: at most
/// `mostAdvertisers` advertisers and `mostTimes` report times each are kept (the rest counted).
public struct CaptureSurvey {
    public static let mostAdvertisers = 4096
    /// Enough report times for an interval (the first ones heard); with `mostAdvertisers`, at
    /// most 2 million numbers, 32 MiB, whatever the capture holds.
    static let mostTimes = 512

    private struct Key: Hashable {
        var address: BluetoothAddress
        var data: [UInt8]
    }
    private struct Collected {
        var advertiser: CapturedAdvertiser
        var times: [Double] = []
        var rssi: [Int] = []
    }
    /// The advertisers in the order first heard, and where each is by its key (one hash per report).
    private var collected: [Collected] = []
    private var positions: [Key: Int] = [:]
    private var scanResponses: [BluetoothAddress: [UInt8]] = [:]
    private var start: Double?
    /// Advertisers past `mostAdvertisers`, left out.
    public private(set) var leftOut = 0

    public init() {}

    /// Takes one report heard at `elapsed` seconds (the capture's clock).
    public mutating func add(_ report: AdvertisingReportFields, data: ArraySlice<UInt8>, at elapsed: Double) {
        let origin = start ?? elapsed
        start = origin
        let time = elapsed - origin
        if report.isScanResponse {
            if scanResponses.count < Self.mostAdvertisers || scanResponses[report.address] != nil {
                scanResponses[report.address] = Array(data)
            }
            return
        }
        let key = Key(address: report.address, data: Array(data))
        let index: Int
        if let known = positions[key] {
            index = known
        } else {
            guard collected.count < Self.mostAdvertisers else {
                leftOut += 1
                return
            }
            index = collected.count
            positions[key] = index
            collected.append(Collected(advertiser: CapturedAdvertiser(
                address: report.address, addressType: report.addressType, data: key.data, scanResponse: nil,
                kind: report.kind, first: time, last: time, reports: 0, interval: nil, rssi: nil)))
        }
        // A capture's clock may step back (records out of order): the span is the earliest
        // report to the latest.
        collected[index].advertiser.first = min(collected[index].advertiser.first, time)
        collected[index].advertiser.last = max(collected[index].advertiser.last, time)
        collected[index].advertiser.reports += 1
        if collected[index].times.count < Self.mostTimes {
            collected[index].times.append(time)
            if let rssi = ScanReportRSSI.available(report.rssi) { collected[index].rssi.append(rssi) }
        }
    }

    /// The capture at `path` read to its end: its survey (`advertisers`, `leftOut`), and how
    /// many link-layer PDUs were left out for a bad CRC.
    /// - Throws: `ReplayError` when it cannot be opened (`unreadable`) or read.
    public static func read(path: String, includeBadCRC: Bool = false) throws -> (survey: CaptureSurvey, badCRCPackets: Int) {
        let reader = try CaptureReader(path: path, decode: false, name: path, includeBadCRC: includeBadCRC)
        defer { reader.cancel() }
        var survey = CaptureSurvey()
        while true {
            let batch = reader.next()
            for event in batch.events {
                for index in event.reports { survey.add(batch.reports[index], data: batch.data(index), at: event.elapsed) }
            }
            if let failure = batch.failure { throw failure }
            if batch.isLast { return (survey, batch.badCRCPackets) }
        }
    }

    /// The advertisers, in the order first heard.
    public var advertisers: [CapturedAdvertiser] {
        collected.map { entry in
            var advertiser = entry.advertiser
            advertiser.scanResponse = scanResponses[advertiser.address]
            advertiser.interval = Self.interval(times: entry.times)
            let sorted = entry.rssi.sorted()
            advertiser.rssi = sorted.isEmpty ? nil : sorted[sorted.count / 2]
            return advertiser
        }
    }

    /// An advertising interval in ms from the times (seconds) an advertiser was heard, robust to
    /// what a scanner does to them: reports closer than 10 ms apart are one event heard twice
    /// (on two channels); a gap of several periods is missed events, counted as that many; each
    /// event comes 0 to 10 ms late (advDelay), 5 ms on average, which is taken off. Nil with
    /// fewer than two events.
    public static func interval(times: [Double]) -> Double? {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= 0.010 }) ?? true { events.append(time) }
        let gaps = zip(events.dropFirst(), events).map { $0 - $1 }
        guard !gaps.isEmpty else { return nil }
        // The shortest usual gap: one period (a low percentile, so that a few early events do not set it).
        let sorted = gaps.sorted()
        let single = sorted[sorted.count / 5]
        let periods = gaps.map { gap in gap / max(1, (gap / single).rounded()) }.sorted()
        let period = periods[periods.count / 2]
        return min(10_240, max(20, (period - 0.005) * 1000))
    }
}

/// RSSI as HCI gives it: 127 is "not available".
enum ScanReportRSSI {
    static func available(_ rssi: Int8) -> Int? { rssi == 127 ? nil : Int(rssi) }
}
