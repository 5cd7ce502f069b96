// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem
import ArgumentParser
import BeaconHost
import BeaconReports
import Foundation

/// `beacon-emit monitor`: region enter and exit events, with Core Location's semantics.
struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Monitor a region: report its initial state, then enter and exit events.",
        discussion: """
            The region is --uuid, optionally with --major, optionally with --minor; or your app's \
            own layout (--layout [NAME=]LAYOUT, as the android-beacon-library writes it) with its \
            first identifiers (--id, in order: none for every beacon of the layout). The initial \
            state (inside or outside) is reported once; `enter` follows the first matching \
            sighting while outside, and `exit` only after no matching beacon for --exit-after \
            seconds. Lines (or --json lines) carry timestamps, so a rig script can wait for them.
            """ + guide("scanning.md#monitor") + HelpExamples.text("monitor")
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Region") var filter: ScanFilterOptions
    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("Seconds without a matching beacon before `exit`.", valueName: "seconds"))
    var exitAfter: Double = 30

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Read a capture (btsnoop, pcap, pcapng) instead of a device.", valueName: "file"))
    var replay: String?

    @Flag(help: "Events as JSON lines.")
    var json = false

    @OptionGroup var layout: LayoutRegionOptions

    func validate() throws {
        if layout.layout != nil && filter.uuid != nil { throw ValidationError("--layout and --uuid are two regions: give one") }
        if layout.layout == nil && filter.uuid == nil {
            throw ValidationError("monitor needs a region: --uuid UUID [--major N [--minor N]], or --layout LAYOUT [--id ID ...]")
        }
        if !(exitAfter > 0 && exitAfter < 1e9) { throw ValidationError("--exit-after must be a positive number of seconds") }
        try validateDuration(duration)
        if replay != nil && deviceOptions.device != nil { throw ValidationError("--replay reads a file instead of --device") }
    }

    func run() throws {
        let scanFilter = try filter.filter()
        let layoutRegion = try layout.region()
        let region: RegionName
        if let layoutRegion {
            region = .layout(name: layoutRegion.name, ids: layoutRegion.identifierTexts)
        } else if let beaconRegion = scanFilter.region {
            region = .beacons(beaconRegion)
        } else {
            return
        }
        var monitor = RegionMonitor(start: 0, exitAfter: exitAfter)
        var lastUnix = 0.0
        var unixAtZero: Double? = nil
        let report: ([RegionMonitor.Event]) -> Void = { events in
            for event in events { print(Self.line(event, region: region, unixAtZero: unixAtZero ?? lastUnix, json: json)) }
            if !events.isEmpty { fflushStandardOutput() }
        }
        let handle: (ReportFeed.Timed) -> Bool = { timed in
            lastUnix = timed.unixTime
            if unixAtZero == nil { unixAtZero = timed.unixTime - timed.elapsed }
            report(monitor.tick(now: timed.elapsed))
            if let layoutRegion {
                if scanFilter.accepts(address: timed.report.address),
                   let data = try? AdvertisingData(parsing: timed.report.data), layoutRegion.contains(data) {
                    report(monitor.sighted(at: timed.elapsed))
                }
                return true
            }
            let sightings = scanFilter.accepts(address: timed.report.address) ? (try? timed.report.sightings()) ?? [] : []
            if sightings.contains(where: { scanFilter.accepts($0, rssi: timed.report.rssi) }) {
                report(monitor.sighted(at: timed.elapsed))
            }
            return true
        }
        let tick: (Double) -> Void = { elapsed in report(monitor.tick(now: elapsed)) }
        if let replay {
            do {
                let leftOut = try ReportFeed.replay(path: replay, includeBadCRC: capture.includeBadCRC, handle: handle, tick: tick)
                capture.report(leftOut: leftOut, in: replay)
            } catch {
                Console.error("\(error)")
                throw ExitCode(ReplayError.exitStatus(for: error))
            }
            return
        }
        unixAtZero = Date().timeIntervalSince1970
        do {
            try monitorLive(handle: handle, tick: tick)
        } catch {
            throw fail(error)
        }
    }

    private func monitorLive(handle: (ReportFeed.Timed) -> Bool, tick: (Double) -> Void) throws(HostError) {
        let interrupt = SignalWatcher.install()
        let connection = try deviceOptions.open(progress: { Console.error($0) })
        defer { connection.close() }
        let scanner = AdvertisementScanner(controller: connection.controller)
        scanner.log = { Console.error($0, priority: .warning) }
        defer { ScanSummary.skipped(scanner.controller) }
        try scanner.start(ownsController: connection.ownsController)
        defer { scanner.stop() }
        try scanner.feed(duration: duration, interrupt: interrupt, handle: handle, tick: tick)
    }

    /// The region monitored: a beacon region (UUID, major, minor), or a layout's.
    enum RegionName {
        case beacons(BeaconRegion)
        case layout(name: String, ids: [String])
    }

    static func line(_ event: RegionMonitor.Event, region: RegionName, unixAtZero: Double, json: Bool) -> String {
        let (name, state, at): (String, String?, Double)
        switch event {
        case let .initialState(value, time): (name, state, at) = ("state", value.rawValue, time)
        case let .enter(time): (name, state, at) = ("enter", nil, time)
        case let .exit(time): (name, state, at) = ("exit", nil, time)
        }
        let timestamp = Timestamp.iso8601(unixAtZero + at)
        if json {
            var object = JSONObject()
            object.add("event", name)
            if let state { object.add("state", state) }
            switch region {
            case let .beacons(region):
                if let uuid = region.uuid { object.add("uuid", uuid.uuidString) }
                if let major = region.major { object.add("major", major) }
                if let minor = region.minor { object.add("minor", minor) }
            case let .layout(layout, ids):
                object.add("layout", layout)
                object.add("ids", strings: ids)
            }
            object.add("timestamp", timestamp)
            return object.line
        }
        let text = switch region {
        case let .beacons(region): "\(region)"
        case let .layout(layout, ids): "layout \(TerminalText.escape(layout))" + (ids.isEmpty ? "" : " ids=" + ids.joined(separator: ","))
        }
        return "\(timestamp) \(name)\(state.map { " \($0)" } ?? "") region \(text)"
    }
}
