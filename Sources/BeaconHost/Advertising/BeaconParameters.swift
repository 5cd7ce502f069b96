// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One beacon's own advertising parameters (a scenario's `interval`, `txPower`, `address`,
/// `rotateAddress`, `phy`, `connectable`, `pdu` and `channelMap` keys), where they differ from
/// the run's: values held by their typed keys (`BeaconSetting`, declared at the end of this file);
/// a setting not given is the run's.
public struct BeaconParameters: Sendable, Hashable {
    /// Each setting given, by its key.
    private var values: [String: any Hashable & Sendable] = [:]

    /// The setting's value, nil where it is the run's.
    package subscript<Value>(setting: BeaconSetting<Value>) -> Value? {
        get { values[setting.key] as? Value }
        set { values[setting.key] = newValue }
    }

    /// Advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32? {
        get { self[.interval] }
        set { self[.interval] = newValue }
    }
    /// Requested TX power in dBm (extended advertising only).
    public var txPower: Int8? {
        get { self[.txPower] }
        set { self[.txPower] = newValue }
    }
    /// A random address of the beacon's own set (`BeaconSetting.address`).
    public var address: AdvertisingOptions.Address? {
        get { self[.address] }
        set { self[.address] = newValue }
    }
    /// Seconds between new made-up addresses (`rotateAddress`); nil: the address stays.
    public var addressRotation: Double? {
        get { self[.rotateAddress] }
        set { self[.rotateAddress] = newValue }
    }
    /// The PHY its set advertises on (`BeaconSetting.phy`).
    public var phy: AdvertisingOptions.PHY? {
        get { self[.phy] }
        set { self[.phy] = newValue }
    }
    /// Whether its set is connectable.
    public var connectable: Bool? {
        get { self[.connectable] }
        set { self[.connectable] = newValue }
    }
    /// The PDUs its set sends (nil: legacy, unless the run's data or PHY needs extended ones).
    public var pdu: AdvertisingOptions.PDU? {
        get { self[.pdu] }
        set { self[.pdu] = newValue }
    }
    /// The primary advertising channels its set uses, some of 37, 38 and 39 (extended HCI advertising).
    public var channelMap: Set<UInt8>? {
        get { self[.channelMap] }
        set { self[.channelMap] = newValue }
    }

    public init(intervalUnits: UInt32? = nil, txPower: Int8? = nil, address: AdvertisingOptions.Address? = nil,
                addressRotation: Double? = nil, phy: AdvertisingOptions.PHY? = nil, connectable: Bool? = nil,
                pdu: AdvertisingOptions.PDU? = nil) {
        self.intervalUnits = intervalUnits
        self.txPower = txPower
        self.address = address
        self.addressRotation = addressRotation
        self.phy = phy
        self.connectable = connectable
        self.pdu = pdu
    }

    /// The value of the setting of that key, where it is given.
    package func value(forKey key: String) -> (any Hashable & Sendable)? { values[key] }

    /// These parameters with those `given` sets (its settings not given keep these ones'):
    /// what a change of some of a beacon's parameters makes of them.
    public func merging(_ given: BeaconParameters) -> BeaconParameters {
        var merged = self
        merged.values.merge(given.values) { $1 }
        return merged
    }

    public static func == (lhs: BeaconParameters, rhs: BeaconParameters) -> Bool {
        lhs.values.count == rhs.values.count
            && lhs.values.allSatisfy { key, value in rhs.values[key].map { AnyHashable($0) == AnyHashable(value) } ?? false }
    }

    public func hash(into hasher: inout Hasher) {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            hasher.combine(key)
            hasher.combine(AnyHashable(value))
        }
    }

    /// The run's parameters.
    public static let run = BeaconParameters()

    /// Whether a beacon with these parameters goes in extended PDUs, where the run's beacons do
    /// so or not (`runSends`: `--extended-pdu`, data longer than a legacy PDU carries, or the
    /// Coded PHY): its own `pdu` says; else the run's, or its own PHY being Coded. The one place
    /// this is decided: the advertisers ask it, and so does what a description lets a beacon's
    /// data hold (`maximumDataLength(whereTheRunSends:)`).
    public func sendsExtendedPDUs(whereTheRunSends runSends: Bool) -> Bool {
        if let pdu { return pdu == .extended }
        return runSends || phy == .coded
    }

    /// The most advertising data a beacon with these parameters carries: 251 bytes in extended
    /// PDUs (`sendsExtendedPDUs(whereTheRunSends:)`), else the 31 of a legacy PDU.
    public func maximumDataLength(whereTheRunSends runSends: Bool) -> Int {
        sendsExtendedPDUs(whereTheRunSends: runSends) ? AdvertisingData.extendedPDUMaximumLength
            : AdvertisingData.legacyMaximumLength
    }

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
        AnyBeaconSetting.all.compactMap { $0.described(self) }.joined(separator: ", ")
    }
}

