// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation

/// Writes scan results to a file descriptor (standard output by default): lines, JSON lines,
/// or a live table (redrawn in place with terminal escapes).
public final class ScanPrinter {
    public let json: Bool
    public let table: Bool
    /// What is tracked and what has been printed.
    private var choice: ScanChoice
    /// Lines are written as each report is handled (live scans), or by `writer` in batches (replays).
    private var output: OutputBuffer
    /// Writes a replay's lines on a thread of its own.
    private var writer: ScanLineWriter?
    /// The sightings of the report being handled (storage reused from report to report).
    private var sightings: [BeaconSighting] = []
    private var lastDraw = -1.0
    /// An app's layouts (`scan --layout`), by name: a report printed is read with them too, and
    /// the first that reads it printed on a line of its own after it.
    public var layouts: [(name: String, layout: BeaconLayout)] = []

    /// - Parameters:
    ///   - json: one JSON object per line, else a line of text per report.
    ///   - table: a table of the beacons in range instead of lines.
    ///   - duplicates: every report, not only the first of each distinct advertisement.
    ///   - tracker: ranges the beacons (its window smooths the distances).
    ///   - descriptor: where to write.
    public init(json: Bool, table: Bool, duplicates: Bool, tracker: BeaconTracker = BeaconTracker(),
                descriptor: Int32 = STDOUT_FILENO) {
        output = OutputBuffer(descriptor: descriptor)
        self.json = json
        self.table = table
        choice = ScanChoice(table: table, duplicates: duplicates, tracker: tracker)
    }

    public func handle(_ timed: ReportFeed.Timed, filter: ScanFilter) {
        let report = ReportView(timed.report)
        var parseError: CodecError? = nil
        do {
            try ScanReport.sightings(inData: report.data, address: report.address, addressType: report.addressType,
                                     rssi: report.rssi, txPower: report.txPower, into: &sightings)
        } catch {
            parseError = error
        }
        var printed = false
        choice.choose(report, sightings: sightings[...], elapsed: timed.elapsed, filter: filter, unknown: {
            ScanLine.writeUnknown(report, error: parseError, unixTime: timed.unixTime, to: &output, json: json)
            printed = true
        }, beacon: { index, accuracy in
            ScanLine.writeBeacon(sightings[index], accuracy: accuracy, data: report.data, phys: report.phys,
                                 unixTime: timed.unixTime, to: &output, json: json)
            printed = true
        })
        if printed, !layouts.isEmpty {
            ScanLine.writeLayout(layouts, report: report, unixTime: timed.unixTime, to: &output, json: json)
        }
        if table { tick(timed.elapsed) }
        output.flush()
    }

    /// Replays a capture: read and decoded on one thread (`CaptureReader`), tracked on this
    /// one, written on a third (`ScanLineWriter`), a batch at a time; the output is the same as
    /// handling one report at a time.
    /// - Returns: how many link-layer PDUs were left out for a bad CRC.
    @discardableResult
    public func replay(path: String, filter: ScanFilter, includeBadCRC: Bool = false) throws -> Int {
        let reader = try CaptureReader(path: path, decode: true, includeBadCRC: includeBadCRC)
        defer { reader.cancel() }
        if !table { writer = ScanLineWriter(json: json, descriptor: output.descriptor) }
        // Tracked in a local value, not this object's property: no exclusive access checked
        // at run time per report.
        var choice = ScanChoice(table: table, duplicates: false, tracker: BeaconTracker())
        let layouts = self.layouts
        swap(&choice, &self.choice)
        defer { swap(&choice, &self.choice) }
        while true {
            var lines = ReplayLines(batch: reader.next(), layouts: layouts)
            let batch = lines.batch
            lines.lines.reserveCapacity(batch.sightings.count + batch.reports.count)
            for event in batch.events {
                for index in event.reports {
                    // Only a report without beacons, printed once, is told apart by its data.
                    let sightings = batch.sightings(index)
                    let report = batch.report(index, withData: sightings.isEmpty && !choice.duplicates)
                    var printed = false
                    choice.choose(report, sightings: sightings, elapsed: event.elapsed,
                                  filter: filter,
                                  unknown: {
                                      lines.lines.append(.unknown(report: index, unixTime: event.unixTime))
                                      printed = true
                                  },
                                  beacon: { sighting, accuracy in
                                      lines.lines.append(.beacon(report: index, sighting: sighting, accuracy: accuracy,
                                                                 unixTime: event.unixTime))
                                      printed = true
                                  })
                    // As a live scan: a report printed is read with the app's layouts too.
                    if printed && !layouts.isEmpty { lines.lines.append(.layout(report: index, unixTime: event.unixTime)) }
                }
                choice.tracker.prune(now: event.elapsed)
                if table { draw(choice.tracker, at: event.elapsed) }
            }
            writer?.submit(lines)
            if let failure = batch.failure { throw failure }
            if batch.isLast { return batch.badCRCPackets }
        }
    }

    /// Waits until every line is written.
    public func flush() {
        writer?.drain()
        output.flush()
    }

    public func tick(_ elapsed: Double) {
        choice.tracker.prune(now: elapsed)
        draw(choice.tracker, at: elapsed)
    }

    /// Redraws the table, at most twice a second.
    private func draw(_ tracker: BeaconTracker, at elapsed: Double) {
        now = elapsed
        guard table, elapsed - lastDraw >= 0.5 else { return }
        lastDraw = elapsed
        draw(tracker)
    }

    /// The scan's clock at the last report or tick (seconds), for the table's "seen" column.
    private var now = 0.0

    /// Redraws the table of beacons in range in place.
    private func draw(_ tracker: BeaconTracker) {
        output.flush()
        output.append(line: "\u{1B}[H\u{1B}[2J" + Self.tableLines(tracker, now: now).joined(separator: "\n"))
        output.flush()
    }

    /// The table: for each beacon in range (closest first, the first 40) its distance,
    /// proximity, smoothed RSSI, how many reports, how long ago the last, the mean period
    /// between its reports (an estimate of its interval: missed events lengthen it), its address
    /// and the beacon.
    static func tableLines(_ tracker: BeaconTracker, now: Double) -> [String] {
        var lines = ["beacons in range, closest first (\(tracker.entries.count))",
                     "distance  proximity  rssi   count   seen     every     address            beacon"]
        func column(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        for entry in tracker.ranged.prefix(40) {
            let distance = entry.accuracy == nil ? "   ?    " : column(Distance.metres(entry.accuracy), 8)
            let rssi = entry.smoothedRSSI.map { String(Int($0.rounded())) } ?? "?"
            let seen = String(format: "%.1f s", max(0, now - entry.lastSeen))
            let every = entry.reports > 1
                ? "\(Int(((entry.lastSeen - entry.firstSeen) / Double(entry.reports - 1) * 1000).rounded())) ms" : "?"
            lines.append("\(distance)  \(column(entry.proximity.rawValue, 9))  \(column(rssi, 5))  \(column("\(entry.reports)", 6))  "
                         + "\(column(seen, 7))  \(column(every, 8))  \(entry.sighting.address?.description ?? "?")  "
                         + SightingFormatter.text(BeaconSighting(beacon: entry.sighting.beacon)))
        }
        return lines
    }

    /// The table as it stands when the scan ends.
    public func finish() {
        if table { draw(choice.tracker) }
        flush()
    }
}
