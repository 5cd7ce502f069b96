// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// An option value that does not describe advertising, with what is accepted.
public struct AdvertisingOptionError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    /// What cannot be and why, where the options combine into something no run can honour.
    public var refusal: Refusal?

    public init(_ description: String) {
        self.description = description
    }

    public init(_ refusal: Refusal) {
        self.description = refusal.description
        self.refusal = refusal
    }
}

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
    public struct GivenBeacon: Sendable, Hashable {
        public var beacon: Beacon
        public var parameters: BeaconParameters

        public init(_ beacon: Beacon, parameters: BeaconParameters = .run) {
            self.beacon = beacon
            self.parameters = parameters
        }
    }

    /// The beacons with their own parameters, each one value (in the beacons' order).
    public init(given: [GivenBeacon], intervalUnits: UInt32 = 160, connectable: Bool = false,
                address: Address = .publicAddress, txPower: Int8? = nil, mode: Mode = .automatic,
                rotationPeriod: Duration = .seconds(1), phy: PHY = .le1M) {
        self.init(beacons: [], intervalUnits: intervalUnits, connectable: connectable, address: address, txPower: txPower,
                  mode: mode, rotationPeriod: rotationPeriod, phy: phy)
        self.given = given
    }

    /// The beacons as given, each one value: a view of `beacons` and `beaconParameters`.
    public var given: [GivenBeacon] {
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

/// One beacon's own advertising parameters (a scenario's `interval`, `txPower`, `address`,
/// `rotateAddress`, `phy`, `connectable` and `pdu` keys), where they differ from the run's; nil fields
/// are the run's.
public struct BeaconParameters: Sendable, Hashable {
    /// Advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32?
    /// Requested TX power in dBm (extended advertising only).
    public var txPower: Int8?
    /// A random address of the beacon's own set (HCI only: through the management API the
    /// kernel picks the address): a made-up one (`static`, `non-resolvable`) is made when the
    /// beacon goes on the air, and kept through restores and changes.
    public var address: AdvertisingOptions.Address?
    /// Seconds between new made-up addresses (`rotateAddress`); nil: the address stays.
    public var addressRotation: Double?
    /// The PHY its set advertises on: `.coded` sends its set's PDUs extended on the LE Coded
    /// PHY (long range, heard only by scanners of the Coded PHY), the run's other beacons
    /// staying on what they are.
    public var phy: AdvertisingOptions.PHY?
    /// Whether its set is connectable.
    public var connectable: Bool?
    /// The PDUs its set sends (nil: legacy, unless the run's data or PHY needs extended ones).
    public var pdu: AdvertisingOptions.PDU?

    public init(intervalUnits: UInt32? = nil, txPower: Int8? = nil, address: AdvertisingOptions.Address? = nil,
                addressRotation: Double? = nil, phy: AdvertisingOptions.PHY? = nil, connectable: Bool? = nil,
                pdu: AdvertisingOptions.PDU? = nil) {
        self.pdu = pdu
        self.intervalUnits = intervalUnits
        self.txPower = txPower
        self.address = address
        self.addressRotation = addressRotation
        self.phy = phy
        self.connectable = connectable
    }

    /// These parameters with those `given` sets (its nil fields keep these ones'): what a
    /// change of some of a beacon's parameters makes of them.
    public func merging(_ given: BeaconParameters) -> BeaconParameters {
        BeaconParameters(intervalUnits: given.intervalUnits ?? intervalUnits, txPower: given.txPower ?? txPower,
                         address: given.address ?? address, addressRotation: given.addressRotation ?? addressRotation,
                         phy: given.phy ?? phy, connectable: given.connectable ?? connectable, pdu: given.pdu ?? pdu)
    }

    /// The run's parameters.
    public static let run = BeaconParameters()

    /// These parameters apart from the address (and its rotation): what a set beacons take
    /// turns on keeps for them all.
    public var apartFromAddress: BeaconParameters {
        var apart = self
        apart.address = nil
        apart.addressRotation = nil
        return apart
    }

    /// Why a beacon of these parameters cannot take turns with the others
    /// (`firstUnableToTakeTurns`): parameters of its own, or only its address (or the lack of
    /// one) against theirs.
    func turnsRefusal(beacon label: String) -> Refusal {
        apartFromAddress == .run ? Refusal(.ownAddress, beacon: label, .sharedSetMixedAddresses)
            : Refusal(.ownParameters(description), beacon: label, .sharedSet)
    }

    /// The first of `members`, beacons that would take turns on one set, that cannot: a set
    /// keeps one interval, TX power, PHY, type and own-address type, so each has the run's, and
    /// each may keep a random address of its own (put on the set at its turn) where all of
    /// them go out from random addresses (`runAddressIsRandom`: the run's, for those without
    /// one of their own). Nil: they can.
    public static func firstUnableToTakeTurns(_ members: [BeaconParameters], runAddressIsRandom: Bool) -> Int? {
        let random = members.map { own in own.address.map { $0 != .publicAddress } ?? runAddressIsRandom }
        return members.indices.first { members[$0].apartFromAddress != .run || random[$0] != random[0] }
    }

    /// For messages: "interval 200 ms = 320 x 0.625 ms, TX power -8 dBm, address static".
    public var description: String {
        [intervalUnits.map { "interval \(AdvertisingOptions.intervalDescription(units: $0))" },
         txPower.map { "TX power \($0) dBm" }, address.map { "address \($0.text)" },
         addressRotation.map { "a new address every \($0) s" }, phy.map { $0 == .coded ? "LE Coded PHY" : "LE 1M PHY" },
         connectable.map { $0 ? "connectable" : "non-connectable" }, pdu.map { "\($0.rawValue) PDUs" }].compactMap { $0 }.joined(separator: ", ")
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
