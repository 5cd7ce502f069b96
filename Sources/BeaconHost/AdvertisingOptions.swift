// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What to advertise and how.
public struct AdvertisingOptions: Sendable {
    /// Legacy commands, extended commands, or whichever the controller supports best.
    public enum Mode: String, Sendable {
        case automatic, legacy, extended
    }

    /// The address to advertise from.
    public enum Address: Sendable, Equatable {
        case publicAddress
        /// A static random address made up for this run.
        case generatedStaticRandom
        case random(BluetoothAddress)
    }

    public var beacons: [Beacon]
    /// Advertising interval in 0.625 ms units (`--interval 100` is 160).
    public var intervalUnits: UInt32
    public var connectable: Bool
    public var address: Address
    /// Requested TX power in dBm (extended advertising only).
    public var txPower: Int8?
    public var mode: Mode
    /// With more beacons than sets, how long each beacon is on the air before the next.
    public var rotationPeriod: Duration

    public init(beacons: [Beacon], intervalUnits: UInt32 = 160, connectable: Bool = false,
                address: Address = .publicAddress, txPower: Int8? = nil, mode: Mode = .automatic,
                rotationPeriod: Duration = .seconds(1)) {
        self.beacons = beacons
        self.intervalUnits = intervalUnits
        self.connectable = connectable
        self.address = address
        self.txPower = txPower
        self.mode = mode
        self.rotationPeriod = rotationPeriod
    }

    /// Milliseconds as 0.625 ms units, rounded to the nearest.
    public static func units(milliseconds: Double) -> UInt32? {
        let units = (milliseconds / 0.625).rounded()
        guard units.isFinite, units >= 1, units <= 0xFFFF else { return nil }
        return UInt32(units)
    }

    /// The interval for messages: "100 ms = 160 x 0.625 ms".
    public var intervalDescription: String {
        let tenths = Int(intervalUnits) * 625 / 100
        let milliseconds = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        return "\(milliseconds) ms = \(intervalUnits) x 0.625 ms"
    }
}

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
    /// Whether beacons take turns on one set (or legacy advertising).
    public var rotating: Bool
    /// The random address advertised from; nil for the controller's public address until
    /// read (`Emitter` reads it once advertising is on, to show it).
    public var address: BluetoothAddress?
    public var addressIsRandom: Bool
}
