// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A minimal passive scanner over an owned controller: resets it, enables LE events, scans
/// with legacy commands, and hands out advertising reports.
public final class PassiveScanner {
    public let controller: HCIController

    public init(controller: HCIController) {
        self.controller = controller
    }

    /// Resets the controller and starts a passive scan reporting duplicates.
    /// - Throws: `HostError` from the command engine.
    public func start() throws(HostError) {
        try ControllerInfo.initialize(controller)
        try controller.send(LESetScanParameters(scanType: .passive, interval: 0x0010, window: 0x0010))
        try controller.send(LESetScanEnable(enable: true, filterDuplicates: false))
    }

    /// The next advertising report, or nil when none arrives within `timeout`.
    /// - Throws: `HostError` when the link fails.
    public func nextReport(timeout: Duration) throws(HostError) -> LEAdvertisingReport? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let event = try controller.nextEvent(timeout: remaining) else { return nil }
            switch event {
            case let .leMeta(.advertisingReport(reports)):
                if let report = reports.first { return report }
            case let .leMeta(.extendedAdvertisingReport(reports)):
                if let report = reports.first {
                    return LEAdvertisingReport(eventType: .advNonconnInd, addressType: report.addressType,
                                               address: report.address, data: report.data, rssi: report.rssi)
                }
            default:
                continue
            }
        }
    }

    /// Stops scanning (best effort) and closes the link.
    public func close() {
        _ = try? controller.send(LESetScanEnable(enable: false))
        controller.transport.close()
    }
}
