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
            printer.writeInBackground()
            do {
                try ReportFeed.replay(path: replay, decode: true, handle: { decoded in
                    printer.handle(ReportView(decoded.report), sightings: decoded.sightings, parseError: decoded.failure,
                                   elapsed: decoded.elapsed, unixTime: decoded.unixTime, filter: filter)
                    return true
                }, tick: printer.tick)
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
    let duplicates: Bool
    var tracker: BeaconTracker
    /// Lines are written as each report is handled (live scans), or by a writer of their own
    /// in batches (replays).
    private let output = OutputBuffer(descriptor: STDOUT_FILENO)
    private var writer: ScanLineWriter?
    /// Lines not written yet.
    private var batch = ScanBatch()
    /// The sightings of the report being handled (storage reused from report to report).
    private var sightings: [BeaconSighting] = []
    /// What has been printed once: a set and a ring of at most `printedLimit` keys, oldest forgotten first.
    private var printed = Set<PrintedKey>()
    private var printedOrder: [PrintedKey] = []
    private var printedNext = 0
    private static let printedLimit = 4096
    private var lastDraw = -1.0

    private enum PrintedKey: Hashable {
        case beacon(BluetoothAddress, BeaconIdentity)
        case data(BluetoothAddress, [UInt8])
    }

    init(json: Bool, table: Bool, duplicates: Bool, tracker: BeaconTracker) {
        self.json = json
        self.table = table
        self.duplicates = duplicates
        self.tracker = tracker
    }

    /// Writes lines from now on in batches on a thread of their own (a replay without a table).
    func writeInBackground() {
        guard !table else { return }
        writer = ScanLineWriter(json: json)
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
        handle(report, sightings: sightings[...], parseError: parseError, elapsed: timed.elapsed,
               unixTime: timed.unixTime, filter: filter)
    }

    /// Handles a report whose beacons are decoded (none, with `parseError`, when its data did not decode).
    func handle(_ report: ReportView, sightings: ArraySlice<BeaconSighting>, parseError: CodecError?,
                elapsed: Double, unixTime: Double, filter: ScanFilter) {
        if sightings.isEmpty {
            guard filter.accepts(nil, rssi: report.rssi),
                  firstTime(.data(report.address, Array(report.data))) else { return }
            if !table { batch.appendUnknown(report, error: parseError, unixTime: unixTime) }
        }
        for sighting in sightings where filter.accepts(sighting, rssi: report.rssi) {
            let accuracy = tracker.observeAccuracy(sighting, at: elapsed)
            guard !table else { continue }
            guard firstTime(.beacon(report.address, BeaconTracker.identity(of: sighting))) else { continue }
            batch.appendBeacon(sighting, accuracy: accuracy, report: report, unixTime: unixTime)
        }
        if table { tick(elapsed) }
        if let writer {
            if batch.count >= ScanLineWriter.batchSize { submit(to: writer) }
        } else {
            batch.write(to: output, json: json)
            batch.removeAll()
            output.flush()
        }
    }

    private func submit(to writer: ScanLineWriter) {
        writer.submit(batch)
        batch = ScanBatch()
    }

    /// Writes out what is collected, and waits until it is written.
    func flush() {
        if let writer {
            submit(to: writer)
            writer.drain()
        }
        output.flush()
    }

    /// Whether this (sender, advertisement) has not been printed yet; always true with --duplicates.
    /// Remembers at most 4096, oldest forgotten first, so memory stays bounded.
    private func firstTime(_ makeKey: @autoclosure () -> PrintedKey) -> Bool {
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

    func tick(_ elapsed: Double) {
        tracker.prune(now: elapsed)
        guard table, elapsed - lastDraw >= 0.5 else { return }
        lastDraw = elapsed
        draw()
    }

    /// Redraws the table of beacons in range in place.
    private func draw() {
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
        if table { draw() }
        flush()
    }
}
