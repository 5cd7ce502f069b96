// swift-tools-version: 6.1
// beacon-emit: BLE beacons (iBeacon, AltBeacon, Eddystone) from Linux, and the codec behind them.
// SPDX-License-Identifier: GPL-2.0-or-later

import PackageDescription

let package = Package(
    name: "beacon-emit",
    products: [
        .library(name: "AdvertisementCodec", targets: ["AdvertisementCodec"]),
        .library(name: "BeaconTracking", targets: ["BeaconTracking"]),
        .library(name: "BeaconReports", targets: ["BeaconReports"]),
        // Beacons on the air and scans from a Swift program: `BeaconAdvertisement`,
        // `AdvertisementScanner.reports(on:)`.
        .library(name: "BeaconHost", targets: ["BeaconHost"]),
        .library(name: "BeaconRig", targets: ["BeaconRig"]),
        .library(name: "BeaconMetrics", targets: ["BeaconMetrics"]),
        .executable(name: "beacon-emit", targets: ["BeaconEmitter"]),
        .executable(name: "codec-fuzzer", targets: ["CodecFuzzer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        // AES-128 for Eddystone-EID (the block function of its _CryptoExtras): BoringSSL's, never
        // written here.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // The Prometheus text exposition (metric types, HELP lines, escaping) for --metrics.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Pure Swift: advertising data, beacon payloads, HCI packets, H4 framing. No C, no I/O.
        .target(name: "AdvertisementCodec"),
        // Thin C shims over BlueZ's libbluetooth for kernel HCI sockets.
        .target(
            name: "CHCI",
            linkerSettings: [.linkedLibrary("bluetooth")]
        ),
        // Linux headers Swift's Glibc module leaves out (epoll, timerfd) and the signal handler,
        // for LinuxSystem only.
        .target(name: "CLinux"),
        // glibc 2.38's C23 strtol family, sscanf, strlcpy and strlcat, for the release binary linked
        // against an older glibc (arm64, Debian 12's), which the Swift runtime's static libraries
        // call; empty where the C library has them. Linked into beacon-emit, imported by no source.
        .target(name: "CGlibcCompat"),
        // The one system-call layer: a typed descriptor whose every call retries EINTR, returns
        // "would block" as a value and names the call in its errors; poll, epoll, timerfd,
        // signals. Nothing else calls read, write, poll or close.
        .target(name: "LinuxSystem", dependencies: ["CLinux"]),
        // Pure Swift over the codec: reports, ranging, RSSI windows, the tracker and regions.
        // No C, no I/O: what a capture's replay and a live scan share.
        .target(name: "BeaconTracking", dependencies: ["AdvertisementCodec"]),
        // The host side: transports (kernel socket, H4 over TCP or serial), the command engine,
        // the advertising flow. The kernel socket transport is its only file importing CHCI.
        .target(
            name: "BeaconHost",
            dependencies: ["AdvertisementCodec", "BeaconTracking", "LinuxSystem", "CHCI",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "_CryptoExtras", package: "swift-crypto")]
        ),
        // What `decode` and `scan` do with what they read: captures (btsnoop, pcap, pcapng) read
        // and replayed, text decoded, beacons tracked and filtered, and the lines and JSON lines
        // written. For any Swift program that replays a capture or decodes a log.
        // Needs no Bluetooth library: it links neither BeaconHost nor libbluetooth.
        .target(
            name: "BeaconReports",
            dependencies: ["AdvertisementCodec", "BeaconTracking", "LinuxSystem"]
        ),
        // Scripted test rigs: scenarios (steps, expectations, a timeline) run against a stage that
        // advertises and a second device that observes. For `beacon-emit run` and Swift test suites.
        .target(
            name: "BeaconRig",
            dependencies: ["AdvertisementCodec", "BeaconTracking", "BeaconHost", "BeaconReports", "LinuxSystem",
                           .product(name: "Yams", package: "Yams")]
        ),
        // An emitter's Prometheus metrics (what it reports, its control requests, its canary,
        // the process) and the HTTP endpoint that serves them from the emitter's own loop.
        .target(
            name: "BeaconMetrics",
            dependencies: ["BeaconHost", "LinuxSystem", .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        .executableTarget(
            name: "BeaconEmitter",
            dependencies: [
                "AdvertisementCodec",
                "BeaconTracking",
                "BeaconHost",
                "BeaconReports",
                "BeaconRig",
                "BeaconMetrics",
                "LinuxSystem",
                "CGlibcCompat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // libFuzzer driver over every parser, and over the host's sessions fed a controller's
        // byte stream; only meaningful when built with -DFUZZING.
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: ["AdvertisementCodec", "BeaconTracking", "BeaconHost", "BeaconMetrics", "BeaconReports", "BeaconRig",
                           "LinuxSystem"]
        ),
        // The README's Swift examples, compiled as they are shown (ReadmeTests compares them).
        .executableTarget(name: "ExampleCodec", dependencies: ["AdvertisementCodec"], path: "Examples/Codec"),
        .executableTarget(name: "ExampleReplay", dependencies: ["BeaconReports"], path: "Examples/Replay"),
        .executableTarget(name: "ExampleAdvertise", dependencies: ["AdvertisementCodec", "BeaconHost"],
                          path: "Examples/Advertise"),
        .executableTarget(name: "ExampleBroadcast", dependencies: ["AdvertisementCodec", "BeaconHost"],
                          path: "Examples/Broadcast"),
        .executableTarget(name: "ExampleScan", dependencies: ["BeaconHost", "BeaconTracking"], path: "Examples/Scan"),
        .testTarget(
            name: "AdvertisementCodecTests",
            dependencies: ["AdvertisementCodec"]
        ),
        .testTarget(
            name: "BeaconHostTests",
            dependencies: ["BeaconHost", "BeaconTracking", "LinuxSystem", "AdvertisementCodec"]
        ),
        // The tracking and the system layer tested alone: what the arm64 suite runs of them
        // without building the host and swift-crypto for arm64 (scripts/arm64-test).
        .testTarget(name: "BeaconTrackingTests", dependencies: ["BeaconTracking", "AdvertisementCodec"]),
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"]),
        .testTarget(
            name: "BeaconReportsTests",
            dependencies: ["BeaconReports", "BeaconTracking", "AdvertisementCodec"]
        ),
        .testTarget(
            name: "BeaconRigTests",
            dependencies: ["BeaconRig", "BeaconHost", "BeaconTracking", "AdvertisementCodec"]
        ),
        .testTarget(name: "GlibcCompatTests", dependencies: ["CGlibcCompat"]),

        .testTarget(
            name: "BeaconEmitterTests",
            dependencies: ["BeaconEmitter", "BeaconReports", "BeaconTracking", "BeaconHost", "BeaconMetrics", "LinuxSystem",
                           "AdvertisementCodec", .product(name: "Yams", package: "Yams")],
            // Read by path (#filePath) in the replay tests, not bundled.
            exclude: ["Fixtures"]
        ),
    ]
)

// BEACON_EMIT_TEST_TARGETS=A,B: only those test targets, for a build of some suites alone
// (scripts/arm64-test cross-builds the suites where arm64 can differ, not every one).
if let only = Context.environment["BEACON_EMIT_TEST_TARGETS"] {
    let kept = Set(only.split(separator: ",").map(String.init))
    package.targets.removeAll { $0.type == .test && !kept.contains($0.name) }
}

// The project's own targets build without a warning on both compilers (the machine's Swift and
// Debian's swiftlang): CI (scripts/test) builds with BEACON_EMIT_WARNINGS_AS_ERRORS=1, which makes
// every warning in them an error. Dependencies are left as they are.
if Context.environment["BEACON_EMIT_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets {
        if ["CHCI", "CLinux", "CGlibcCompat"].contains(target.name) {
            target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-Werror"])]
        } else {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-warnings-as-errors"])]
        }
    }
}
