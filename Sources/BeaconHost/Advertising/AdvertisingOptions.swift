// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What to advertise and how.
public struct AdvertisingOptions: Sendable {
    /// Legacy commands, extended commands, or whichever the controller supports best.
    public enum Mode: String, Sendable {
        case automatic, legacy, extended
    }

    /// The PHY advertising goes out on.
    public enum PHY: String, Sendable, CaseIterable {
        /// LE 1M: what every scanner hears.
        case le1M = "1m"
        /// LE Coded (long range): extended advertising PDUs on the primary and secondary
        /// channels, heard only by scanners that scan the Coded PHY.
        case coded

        /// The value of the HCI PHY fields (Core Vol 4 Part E 7.8.53).
        public var hciValue: UInt8 { self == .coded ? 0x03 : 0x01 }
    }

    /// The PDUs a beacon's set sends: legacy (31 bytes at most, what every scanner hears) or
    /// extended (heard only by scanners of extended advertising, as an advertiser that sends
    /// them was captured).
    public enum PDU: String, Sendable, CaseIterable {
        case legacy, extended
    }

    /// The address to advertise from.
    public enum Address: Sendable, Hashable {
        case publicAddress
        /// A static random address made up for this run.
        case generatedStaticRandom
        /// A non-resolvable private address made up for this run (what privacy-minded
        /// devices advertise from: nothing ties it to the device).
        case generatedNonResolvable
        case random(BluetoothAddress)

        /// As written: `public`, `static`, `non-resolvable`, or the address.
        public var text: String {
            switch self {
            case .publicAddress: "public"
            case .generatedStaticRandom: "static"
            case .generatedNonResolvable: "non-resolvable"
            case let .random(address): "\(address)"
            }
        }

        /// Whether it is made up (by beacon-emit), not given.
        public var isMadeUp: Bool { self == .generatedStaticRandom || self == .generatedNonResolvable }

        /// A new address of the kind a made-up one is (nil for the others).
        public func make() -> BluetoothAddress? {
            switch self {
            case .generatedStaticRandom: Advertiser.makeStaticRandomAddress()
            case .generatedNonResolvable: Advertiser.makeNonResolvableAddress()
            default: nil
            }
        }

        /// A random address as `--random-address` gives it: `static` or `non-resolvable` (made
        /// up for this run) or AA:BB:CC:DD:EE:FF.
        /// - Throws: a message saying which forms are accepted and what is wrong.
        public init(randomAddress text: String) throws(AdvertisingOptionError) {
            switch text.lowercased() {
            case "static":
                self = .generatedStaticRandom
                return
            case "non-resolvable", "nonresolvable":
                self = .generatedNonResolvable
                return
            default:
                break
            }
            do {
                self = .random(try BluetoothAddress(parsing: text))
            } catch {
                throw AdvertisingOptionError("a random address is 'static', 'non-resolvable' or AA:BB:CC:DD:EE:FF: "
                                             + error.reasonDescription)
            }
        }
    }

    /// The most beacons one emitter carries: more than the sets any controller has (at most
    /// 240, by the specification's handles), few enough that beacons taking turns each come
    /// round within seconds (256 at the 20 ms shortest turn: every 5 s), and that `control
    /// list` stays one reply of some 100 KiB. Starting with more, or adding past it, is refused.
    public static let maximumBeacons = 256

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
    /// The PHY; `.coded` sends extended PDUs whatever the data's length.
    public var phy: PHY
    /// Each beacon's own interval and TX power, in the beacons' order (empty: the run's for
    /// every beacon).
    public var beaconParameters: [BeaconParameters]

    public init(beacons: [Beacon], intervalUnits: UInt32 = 160, connectable: Bool = false,
                address: Address = .publicAddress, txPower: Int8? = nil, mode: Mode = .automatic,
                rotationPeriod: Duration = .seconds(1), phy: PHY = .le1M, beaconParameters: [BeaconParameters] = []) {
        self.phy = phy
        self.beaconParameters = beaconParameters
        self.beacons = beacons
        self.intervalUnits = intervalUnits
        self.connectable = connectable
        self.address = address
        self.txPower = txPower
        self.mode = mode
        self.rotationPeriod = rotationPeriod
    }

