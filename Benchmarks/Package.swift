// swift-tools-version: 6.1
// SPDX-License-Identifier: GPL-2.0-or-later
//
// The codec's in-process benchmarks (ordo-one/benchmark), kept in their own package so that
// building and testing beacon-emit never resolves the benchmark harness. Run them with
// `scripts/bench` or `swift package --package-path Benchmarks benchmark`.

import Foundation
import PackageDescription

// The parent package's identity is its directory's name, whatever the checkout is called.
let parent = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let parentIdentity = parent.lastPathComponent.lowercased()

let package = Package(
    name: "beacon-emit-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The practical limit: a hand-written C decoder of the 30-byte iBeacon advertisement.
        .target(name: "CLimitDecoder", cSettings: [.unsafeFlags(["-O3"])]),
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "AdvertisementCodec", package: parentIdentity),
                .product(name: "Benchmark", package: "benchmark"),
                "CLimitDecoder",
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
