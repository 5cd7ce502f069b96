// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import Foundation

/// `beacon-emit scan`: what is on the air, decoded and ranged.
struct Scan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for advertisements: decode beacons, range them, show unknown data raw.",
        discussion: """
            On a terminal (without --json) a table of the beacons in range, closest first, is \
            refreshed in place; otherwise one line per report. Distances are smoothed over \
            --window seconds (a trimmed mean of RSSI, as the AltBeacon library does). Without \
            --duplicates each distinct advertisement from each sender prints once.
            """
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Filters") var filter: ScanFilterOptions

    @Flag(help: "Active scanning (send scan requests); passive by default.")
    var active = false

    @Option(help: ArgumentHelp("Scan interval in ms, 2.5 to 10240.", valueName: "ms"))
    var scanInterval: Double = 10

    @Option(help: ArgumentHelp("Scan window in ms, 2.5 to the interval.", valueName: "ms"))
    var scanWindow: Double = 10

    @Flag(help: "Use legacy scanning commands on a kernel adapter that has extended ones.")
    var legacy = false

    @Flag(help: "Print every report, not only the first of each distinct advertisement.")
    var duplicates = false

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Read a btsnoop capture (btmon -w, Android HCI snoop log) instead of a device.",
                               valueName: "file"))
    var replay: String?

    @Option(help: ArgumentHelp("Seconds of RSSI averaged for distance.", valueName: "seconds"))
    var window: Double = 20

    @Flag(help: "One JSON object per report per line.")
    var json = false

    func validate() throws {
        for (name, value) in [("--scan-interval", scanInterval), ("--scan-window", scanWindow)] {
            guard AdvertisingOptions.units(milliseconds: value).map({ $0 >= 4 && $0 <= 0x4000 }) == true else {
                throw ValidationError("\(name) must be from 2.5 to 10240 ms, got \(value)")
            }
        }
        if scanWindow > scanInterval { throw ValidationError("--scan-window must not exceed --scan-interval") }
        if !(window > 0 && window <= 3600) { throw ValidationError("--window must be from 0 to 3600 seconds, got \(window)") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
        if replay != nil && deviceOptions.device != nil { throw ValidationError("--replay reads a file instead of --device") }
    }

    func run() throws {
        let filter = try self.filter.filter()
        let printer = ScanPrinter(json: json, table: !json && isatty(STDOUT_FILENO) == 1, duplicates: duplicates,
                                  tracker: BeaconTracker(windowLength: window, ageOut: max(window, 30)))
        let handle: (ReportFeed.Timed) -> Bool = { timed in
            printer.handle(timed, filter: filter)
            return true
        }
        if let replay {
            do {
                try printer.replay(path: replay, filter: filter)
            } catch {
                printer.flush()
                Console.error("\(error)")
                throw ExitStatus.dataError
            }
            printer.finish()
            return
        }
        do {
            try scanLive(handle: handle, tick: printer.tick)
        } catch {
            throw fail(error)
        }
        printer.finish()
    }

    private func scanLive(handle: (ReportFeed.Timed) -> Bool, tick: (Double) -> Void) throws(HostError) {
        let interrupt = SignalWatcher.install()
        let connection = try deviceOptions.open(progress: { Console.error($0) })
        defer { connection.close() }
        if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
        let scanner = AdvertisementScanner(controller: connection.controller)
        try scanner.start(options: .init(active: active,
                                         intervalUnits: UInt16(AdvertisingOptions.units(milliseconds: scanInterval) ?? 16),
                                         windowUnits: UInt16(AdvertisingOptions.units(milliseconds: scanWindow) ?? 16)),
                          ownsController: connection.ownsController, legacy: legacy)
        defer { scanner.stop() }
        try ReportFeed.live(scanner, duration: duration, interrupt: interrupt, handle: handle, tick: tick)
    }
}

/// Prints scan results: lines, JSON lines, or a live table.
final class ScanPrinter {
    let json: Bool
    let table: Bool
    /// What is tracked and what has been printed.
    private var choice: ScanChoice
    /// Lines are written as each report is handled (live scans), or by `writer` in batches (replays).
    private var output = OutputBuffer(descriptor: STDOUT_FILENO)
    /// Writes a replay's lines on a thread of its own.
    private var writer: ScanLineWriter?
    /// The sightings of the report being handled (storage reused from report to report).
    private var sightings: [BeaconSighting] = []
    private var lastDraw = -1.0

    init(json: Bool, table: Bool, duplicates: Bool, tracker: BeaconTracker) {
        self.json = json
        self.table = table
        choice = ScanChoice(table: table, duplicates: duplicates, tracker: tracker)
    }

    func handle(_ timed: ReportFeed.Timed, filter: ScanFilter) {
        let report = ReportView(timed.report)
        var parseError: CodecError? = nil
        do {
            try ScanReport.sightings(inData: report.data, address: report.address, addressType: report.addressType,
                                     rssi: report.rssi, txPower: report.txPower, into: &sightings)
        } catch {
            parseError = error
        }
        choice.choose(report, sightings: sightings[...], elapsed: timed.elapsed, filter: filter, unknown: {
            ScanLine.writeUnknown(report, error: parseError, unixTime: timed.unixTime, to: &output, json: json)
        }, beacon: { index, accuracy in
            ScanLine.writeBeacon(sightings[index], accuracy: accuracy, data: report.data, unixTime: timed.unixTime,
                                 to: &output, json: json)
        })
        if table { tick(timed.elapsed) }
        output.flush()
    }

