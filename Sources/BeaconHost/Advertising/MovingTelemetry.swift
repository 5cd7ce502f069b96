// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Eddystone-TLM counters that move while a beacon advertises, as the TLM frame defines them:
/// ADV_CNT counts the advertising PDUs sent since power-up, SEC_CNT the time since power-up in
/// 0.1 s. Both start from the values given and wrap at 2^32 as the 32-bit fields do.
package struct MovingTelemetry: Sendable {
    /// Advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32
    /// PDUs per advertising event: one on each of the three primary channels (37, 38, 39).
    public static let pdusPerEvent: UInt64 = 3

    public init(intervalUnits: UInt32) {
        self.intervalUnits = intervalUnits
    }

    /// `frame` with `seconds` more of uptime and the PDUs sent in them.
    public func advance(_ frame: EddystoneTLM, by seconds: Double) -> EddystoneTLM {
        var moved = frame
        let tenths = UInt64(max(0, (seconds * 10).rounded()))
        let events = UInt64(max(0, (seconds / (Double(max(1, intervalUnits)) * 0.000625)).rounded()))
        moved.uptimeDeciseconds = UInt32(truncatingIfNeeded: UInt64(frame.uptimeDeciseconds) &+ tenths)
        moved.advertisingPDUCount = UInt32(truncatingIfNeeded: UInt64(frame.advertisingPDUCount) &+ events &* Self.pdusPerEvent)
        return moved
    }

    /// `beacon` with `seconds` more on its counters where it is an Eddystone-TLM beacon; nil
    /// for any other (its content does not move).
    /// Whether `beacon`'s counters move (an Eddystone-TLM beacon).
    package static func moves(_ beacon: Beacon) -> Bool {
        if case .eddystone(.tlm) = beacon { true } else { false }
    }

    public func moved(_ beacon: Beacon, by seconds: Double) -> Beacon? {
        guard case let .eddystone(.tlm(frame)) = beacon else { return nil }
        return .eddystone(.tlm(advance(frame, by: seconds)))
    }
}

