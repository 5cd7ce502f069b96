// SPDX-License-Identifier: GPL-2.0-or-later
// The README's codec example, compiled with the package (ReadmeTests checks they are the same).

import AdvertisementCodec
import Foundation

let beacon = IBeacon(proximityUUID: try UUID(beaconText: "39ED98FF2900441A802F9C398FC199D2"),
                     major: 101, minor: 2)
let bytes = beacon.advertisingData.bytes                    // 30 bytes
let command = try LESetAdvertisingData(data: bytes).packet  // HCI command, .h4Bytes for the wire
let packet = try PacketDecoder.decode(bytes)                // detects the input kind
let data = try AdvertisingData(parsing: bytes)              // unknown AD types kept byte for byte
print(HexText.format(command.h4Bytes), packet, data.structures.count)
