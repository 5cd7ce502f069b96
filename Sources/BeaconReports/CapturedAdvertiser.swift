// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import Foundation

/// One advertiser of a capture, as `replay` puts it back on the air: an address and its
/// advertising data, with what the capture says of it.
public struct CapturedAdvertiser: Sendable, Equatable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var data: [UInt8]
    /// The last scan response heard from its address, where the capture holds one.
    public var scanResponse: [UInt8]?
    /// The PDU type of its reports (connectable, scannable, legacy).
    public var kind: AdvertisingPDUKind
    /// When it was first and last heard, in seconds from the capture's first report.
    public var first: Double
    public var last: Double
    /// When it was there, in order, from its first report to its last one of each stay: a
    /// silence `Presence.isGoing` calls a going (longer than `gap` and several of its own
    /// intervals) ends a stay, a shorter one is events a scanner missed.
    public var spans: [ClosedRange<Double>] = []
    /// Silences past `CaptureSurvey.mostSpans` stays, taken as presence (counted, said).
    public var silencesMerged = 0
    /// Its reports (scan responses not counted).
    public var reports: Int
    /// Its advertising interval in ms, estimated from its report times (`CaptureSurvey.interval`);
    /// nil with fewer than two reports.
    public var interval: Double?
    /// The median RSSI of its reports, where the scanner gave one.
    public var rssi: Int?
}