    /// One beacon as given to the start, one value: its content and its own parameters
    /// (`.run`: the run's). On the air it becomes a `RunningBeacon`, with its id.
    package struct GivenBeacon: Sendable, Hashable {
        package var beacon: Beacon
        package var parameters: BeaconParameters

        package init(_ beacon: Beacon, parameters: BeaconParameters = .run) {
            self.beacon = beacon
            self.parameters = parameters
        }
    }

    /// The beacons with their own parameters, each one value (in the beacons' order).
    package init(given: [GivenBeacon], intervalUnits: UInt32 = 160, connectable: Bool = false,
                address: Address = .publicAddress, txPower: Int8? = nil, mode: Mode = .automatic,
                rotationPeriod: Duration = .seconds(1), phy: PHY = .le1M) {
        self.init(beacons: [], intervalUnits: intervalUnits, connectable: connectable, address: address, txPower: txPower,
                  mode: mode, rotationPeriod: rotationPeriod, phy: phy)
        self.given = given
    }

    /// The beacons as given, each one value: a view of `beacons` and `beaconParameters`.
    package var given: [GivenBeacon] {
        get {
            beacons.indices.map { GivenBeacon(beacons[$0], parameters: beaconParameters.indices.contains($0) ? beaconParameters[$0] : .run) }
        }
        set {
            beacons = newValue.map(\.beacon)
            beaconParameters = newValue.contains { $0.parameters != .run } ? newValue.map(\.parameters) : []
        }
    }

    /// Milliseconds as 0.625 ms units, rounded to the nearest (1 to 0xFFFFFF, the widest any
    /// command takes; each use checks its own range).
    public static func units(milliseconds: Double) -> UInt32? {
        let units = (milliseconds / 0.625).rounded()
        guard units.isFinite, units >= 1, units <= 0xFF_FFFF else { return nil }
        return UInt32(units)
    }

    /// The advertising intervals the standard allows, in 0.625 ms units: legacy advertising
    /// 20 ms to 10.24 s (Core Vol 4 Part E 7.8.5), extended 20 ms to about 10,486 s (7.8.53).
    public static func intervalRange(legacy: Bool) -> ClosedRange<UInt32> {
        legacy ? 0x20...0x4000 : 0x20...0xFF_FFFF
    }

    /// That range for messages: "20 to 10240 ms (legacy advertising)".
    public static func intervalRangeDescription(legacy: Bool) -> String {
        legacy ? "20 to 10240 ms (legacy advertising)" : "20 to 10485759 ms (extended advertising)"
    }

    /// An interval out of legacy advertising's range, refused before anything is sent when
    /// legacy advertising is what the controller offers.
    func checkLegacyInterval() throws(HostError) {
        guard !Self.intervalRange(legacy: true).contains(intervalUnits) else { return }
        throw .refused(Refusal(.interval(intervalDescription), mode == .legacy ? .legacyIntervalRangeChosen : .legacyIntervalRange))
    }

    /// The interval for messages: "100 ms = 160 x 0.625 ms".
    public var intervalDescription: String { Self.intervalDescription(units: intervalUnits) }

    /// These options with a beacon's own interval and TX power in place of the run's.
    func applying(_ own: BeaconParameters) -> AdvertisingOptions {
        var options = self
        options.intervalUnits = own.intervalUnits ?? intervalUnits
        options.txPower = own.txPower ?? txPower
        options.phy = own.phy ?? phy
        options.connectable = own.connectable ?? connectable
        return options
    }

    /// An interval in 0.625 ms units for messages: "100 ms = 160 x 0.625 ms".
    public static func intervalDescription(units: UInt32) -> String {
        let tenths = Int(units) * 625 / 100
        let milliseconds = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        return "\(milliseconds) ms = \(units) x 0.625 ms"
    }
}