    /// Replays a capture: read and decoded on one thread (`CaptureReader`), tracked on this
    /// one, written on a third (`ScanLineWriter`), a batch at a time; the output is the same as
    /// handling one report at a time.
    func replay(path: String, filter: ScanFilter) throws {
        let reader = try CaptureReader(path: path, decode: true)
        defer { reader.cancel() }
        if !table { writer = ScanLineWriter(json: json) }
        // Tracked in a local value, not this object's property: no exclusive access checked
        // at run time per report.
        var choice = ScanChoice(table: table, duplicates: false, tracker: BeaconTracker())
        swap(&choice, &self.choice)
        defer { swap(&choice, &self.choice) }
        while true {
            var lines = ReplayLines(batch: reader.next())
            let batch = lines.batch
            lines.lines.reserveCapacity(batch.sightings.count + batch.reports.count)
            for event in batch.events {
                for index in event.reports {
                    // Only a report without beacons, printed once, is told apart by its data.
                    let sightings = batch.sightings(index)
                    let report = batch.report(index, withData: sightings.isEmpty && !choice.duplicates)
                    choice.choose(report, sightings: sightings, elapsed: event.elapsed,
                                  filter: filter,
                                  unknown: { lines.lines.append(.unknown(report: index, unixTime: event.unixTime)) },
                                  beacon: { sighting, accuracy in
                                      lines.lines.append(.beacon(report: index, sighting: sighting, accuracy: accuracy,
                                                                 unixTime: event.unixTime))
                                  })
                }
                choice.tracker.prune(now: event.elapsed)
                if table { draw(choice.tracker, at: event.elapsed) }
            }
            writer?.submit(lines)
            if let failure = batch.failure { throw failure }
            if batch.isLast { return }
        }
    }

    /// Waits until every line is written.
    func flush() {
        writer?.drain()
        output.flush()
    }

    func tick(_ elapsed: Double) {
        choice.tracker.prune(now: elapsed)
        draw(choice.tracker, at: elapsed)
    }

    /// Redraws the table, at most twice a second.
    private func draw(_ tracker: BeaconTracker, at elapsed: Double) {
        guard table, elapsed - lastDraw >= 0.5 else { return }
        lastDraw = elapsed
        draw(tracker)
    }

    /// Redraws the table of beacons in range in place.
    private func draw(_ tracker: BeaconTracker) {
        output.flush()
        var lines = ["\u{1B}[H\u{1B}[2J" + "beacons in range, closest first (\(tracker.entries.count))",
                     "distance  proximity  rssi   address            beacon"]
        for entry in tracker.ranged.prefix(40) {
            let distance = entry.accuracy < 0 ? "   ?    " : Distance.metres(entry.accuracy).padding(toLength: 8, withPad: " ", startingAt: 0)
            let rssi = entry.smoothedRSSI.map { String(Int($0.rounded())) } ?? "?"
            lines.append("\(distance)  \(entry.proximity.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))  "
                         + "\(rssi.padding(toLength: 5, withPad: " ", startingAt: 0))  "
                         + "\(entry.sighting.address?.description ?? "?")  "
                         + SightingFormatter.text(BeaconSighting(beacon: entry.sighting.beacon)))
        }
        print(lines.joined(separator: "\n"))
        fflushStandardOutput()
    }

    /// The table as it stands when the scan ends.
    func finish() {
        if table { draw(choice.tracker) }
        flush()
    }
}

/// What `scan` does with each report: tracks its beacons, and decides which lines it prints.
struct ScanChoice {
    let table: Bool
    let duplicates: Bool
    var tracker: BeaconTracker
    /// What has been printed once: a set and a ring of at most `printedLimit` keys, oldest forgotten first.
    private var printed = Set<PrintedKey>()
    private var printedOrder: [PrintedKey] = []
    private var printedNext = 0
    private static let printedLimit = 4096

    private enum PrintedKey: Hashable {
        case beacon(BluetoothAddress, BeaconIdentity)
        case data(BluetoothAddress, [UInt8])
    }

    init(table: Bool, duplicates: Bool, tracker: BeaconTracker) {
        self.table = table
        self.duplicates = duplicates
        self.tracker = tracker
    }

    /// Decides what a report shows: it tracks the beacons that pass the filter, then calls
    /// `beacon` with each one's index in `sightings` and distance, or `unknown` for a report
    /// that holds none, as long as they are to be printed (not in a table, not printed before).
    mutating func choose(_ report: ReportView, sightings: ArraySlice<BeaconSighting>, elapsed: Double,
                         filter: ScanFilter, unknown: () -> Void, beacon: (Int, Double) -> Void) {
        if sightings.isEmpty {
            guard filter.acceptsNoBeacon(rssi: report.rssi),
                  firstTime(.data(report.address, Array(report.data))) else { return }
            if !table { unknown() }
        }
        for index in sightings.indices {
            // Read in place, not copied out (a copy of an Eddystone sighting retains its arrays).
            guard filter.accepts(sightings[index], rssi: report.rssi) else { continue }
            let accuracy = tracker.observeAccuracy(sightings[index], at: elapsed)
            guard !table else { continue }
            guard firstTime(.beacon(report.address, BeaconTracker.identity(of: sightings[index]))) else { continue }
            beacon(index, accuracy)
        }
    }

    /// Whether this (sender, advertisement) has not been printed yet; always true with --duplicates.
    /// Remembers at most 4096, oldest forgotten first, so memory stays bounded.
    private mutating func firstTime(_ makeKey: @autoclosure () -> PrintedKey) -> Bool {
        if duplicates { return true }
        let key = makeKey()
        guard printed.insert(key).inserted else { return false }
        if printedOrder.count < Self.printedLimit {
            printedOrder.append(key)
        } else {
            printed.remove(printedOrder[printedNext])
            printedOrder[printedNext] = key
            printedNext = (printedNext + 1) % Self.printedLimit
        }
        return true
    }
}
