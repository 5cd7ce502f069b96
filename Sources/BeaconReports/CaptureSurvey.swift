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
    static let mostTimes = 4096

    private struct Key: Hashable {
        var address: BluetoothAddress
        var data: [UInt8]
    }
    private struct Collected {
        var advertiser: CapturedAdvertiser
        var times: [Double] = []
        var rssi: [Int] = []
    }
    private var collected: [Key: Collected] = [:]
    private var order: [Key] = []
    private var scanResponses: [BluetoothAddress: [UInt8]] = [:]
    private var start: Double?
    /// Advertisers past `mostAdvertisers`, left out.
    public private(set) var leftOut = 0
    /// Reports read, scan responses included.
    public private(set) var reportCount = 0

    public init() {}

    /// Takes one report heard at `elapsed` seconds (the capture's clock).
    public mutating func add(_ report: AdvertisingReportFields, data: ArraySlice<UInt8>, at elapsed: Double) {
        reportCount += 1
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
        if collected[key] == nil {
            guard collected.count < Self.mostAdvertisers else {
                leftOut += 1
                return
            }
            collected[key] = Collected(advertiser: CapturedAdvertiser(
                address: report.address, addressType: report.addressType, data: key.data, scanResponse: nil,
                kind: report.kind, first: time, last: time, reports: 0, interval: nil, rssi: nil))
            order.append(key)
        }
        collected[key]!.advertiser.last = time
        collected[key]!.advertiser.reports += 1
        if collected[key]!.times.count < Self.mostTimes {
            collected[key]!.times.append(time)
            if let rssi = ScanReportRSSI.available(report.rssi) { collected[key]!.rssi.append(rssi) }
        }
    }

    /// The advertisers of the capture at `path`, read to its end.
    /// - Throws: `ReplayError` when it cannot be opened or read.
    public static func advertisers(inFile path: String, includeBadCRC: Bool = false) throws -> [CapturedAdvertiser] {
        let reader = try CaptureReader(path: path, decode: false, name: path, includeBadCRC: includeBadCRC)
        defer { reader.cancel() }
        var survey = CaptureSurvey()
        while true {
            let batch = reader.next()
            for event in batch.events {
                for index in event.reports { survey.add(batch.reports[index], data: batch.data(index), at: event.elapsed) }
            }
            if let failure = batch.failure { throw failure }
            if batch.isLast { return survey.advertisers }
        }
    }

    /// The advertisers, in the order first heard.
    public var advertisers: [CapturedAdvertiser] {
        order.compactMap { key in
            guard var entry = collected[key] else { return nil }
            entry.advertiser.scanResponse = scanResponses[key.address]
            entry.advertiser.interval = Self.interval(times: entry.times)
            let sorted = entry.rssi.sorted()
            entry.advertiser.rssi = sorted.isEmpty ? nil : sorted[sorted.count / 2]
            return entry.advertiser
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
