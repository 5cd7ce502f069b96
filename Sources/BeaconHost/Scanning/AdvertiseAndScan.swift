// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem

/// A scanner on one controller and, optionally, a beacon advertised on another: what `verify`
/// (the bytes arrive) and `calibrate` (the RSSI at 1 m) stand on. Both may be `virtual`: two
/// devices on one private virtual radio. `close()` takes the beacon off the air and closes
/// both links.
package final class AdvertiseAndScan {
    public let scanner: AdvertisementScanner
    /// The beacon's advertiser, when a device to advertise on was given.
    public private(set) var advertiser: Advertiser?
    private let emitterConnection: ControllerConnection?
    private let scannerConnection: ControllerConnection?

    /// Opens the scanner and starts scanning, then advertises `beacon` on `emitter` (opened
    /// by the caller, nil: nothing is advertised).
    /// - Parameters:
    ///   - scanning: the scanner's device; `virtual` with a virtual emitter is its second device.
    ///   - steps: the advertiser's steps, for `--verbose`.
    ///   - warnings: the scanner's warnings.
    /// - Throws: `HostError`; nothing is left open or on the air when it throws.
    public init(advertising beacon: Beacon, on emitter: ControllerConnection?, legacy: Bool = false,
                scanning: DeviceSpecification, scanOptions: AdvertisementScanner.Options = .init(),
                steps: @escaping (String) -> Void, warnings: @escaping (String) -> Void) throws(HostError) {
        emitterConnection = emitter
        let scannerController: HCIController
        (scannerController, scannerConnection) = try ControllerConnection.openScanner(scanning, beside: emitter)
        scanner = AdvertisementScanner(controller: scannerController)
        scanner.log = warnings
        do {
            try scanner.start(options: scanOptions, ownsController: scanning.ownsController)
            if let emitter {
                let starter = Emitter(controller: emitter.controller, ownsController: emitter.ownsController) {
                    if case let .step(text) = $0 { steps(text) }
                }
                advertiser = try starter.start(options: AdvertisingOptions(beacons: [beacon], mode: legacy ? .legacy : .automatic))
            }
        } catch {
            close()
            throw error
        }
    }

    /// Takes the beacon off the air, stops the scan, closes both links.
    public func close() {
        try? advertiser?.stop()
        advertiser = nil
        scanner.stop()
        if let scannerConnection { scannerConnection.close() } else { scanner.controller.transport.close() }
        emitterConnection?.close()
    }

    /// The RSSI of every report of `beacon` (its identifiers for a beacon format, its exact
    /// data for any other advertising data; never a scan response) until `duration` passes or
    /// `interrupt` is readable.
    public func rssiSamples(of beacon: Beacon, for duration: Duration, interrupt: Int32? = nil) throws(HostError) -> [Int] {
        let wanted = BeaconTracker.identity(of: BeaconSighting(beacon: beacon))
        let layouts = LayoutBeacon.layouts(of: [beacon])
        var samples: [Int] = []
        let scan = ScanSource(scanner: scanner) { report in
            guard !report.isScanResponse, let rssi = report.rssi else { return true }
            let matches: Bool
            if case let .custom(custom) = beacon {
                matches = report.data == custom.data.bytes
            } else {
                matches = ((try? report.sightings(reading: layouts)) ?? []).contains { BeaconTracker.identity(of: $0) == wanted }
            }
            if matches { samples.append(Int(rssi)) }
            return true
        }
        _ = try scan.run(until: .now + duration, interrupt: interrupt, what: "the calibration's scan")
        return samples
    }
}
