// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

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
    func turnsRefusal(beacon label: BeaconID) -> Refusal {
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
