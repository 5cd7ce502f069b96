// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem
import ArgumentParser
import BeaconHost
import BeaconReports
import Foundation

/// `beacon-emit scan`: what is on the air, decoded and ranged.
struct Scan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for advertisements: decode beacons, range them, show unknown data raw.",
        discussion: """
            On a terminal (without --json) a table of the beacons in range, closest first (with \
            how many reports, how long ago the last and the mean period between them), is \
            refreshed in place; otherwise one line per report. Distances are smoothed over \
            --window seconds (a trimmed mean of RSSI, as the AltBeacon library does). Without \
            --duplicates each distinct advertisement from each sender prints once.

            JSON keys: those of decode --json, then address, addressType, rssi, txPower (null when \
            absent), accuracy (metres, null when unknown), proximity (immediate under 0.5 m, near to 4 m, \
            far, unknown), data (the advertising data as hex), timestamp; an extended report adds \
            primaryPHY and secondaryPHY; a scan response says scanResponse. Data that holds no known \
            beacon is shown raw (type unknown, with error when it does not parse), never dropped. \
            Accuracy follows the Radius Networks curve over the smoothed RSSI.

            --replay FILE reads a capture instead of a device, its format known by its first bytes: btsnoop \
            (btmon -w, Android's HCI snoop log), pcap and pcapng with HCI H4 (link types 201, 187) or an air \
            sniffer's BLE link-layer frames (251, 256). A capture cut short gives the beacons before the cut, \
            then exit 65 naming the byte offset. Memory is bounded: beacons unseen for the window leave the \
            table (at most 4096), the de-duplication set holds at most 4096.
            """ + guide("scanning.md#scan") + HelpExamples.text("scan")
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Filters") var filter: ScanFilterOptions
    @OptionGroup var capture: CaptureOptions

    @Flag(help: "Active scanning (send scan requests); passive by default.")
    var active = false

    @Option(help: ArgumentHelp("Scan interval in ms, 2.5 to 10240.", valueName: "ms"))
    var scanInterval: Double = 10

    @Option(help: ArgumentHelp("Scan window in ms, 2.5 to the interval.", valueName: "ms"))
    var scanWindow: Double = 10

    @Flag(help: "Use legacy scanning commands on a kernel adapter that has extended ones.")
    var legacy = false

    @Flag(help: ArgumentHelp("On an H4 controller (tcp:, serial:), scan with the extended commands where it has them, "
                             + "to hear extended advertising PDUs too (kernel adapters are scanned so by default)."))
    var extended = false

    @Option(help: ArgumentHelp("The PHYs scanned: 1m, or coded (LE Coded as well as LE 1M, with the extended commands: "
                               + "hears long-range advertising too).", valueName: "phy"))
    var phy: AdvertisingOptions.PHY = .le1M

    @Flag(help: "Print every report, not only the first of each distinct advertisement.")
    var duplicates = false

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Read a capture instead of a device: btsnoop (btmon -w, Android HCI snoop log), pcap or pcapng (Wireshark, air sniffers).",
                               valueName: "file"))
    var replay: String?

    @Option(help: ArgumentHelp("Seconds of RSSI averaged for distance.", valueName: "seconds"))
    var window: Double = 20

    @Option(name: .customLong("layout"), help: ArgumentHelp(
        "Your app's own beacon layout, as the android-beacon-library writes it, named with NAME= in front: a report "
        + "printed is read with it too, and a beacon of it printed on a line of its own after it. Repeatable: the "
        + "first that reads it wins. Lines and JSON (not the table), from a device or --replay.",
        valueName: "[name=]layout"))
    var layouts: [String] = []

    @Flag(help: "One JSON object per report per line.")
    var json = false

    func validate() throws {
        if legacy && extended { throw ValidationError("--legacy and --extended exclude each other") }
        if legacy && phy == .coded { throw ValidationError("--phy coded scans with the extended commands: drop --legacy") }
        if replay != nil && phy == .coded { throw ValidationError("--phy coded is for a device's scan, not --replay") }
        for (name, value) in [("--scan-interval", scanInterval), ("--scan-window", scanWindow)] {
            guard AdvertisingOptions.units(milliseconds: value).map({ $0 >= 4 && $0 <= 0x4000 }) == true else {
                throw ValidationError("\(name) must be from 2.5 to 10240 ms, got \(value)")
            }
        }
        if scanWindow > scanInterval { throw ValidationError("--scan-window must not exceed --scan-interval") }
        if !(window > 0 && window <= 3600) { throw ValidationError("--window must be from 0 to 3600 seconds, got \(window)") }
        try validateDuration(duration)
        if replay != nil && deviceOptions.device != nil { throw ValidationError("--replay reads a file instead of --device") }
        if !layouts.isEmpty {
            do {
                _ = try BeaconLayout.named(layouts)
            } catch {
                throw ValidationError("--layout: \(error)")
            }
        }
    }

    func run() throws {
        let filter = try self.filter.filter()
        let printer = ScanPrinter(json: json, table: !json && CurrentProcess.isTerminal(1), duplicates: duplicates,
                                  tracker: BeaconTracker(windowLength: window, ageOut: max(window, 30)))
        printer.layouts = try BeaconLayout.named(layouts)
        var heard = 0
        let handle: (ReportFeed.Timed) -> Bool = { timed in
            heard += 1
            printer.handle(timed, filter: filter)
            return true
        }
        if let replay {
            do {
                let leftOut = try printer.replay(path: replay, filter: filter, includeBadCRC: capture.includeBadCRC)
                printer.finish()
                capture.report(leftOut: leftOut, in: replay)
            } catch {
                printer.flush()
                Console.error("\(error)")
                throw ExitCode(ReplayError.exitStatus(for: error))
            }
            return
        }
        let started = ContinuousClock.now
        do {
            try scanLive(handle: handle, tick: printer.tick)
        } catch {
            throw fail(error)
        }
        printer.finish()
        // Silence is said: a scan that heard nothing printed nothing at all.
        if heard == 0 {
            let seconds = duration.map { $0 == $0.rounded() && $0 < 1e15 ? String(Int($0)) : String($0) }
                ?? "\(started.duration(to: .now).components.seconds)"
            Console.error("heard no advertisement in \(seconds) s on \(deviceOptions.specification): nothing advertises "
                          + "in range, or the adapter does not hear (beacon-emit doctor checks it)", priority: .notice)
        }
    }

    private func scanLive(handle: (ReportFeed.Timed) -> Bool, tick: (Double) -> Void) throws(HostError) {
        let interrupt = SignalWatcher.install()
        let connection = try deviceOptions.open(progress: { Console.error($0) })
        defer { connection.close() }
        if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
        let scanner = AdvertisementScanner(controller: connection.controller)
        scanner.log = { Console.error($0, priority: .warning) }
        defer { ScanSummary.skipped(scanner.controller) }
        try scanner.start(options: .init(active: active,
                                         intervalUnits: UInt16(AdvertisingOptions.units(milliseconds: scanInterval) ?? 16),
                                         windowUnits: UInt16(AdvertisingOptions.units(milliseconds: scanWindow) ?? 16),
                                         extended: extended, codedPHY: phy == .coded),
                          ownsController: connection.ownsController, legacy: legacy)
        defer { scanner.stop() }
        try scanner.feed(duration: duration, interrupt: interrupt, handle: handle, tick: tick)
    }
}
