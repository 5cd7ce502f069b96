// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// How the advertising was set up, for the user to see.
public struct AdvertisingPlan: Sendable {
    public enum Mode: String, Sendable {
        case legacy, extended
        /// Advertising instances of the kernel's management interface.
        case managed
    }

    public var mode: Mode
    /// Extended: one set handle per beacon shown at once; managed: one instance per beacon.
    public var handles: [UInt8]
    /// Whether beacons take turns on the last set (more beacons than sets, or legacy advertising
    /// with several): those from `firstTurn` on.
    public var rotating: Bool
    /// The random address advertised from; nil for the controller's public address until
    /// read (`Emitter` reads it once advertising is on, to show it).
    public var address: BluetoothAddress?
    public var addressIsRandom: Bool
    /// Where the interval on the air is the kernel's choice, not the one asked for: its range
    /// in ms (through the management API on a controller with legacy advertising only).
    public var kernelInterval: ClosedRange<Double>? = nil

    /// Where beacons take turns, the first of them (by index): it and the beacons after it share
    /// the last set; each beacon before it has a set of its own. Nil where every beacon has one.
    public var firstTurn: Int? { rotating ? max(0, handles.count - 1) : nil }

    /// The mean period, in ms, at which a receiver hears beacon `index` of `count` under this
    /// plan: its set's interval (`interval` ms; the middle of the kernel's range where the kernel
    /// chose) plus advDelay's mean, 5 ms; where beacons take turns, the set's events are
    /// shared by every beacon on it, so each is heard that many times less often.
    public func heardEvery(beacon index: Int, of count: Int, interval: Double) -> Double {
        let every = kernelInterval.map { ($0.lowerBound + $0.upperBound) / 2 } ?? interval
        let sharing = firstTurn.map { index >= $0 ? max(1, count - $0) : 1 } ?? 1
        return (every + 5) * Double(sharing)
    }

    /// The set (or instance) that carries beacon `index`: its own, or the last where it takes turns.
    public func handle(ofBeacon index: Int) -> UInt8 { handles[min(index, handles.count - 1)] }
}
