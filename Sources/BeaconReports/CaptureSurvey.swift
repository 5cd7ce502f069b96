// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation

/// Reads a capture's advertisers (`replay`): each address with each advertising data it sent,
/// its scan response, PDU type, times, stays (spans), interval and strength. Bounded: at most
/// `mostAdvertisers` advertisers, `mostTimes` report times and `mostSpans` stays each are kept
/// (the rest counted).
public struct CaptureSurvey {
    public static let mostAdvertisers = 4096
    /// The most stays kept per advertiser (with `mostAdvertisers`, at most 8 MiB).
    public static let mostSpans = 128
    /// The shortest silence taken as a going, in seconds (`--gap`).
    public let gap: Double
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
        /// Its stays, split at every silence longer than `gap` (those under the advertiser's
        /// own rule are joined again once its interval is known).
        var spans: [ClosedRange<Double>] = []
        var silencesMerged = 0
    }
    /// The advertisers in the order first heard, and where each is by its key (one hash per report).
    private var collected: [Collected] = []
    private var positions: [Key: Int] = [:]
    private var scanResponses: [BluetoothAddress: [UInt8]] = [:]
    private var start: Double?
    /// Advertisers past `mostAdvertisers`, left out.
    public private(set) var leftOut = 0

    /// - Parameter gap: the shortest silence, in seconds, that may be a going (`Presence.defaultGap`).
    public init(gap: Double = Presence.defaultGap) {
        self.gap = gap.isFinite ? max(0, gap) : Presence.defaultGap
    }

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
        note(time, in: &collected[index])
        if collected[index].times.count < Self.mostTimes {
            collected[index].times.append(time)
            if let rssi = ScanReportRSSI.available(report.rssi) { collected[index].rssi.append(rssi) }
        }
    }

    /// A report at `time` in the advertiser's stays: the latest one goes on, or a silence
    /// longer than `gap` starts another; a time before the latest stay (a capture's clock that
    /// stepped back) joins the stays it touches. Past `mostSpans` the latest silence is joined.
    private func note(_ time: Double, in entry: inout Collected) {
        guard time.isFinite else { return }
        if let last = entry.spans.last, time >= last.lowerBound {
            if time - last.upperBound > gap {
                entry.spans.append(time...time)
            } else if time > last.upperBound {
                entry.spans[entry.spans.count - 1] = last.lowerBound...time
            }
        } else {
            // Out of order (or the first): in its place, joined with the stays within `gap`.
            var merged = time...time
            var kept: [ClosedRange<Double>] = []
            for span in entry.spans {
                if span.upperBound + gap >= merged.lowerBound && merged.upperBound + gap >= span.lowerBound {
                    merged = min(span.lowerBound, merged.lowerBound)...max(span.upperBound, merged.upperBound)
                } else {
                    kept.append(span)
                }
            }
            kept.append(merged)
            entry.spans = kept.sorted { $0.lowerBound < $1.lowerBound }
        }
        if entry.spans.count > Self.mostSpans {
            let last = entry.spans.removeLast()
            entry.spans[entry.spans.count - 1] = entry.spans[entry.spans.count - 1].lowerBound...last.upperBound
            entry.silencesMerged += 1
        }
    }

    /// The capture at `path` read to its end: its survey (`advertisers`, `leftOut`), and how
    /// many link-layer PDUs were left out for a bad CRC.
    /// - Parameter gap: the shortest silence that may be a going (`init(gap:)`).
    /// - Throws: `ReplayError` when it cannot be opened (`unreadable`) or read.
    public static func read(path: String, includeBadCRC: Bool = false,
                            gap: Double = Presence.defaultGap) throws -> (survey: CaptureSurvey, badCRCPackets: Int) {
        let reader = try CaptureReader(path: path, decode: false, name: path, includeBadCRC: includeBadCRC)
        defer { reader.cancel() }
        var survey = CaptureSurvey(gap: gap)
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
            // A silence its own interval explains (missed events) is no going.
            advertiser.spans = Presence.stays(joining: entry.spans, interval: advertiser.interval, gap: gap)
            advertiser.silencesMerged = entry.silencesMerged
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
