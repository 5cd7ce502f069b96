// SPDX-License-Identifier: GPL-2.0-or-later
//
// The codec in process: decode an iBeacon from advertising data (beside a hand-written C
// decoder of the same bytes, the practical limit), decode a whole advertising report event,
// and encode. Each benchmark runs its operation a million times per sample and reports
// operations per second and allocations per operation.

import AdvertisementCodec
import Benchmark
import CLimitDecoder
import Foundation

/// Apple's example beacon: flags, then the 26-byte manufacturer data structure.
let iBeaconData: [UInt8] = [
    0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
    0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
    0x00, 0x65, 0x00, 0x02, 0xC5,
]

/// An H4 LE Advertising Report event carrying that advertising data, as a controller sends it.
let reportEvent: [UInt8] = {
    let report: [UInt8] = [0x01, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(iBeaconData.count)]
        + iBeaconData + [0xC4]
    let parameters: [UInt8] = [0x02] + report
    return [0x04, 0x3E, UInt8(parameters.count)] + parameters
}()

let beacon = IBeacon(proximityUUID: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 101, minor: 2)

let metrics: [BenchmarkMetric] = [.throughput, .mallocCountTotal, .instructions]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: metrics, timeUnits: .nanoseconds, scalingFactor: .mega,
                                           maxDuration: .seconds(5), maxIterations: 20)

    Benchmark("iBeacon decode: Swift codec") { benchmark in
        let input = iBeaconData[...]
        precondition((try? IBeacon(parsingAdvertisingData: input)) == beacon)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? IBeacon(parsingAdvertisingData: input))
        }
    }

    Benchmark("iBeacon decode: C limit") { benchmark in
        var out = climit_ibeacon()
        precondition(iBeaconData.withUnsafeBufferPointer { climit_decode_ibeacon($0.baseAddress, $0.count, &out) } == 0
                     && out.major == 101 && out.minor == 2)
        iBeaconData.withUnsafeBufferPointer { buffer in
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(climit_decode_ibeacon(buffer.baseAddress, buffer.count, &out))
                blackHole(out.major)
            }
        }
    }

    Benchmark("Report event decode: H4 event to sightings") { benchmark in
        let input = reportEvent[...]
        var found = 0
        precondition((try? PacketDecoder.decode(input) { _ in found += 1 }.beaconCount) == 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? PacketDecoder.decode(input) { blackHole($0.rssi) })
        }
    }

    Benchmark("Report event decode: typed HCIEvent") { benchmark in
        let input = reportEvent[1...]
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? HCIEvent(parsing: input))
        }
    }

    Benchmark("iBeacon encode: advertising data") { benchmark in
        precondition(beacon.advertisingData.bytes == iBeaconData)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(beacon.advertisingData.bytes)
        }
    }

    Benchmark("iBeacon encode: H4 LE Set Advertising Data") { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? LESetAdvertisingData(data: beacon.advertisingData.bytes).packet.h4Bytes)
        }
    }
}
