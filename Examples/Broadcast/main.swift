// SPDX-License-Identifier: GPL-2.0-or-later
// The README's async advertising example, compiled with the package (ReadmeTests checks they
// are the same, and runs it on a virtual controller).

import AdvertisementCodec
import Foundation
import BeaconHost

// The same two iBeacons from async code: changed with `await` while on the air, put back after
// resets meanwhile, off the air when the body returns, throws, or its task is cancelled.
let device = try DeviceSpecification(parsing: CommandLine.arguments.dropFirst().first ?? "hci0")
let uuid = try UUID(beaconText: "39ED98FF2900441A802F9C398FC199D2")
let options = AdvertisingOptions(beacons: [.iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 1)),
                                           .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 2))])
try await BeaconBroadcast.withBeacons(.init(device: device, options: options)) { beacons in
    try await beacons.update(2, to: .iBeacon(IBeacon(proximityUUID: uuid, major: 101, minor: 3)))
    print("advertising \(beacons.beacons.count) beacons on \(beacons.device)")
    try await Task.sleep(for: .seconds(5))
}