// MARK: The settings, each declared once (`BeaconSetting`)

extension AnyBeaconSetting {
    /// Every setting, in the order help and docs list them: one line each.
    package static let all: [AnyBeaconSetting] = [
        AnyBeaconSetting(intervalSetting), AnyBeaconSetting(txPowerSetting), AnyBeaconSetting(addressSetting),
        AnyBeaconSetting(rotateAddressSetting), AnyBeaconSetting(phySetting), AnyBeaconSetting(connectableSetting),
        AnyBeaconSetting(pduSetting), AnyBeaconSetting(channelMapSetting),
    ]
}

extension BeaconSetting where Value == UInt32 {
    /// The advertising interval, in 0.625 ms units (given in ms).
    package static var interval: Self { intervalSetting }
}

extension BeaconSetting where Value == Int8 {
    /// The requested TX power in dBm (extended advertising only).
    package static var txPower: Self { txPowerSetting }
}

extension BeaconSetting where Value == AdvertisingOptions.Address {
    /// A random address of the beacon's own set (HCI only: through the management API the
    /// kernel picks the address): a made-up one (`static`, `non-resolvable`) is made when the
    /// beacon goes on the air, and kept through restores and changes.
    package static var address: Self { addressSetting }
}

extension BeaconSetting where Value == Double {
    /// Seconds between new made-up addresses; nil: the address stays.
    package static var rotateAddress: Self { rotateAddressSetting }
}

extension BeaconSetting where Value == AdvertisingOptions.PHY {
    /// The PHY its set advertises on: `.coded` sends its set's PDUs extended on the LE Coded PHY.
    package static var phy: Self { phySetting }
}

extension BeaconSetting where Value == Bool {
    /// Whether its set is connectable.
    package static var connectable: Self { connectableSetting }
}

extension BeaconSetting where Value == AdvertisingOptions.PDU {
    /// The PDUs its set sends (nil: legacy, unless the run's data or PHY needs extended ones).
    package static var pdu: Self { pduSetting }
}

extension BeaconSetting where Value == Set<UInt8> {
    /// The primary advertising channels its set uses (37, 38, 39; nil: all three).
    package static var channelMap: Self { channelMapSetting }
}

private let intervalRange = SettingRange(20...10_485_759, unit: "ms")
private let intervalSetting = BeaconSetting<UInt32>(
    key: "interval", field: "interval", values: "MS",
    help: "its advertising interval in ms, 20 to 10485759 (to 10240 with legacy PDUs), sent in 0.625 ms units",
    range: intervalRange,
    parse: { (key, text) throws(SettingValueError) in
        // Its range is checked below, in units, with the legacy range in the message.
        let milliseconds = try number(key, text, intervalRange, checkingRange: false)
        guard let units = AdvertisingOptions.units(milliseconds: milliseconds),
              AdvertisingOptions.intervalRange(legacy: false).contains(units) else {
            throw SettingValueError("\(key) must be from \(AdvertisingOptions.intervalRangeDescription(legacy: false)), got '\(text)'")
        }
        return units
    },
    show: { .number(Double($0) * 0.625) },
    describe: { "interval \(AdvertisingOptions.intervalDescription(units: $0))" })

