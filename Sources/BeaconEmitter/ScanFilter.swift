// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import ArgumentParser
import BeaconHost
import BeaconReports
import Foundation

/// `--uuid/--major/--minor` (a region), `--min-rssi`, `--format`, `--address`: which reports to show.
struct ScanFilterOptions: ParsableArguments {
    typealias Format = ScanFilter.Format

    @Option(help: "Only beacons of this region's UUID (iBeacon proximity UUID, AltBeacon id1).")
    var uuid: String?

    @Option(parsing: .unconditional, help: "With --uuid: only this major (AltBeacon id2), 0 to 65535.")
    var major: Int?

    @Option(parsing: .unconditional, help: "With --major: only this minor (AltBeacon id3), 0 to 65535.")
    var minor: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Only reports at least this strong.", valueName: "dBm"))
    var minRssi: Int?

    @Option(help: "Only this beacon format (any also shows unknown data raw).")
    var format: Format = .any

    @Option(help: ArgumentHelp("Only reports from this advertiser (AA:BB:CC:DD:EE:FF); repeat for several.",
                               valueName: "address"),
            transform: parsed(BluetoothAddress.init(parsing:)))
    var address: [BluetoothAddress] = []

    func validate() throws { _ = try region() }

    /// The region the options describe, or nil for "every beacon".
    func region() throws -> BeaconRegion? {
        try Self.region(uuid: uuid, major: major, minor: minor)
    }

    /// The region `--uuid`, `--major` and `--minor` describe, or nil without `--uuid`.
    static func region(uuid: String?, major: Int?, minor: Int?) throws -> BeaconRegion? {
        if minor != nil && major == nil { throw ValidationError("--minor needs --major (a region is UUID, UUID+major, or all three)") }
        if major != nil && uuid == nil { throw ValidationError("--major needs --uuid (a region is UUID, UUID+major, or all three)") }
        guard let uuid else { return nil }
        let parsed: UUID
        do {
            parsed = try UUID(beaconText: uuid)
        } catch {
            throw ValidationError("--uuid '\(uuid)': \(error.reasonDescription)")
        }
        for (name, value) in [("--major", major), ("--minor", minor)] {
            if let value, !(0...65535).contains(value) {
                throw ValidationError("\(name) must be from 0 to 65535, got \(value)")
            }
        }
        return BeaconRegion(uuid: parsed, major: major.map(UInt16.init), minor: minor.map(UInt16.init))
    }

    /// The filter the options describe, as plain values (read once, not per report).
    func filter() throws -> ScanFilter {
        ScanFilter(minRssi: minRssi, format: format, region: try region(), addresses: Set(address))
    }
}

extension ScanFilter.Format: ExpressibleByArgument {
    public init?(argument: String) { self.init(named: argument) }
    public static var allValueStrings: [String] { choices }
    public var defaultValueDescription: String { name }
}
