// SPDX-License-Identifier: GPL-2.0-or-later
// The README's replay example, compiled with the package (ReadmeTests checks they are the same).

import BeaconReports
import Foundation

let path = CommandLine.arguments.dropFirst().first ?? "scan.pcapng"

// Every advertising report of a btsnoop, pcap or pcapng file, with its time.
try ReportFeed.replay(path: path, handle: { timed in
    print(timed.unixTime, timed.report.address, (try? timed.report.sightings()) ?? [])
    return true  // false stops the replay
}, tick: { _ in })

// Or what `scan --replay FILE --json` prints, written to a descriptor of your choice.
let printer = ScanPrinter(json: true, table: false, duplicates: true,
                          descriptor: FileHandle.standardOutput.fileDescriptor)
try printer.replay(path: path, filter: ScanFilter(format: "ibeacon"))
printer.finish()
