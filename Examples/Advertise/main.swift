// SPDX-License-Identifier: GPL-2.0-or-later
// The README's advertising example, compiled with the package (ReadmeTests checks they are the
// same, and runs it on a virtual controller).

import AdvertisementCodec
import Foundation
import BeaconHost

// Two iBeacons on the device named first on the command line (hci0, tcp:HOST:PORT,
// serial:/dev/PATH), the second changed while on the air; both off the air after 5 seconds.
let device = try DeviceSpecification(parsing: CommandLine.arguments.dropFirst().first ?? "hci0")
let uuid = try UUID(beaconText: "39ED98FF2900441A802F9C398FC199D2")
let options = AdvertisingOptions(beacons: [.iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 1)),
                                           .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 2))])
let advertisement = try BeaconAdvertisement.start(.init(device: device, options: options))
try advertisement.update(2, to: .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 3)))  // beacon 2: the second
print("advertising \(advertisement.beacons.count) beacons on \(advertisement.device)")
try advertisement.run(duration: .seconds(5))  // put back after resets; off the air at the end
