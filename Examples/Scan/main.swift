// SPDX-License-Identifier: GPL-2.0-or-later
// The README's scanning example, compiled with the package (ReadmeTests checks they are the
// same, and runs it on a virtual controller).

import BeaconHost
import BeaconTracking

// The beacons a device hears, as an asynchronous sequence; the scan stops with the loop.
let device = try DeviceSpecification(parsing: CommandLine.arguments.dropFirst().first ?? "hci0")
var heard = 0
for try await report in AdvertisementScanner.reports(on: device) {
    // Data that does not parse (anyone on the air can send it) has no beacons: skipped.
    for sighting in (try? report.sightings()) ?? [] { print(report.address, sighting.beacon) }
    heard += 1
    if heard == 10 { break }
}
