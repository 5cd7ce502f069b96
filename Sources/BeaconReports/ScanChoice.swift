// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking

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
                         filter: ScanFilter, unknown: () -> Void, beacon: (Int, Double?) -> Void) {
        guard filter.accepts(address: report.address) else { return }
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
