// swift-tools-version: 6.1
// beacon-emit: BLE beacons (iBeacon, AltBeacon, Eddystone) from Linux, and the codec behind them.
// SPDX-License-Identifier: GPL-2.0-or-later

import PackageDescription

let package = Package(
    name: "beacon-emit",
    products: [
        .library(name: "AdvertisementCodec", targets: ["AdvertisementCodec"]),
        .executable(name: "beacon-emit", targets: ["BeaconEmitter"]),
        .executable(name: "codec-fuzzer", targets: ["CodecFuzzer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Pure Swift: advertising data, beacon payloads, HCI packets, H4 framing. No C, no I/O.
        .target(name: "AdvertisementCodec"),
        // Thin C shims over BlueZ's libbluetooth for kernel HCI sockets.
        .target(
            name: "CHCI",
            linkerSettings: [.linkedLibrary("bluetooth")]
        ),
        .executableTarget(
            name: "BeaconEmitter",
            dependencies: [
                "AdvertisementCodec",
                "CHCI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // libFuzzer driver over every parser; only meaningful when built with -DFUZZING.
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: ["AdvertisementCodec"]
        ),
        .testTarget(
            name: "AdvertisementCodecTests",
            dependencies: ["AdvertisementCodec"]
        ),
        .testTarget(
            name: "BeaconEmitterTests",
            dependencies: ["BeaconEmitter", "AdvertisementCodec"]
        ),
    ]
)