private let txPowerRange = SettingRange(-127...20, unit: "dBm")
private let txPowerSetting = BeaconSetting<Int8>(
    key: "tx-power", field: "txPower", values: "DBM", help: "its requested TX power, -127 to 20 dBm (extended advertising)",
    range: txPowerRange,
    parse: { (key, text) throws(SettingValueError) in Int8(try integer(key, text, txPowerRange)) },
    show: { .integer(Int($0)) },
    describe: { "TX power \($0) dBm" })

private let addressSetting = BeaconSetting<AdvertisingOptions.Address>(
    key: "address", field: "address", values: "static|non-resolvable|AA:BB:CC:DD:EE:FF|public",
    help: "the address its set advertises from: a static or non-resolvable random one made up for it, a random one "
        + "given, or the controller's public one (raw HCI)",
    range: nil,
    parse: { (key, text) throws(SettingValueError) in
        guard text.lowercased() != "public" else { return .publicAddress }
        do {
            return try AdvertisingOptions.Address(randomAddress: text)
        } catch {
            throw SettingValueError("\(key) must be public, static or non-resolvable (a random address made up for it) "
                                    + "or a random AA:BB:CC:DD:EE:FF, got '\(text)'")
        }
    },
    show: { .text($0.text) },
    describe: { "address \($0.text)" })

private let rotationRange = SettingRange(0.1...86400, unit: "seconds")
private let rotateAddressSetting = BeaconSetting<Double>(
    key: "rotate-address", field: "rotateAddress", values: "S",
    help: "a new made-up address every S seconds, 0.1 to 86400 (with address static or non-resolvable, the default)",
    range: rotationRange,
    parse: { (key, text) throws(SettingValueError) in try number(key, text, rotationRange) },
    show: { .number($0) },
    describe: { "a new address every \($0) s" })

private let phySetting = BeaconSetting<AdvertisingOptions.PHY>(
    key: "phy", field: "phy", values: "1m|coded", help: "the PHY its set advertises on (coded: extended PDUs, long range)",
    range: nil,
    parse: { (key, text) throws(SettingValueError) in try oneOf(key, text) },
    show: { .text($0.rawValue) },
    describe: { $0 == .coded ? "LE Coded PHY" : "LE 1M PHY" })

private let connectableSetting = BeaconSetting<Bool>(
    key: "connectable", field: "connectable", values: "true|false", help: "whether its set is connectable (ADV_IND)",
    range: nil,
    parse: { (key, text) throws(SettingValueError) in
        switch text.lowercased() {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: throw SettingValueError("\(key) must be true or false, got '\(text)'")
        }
    },
    show: { .flag($0) },
    describe: { $0 ? "connectable" : "non-connectable" })

private let pduSetting = BeaconSetting<AdvertisingOptions.PDU>(
    key: "pdu", field: "pdu", values: "legacy|extended",
    help: "the PDUs its set sends: legacy (what every phone hears) or extended (up to 251 bytes of data)",
    range: nil,
    parse: { (key, text) throws(SettingValueError) in try oneOf(key, text) },
    show: { .text($0.rawValue) },
    describe: { "\($0.rawValue) PDUs" })

private let channelMapSetting = BeaconSetting<Set<UInt8>>(
    key: "channels", field: "channelMap", values: "37 38 39",
    help: "the primary advertising channels its set uses, some of 37, 38 and 39 (raw HCI, extended advertising)",
    range: nil,
    parse: { (key, text) throws(SettingValueError) in
        let items = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "+" })
        let channels = Set(items.compactMap { UInt8($0) })
        guard !items.isEmpty, items.count <= 3, channels.count == items.count, channels.isSubset(of: [37, 38, 39]) else {
            throw SettingValueError("\(key) must list some of the channels 37, 38 and 39 (separated by spaces), got '\(text)'")
        }
        return channels
    },
    show: { .integers($0.sorted().map(Int.init)) },
    describe: { "channels " + $0.sorted().map(String.init).joined(separator: " ") },
    takesList: true)
