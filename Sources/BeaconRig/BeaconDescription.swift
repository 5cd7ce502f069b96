// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import Foundation

/// One beacon as people describe it, in the beacon options' names: the command line's options,
/// `--beacon KEY=VALUE,...`, a configuration file, a scenario and a control request all fill
/// this one model, and `beacon()` is the one place a beacon is built from it and checked.
public struct BeaconDescription: Sendable, Equatable {
    /// The beacon format; iBeacon when none is given (`url` makes an Eddystone-URL).
    public enum Format: String, Sendable, CaseIterable {
        case ibeacon
        case altbeacon
        case eddystoneUID = "eddystone-uid"
        case eddystoneTLM = "eddystone-tlm"
        case eddystoneEID = "eddystone-eid"
    }

    public var format: Format?
    public var eddystoneURL: String?
    public var uuid: String?
    public var major: Int?
    public var minor: Int?
    public var measuredPower: Int?
    public var companyID: String?
    public var namespace: String?
    public var instance: String?
    public var battery: Int?
    public var temperature: Double?
    public var pduCount: Int?
    public var uptime: Double?
    /// Eddystone-EID: the identity key (32 hex digits) or the file holding it (only its owner
    /// may read it: `IdentityKey`), K, and the time counter at the start.
    public var identityKey: String?
    public var identityKeyFile: String?
    public var rotationExponent: Int?
    public var clock: Int?
    public var ad: String?
    public var scanResponse: String?
    public var name: String?
    public var manufacturerData: [String] = []
    public var serviceData: [String] = []
    public var serviceUUIDs: [String] = []
    public var flags: String?
    public var extendedPDU = false
    /// A registered format's name (`type=acme`: `BeaconFormats.register`), and every field
    /// given, by its plain key, from which that format builds its beacon.
    public var registeredFormat: String?
    public var given: [String: String] = [:]

    public init() {}

    /// What is wrong with a description: a message naming the option or key.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The keys a description takes (the beacon options' names; `type` picks the format).
    public static let keys = ["type", "format", "uuid", "major", "minor", "measured-power", "company-id", "namespace",
                              "instance", "url", "battery", "temperature", "pdu-count", "uptime", "identity-key",
                              "identity-key-file", "rotation-exponent", "clock", "ad", "scan-response",
                              "name", "manufacturer-data", "service-data", "service-uuid", "flags", "extended-pdu"]

    /// Each key by its plain spelling (`plain`), to read a key written in any spelling.
    private static let keysByPlainName = Dictionary(uniqueKeysWithValues: keys.map { (plain($0), $0) })

    /// What each key that takes a number takes, by its plain key (`plain`), as the options' help
    /// says (a beacon's own settings' from `BeaconSetting`).
    public static let numberRanges = [
        "major": "0 to 65535", "minor": "0 to 65535", "measuredpower": "-128 to 127 (dBm)",
        "battery": "0 to 65535 (mV)", "temperature": "-127.99 to 127.99 (degrees C)",
        "pducount": "0 to 4294967295", "uptime": "0 to 429496729.5 (seconds)",
        "rotationexponent": "0 to 15", "clock": "0 to 4294967295 (seconds)",
    ].merging(BeaconSetting.all.compactMap { setting in setting.range.map { (setting.plain, $0) } }) { $1 }

    /// The plain keys of a beacon's own settings (`BeaconSetting`): a scenario's and
    /// `advertise`'s beacons take them (each beacon on a set or instance of its own); they are
    /// not the beacon's data, so `init(pairs:)` refuses them.
    public static let parameterKeys = Set(BeaconSetting.all.map(\.plain))

    /// `fields` apart: the beacon's data fields (for `beacon(fromFields:)`) and its own parameters.
    /// - Throws: `Invalid` for a setting's value it does not take (`BeaconSetting`), or settings
    ///   that do not go together.
    public static func parameters(in fields: [String: String]) throws(Invalid)
        -> (fields: [String: String], parameters: BeaconParameters) {
        var rest: [String: String] = [:]
        var parameters = BeaconParameters.run
        for (key, value) in fields {
            if let setting = BeaconSetting.named(key) {
                try setting.read(key, value, &parameters)
            } else {
                rest[key] = value
            }
        }
        if parameters.pdu == .legacy && parameters.phy == .coded {
            throw Invalid("pdu: legacy PDUs go on the LE 1M PHY only; phy: coded sends extended ones")
        }
        if parameters.addressRotation != nil {
            // A new address every period: made up (non-resolvable unless static was asked for).
            let kind = parameters.address ?? .generatedNonResolvable
            guard kind.isMadeUp else {
                throw Invalid("rotateAddress makes a new address every period: it goes with address: static or "
                              + "non-resolvable (the default), not \(kind.text)")
            }
            parameters.address = kind
        }
        return (rest, parameters)
    }

    /// A beacon and its own parameters from `uuid=...,major=1,interval=200` (`--beacon`): the
    /// data keys in order as `init(pairs:)` reads them, the parameter keys as `parameters(in:)` does.
    /// - Throws: `Invalid` naming what is wrong.
    public static func beaconAndParameters(specification: String) throws(Invalid) -> (beacon: Beacon, parameters: BeaconParameters) {
        let (data, parameters) = try split(specification: specification)
        return (try BeaconDescription(pairs: data).beacon(), parameters)
    }

    /// A `--beacon` specification's data pairs, in order, and its own parameters.
    private static func split(specification: String) throws(Invalid)
        -> (data: [(key: String, value: String)], parameters: BeaconParameters) {
        let pairs: [(key: String, value: String)]
        do {
            pairs = try KeyValueText.pairs(specification)
        } catch {
            throw Invalid("expected KEY=VALUE pairs separated by commas, got '\(error.item)'")
        }
        let own = pairs.filter { parameterKeys.contains(plain($0.key)) }
        let parameters = try Self.parameters(in: Dictionary(own.map { ($0.key, $0.value) }) { $1 }).parameters
        return (pairs.filter { !parameterKeys.contains(plain($0.key)) }, parameters)
    }

    /// A crowd: the beacons a description with a range for `major` or `minor` (`minor=1-200`)
    /// stands for, one per value (both ranged: every pair), each with the other keys as given;
    /// a description without a range is itself alone. At most `AdvertisingOptions.maximumBeacons`.
    /// A crowd's members each go out from an address of their own where an address is asked for
    /// (`address=static`, `rotate-address`), so one given address for them all is refused.
    /// - Parameter parameters: the members' own parameters, where the caller split them off
    ///   `pairs` (nil: read from `pairs`).
    /// - Throws: `Invalid` for a range that is not FROM-TO within 0 to 65535, too many beacons,
    ///   or one given address for several.
    public static func crowd(_ pairs: [(key: String, value: String)],
                             sharing parameters: BeaconParameters? = nil) throws(Invalid) -> [[(key: String, value: String)]] {
        var crowd: [[(key: String, value: String)]] = [pairs]
        for (index, pair) in pairs.enumerated() where ["major", "minor"].contains(plain(pair.key)) && pair.value.contains("-")
            && !pair.value.hasPrefix("-") {
            let ends = pair.value.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard ends.count == 2, let low = ends[0], let high = ends[1], 0 <= low, low <= high, high <= 65535 else {
                throw Invalid("\(pair.key) takes a number from 0 to 65535 or a range FROM-TO of them (a crowd: "
                              + "\(pair.key)=1-200), got '\(pair.value)'")
            }
            let count = crowd.count * (high - low + 1)
            guard count <= AdvertisingOptions.maximumBeacons else {
                throw Invalid("\(pair.key)=\(pair.value) makes \(count) beacons: an emitter carries at most "
                              + "\(AdvertisingOptions.maximumBeacons)")
            }
            crowd = crowd.flatMap { member in
                (low...high).map { value in
                    var one = member
                    one[index].value = "\(value)"
                    return one
                }
            }
        }
        guard crowd.count > 1 else { return crowd }
        let own = pairs.filter { parameterKeys.contains(plain($0.key)) }
        let shared: BeaconParameters
        if let parameters {
            shared = parameters
        } else {
            shared = try Self.parameters(in: Dictionary(own.map { ($0.key, $0.value) }) { $1 }).parameters
        }
        if case let .random(address)? = shared.address {
            throw Invalid("address=\(address) would give the crowd's \(crowd.count) beacons one address: address=static or "
                          + "non-resolvable gives each an address of its own")
        }
        return crowd
    }

    /// Each beacon of `uuid=...,major=1,minor=1-20,interval=200` (`--beacon`, a crowd where a
    /// range is given: `crowd(_:)`), with its own parameters.
    /// - Throws: `Invalid` naming what is wrong.
    public static func beaconsAndParameters(specification: String) throws(Invalid)
        -> [(beacon: Beacon, parameters: BeaconParameters)] {
        let (data, parameters) = try split(specification: specification)
        return try crowd(data, sharing: parameters).map { (member) throws(Invalid) in
            (try BeaconDescription(pairs: member).beacon(), parameters)
        }
    }

    /// A key as its spellings share it: `measured-power`, `measuredPower` and `measured_power` alike.
    public static func plain(_ key: String) -> String { key.lowercased().filter { $0 != "-" && $0 != "_" } }

    /// From `uuid=...,major=1,minor=2` (`KeyValueText`).
    /// - Throws: `Invalid` naming the item that is not `KEY=VALUE`, or the field that is wrong.
    public init(specification: String) throws(Invalid) {
        do {
            self = try Self(pairs: try KeyValueText.pairs(specification))
        } catch let malformed as KeyValueText.Malformed {
            throw Invalid("expected KEY=VALUE pairs separated by commas, got '\(malformed.item)'")
        } catch let invalid as Invalid {
            throw invalid
        } catch {
            throw Invalid("\(error)")
        }
    }

    /// From fields (a scenario's or a control request's), in the order of their keys.
    public init(fields: [String: String]) throws(Invalid) {
        try self.init(pairs: fields.sorted { $0.key < $1.key })
    }

    /// From `KEY=VALUE` pairs, in order (a later key replaces an earlier one's value; the
    /// repeatable ones add to it). Keys in any spelling: `measured-power`, `measuredPower`.
    /// - Throws: `Invalid` for an unknown key or a value that is not what its key takes.
    public init(pairs: [(key: String, value: String)]) throws(Invalid) {
        for (key, value) in pairs {
            given[Self.plain(key)] = value
            if ["type", "format"].contains(Self.plain(key)), let registered = BeaconFormats.registeredName(value) {
                registeredFormat = registered
                continue
            }
            if Self.keysByPlainName[Self.plain(key)] == nil, Self.registeredKeys.contains(Self.plain(key)) { continue }
            guard let option = Self.keysByPlainName[Self.plain(key)] else {
                if Self.parameterKeys.contains(Self.plain(key)) {
                    throw Invalid("\(key) is one of a beacon's own parameters ("
                                  + BeaconSetting.all.map(\.field).joined(separator: ", ") + "), not part of its data")
                }
                // Its own settings are keys a beacon takes too (a file and --beacon accept them).
                // The registered formats' keys last, each once.
                var all = Self.keys + BeaconSetting.all.map(\.key)
                for key in BeaconFormats.descriptionKeys where !all.contains(key) { all.append(key) }
                let nearest = NearestWord.nearest(to: key, in: all).map { " (did you mean '\($0)'?)" } ?? ""
                throw Invalid("unknown key '\(key)'\(nearest): a beacon takes \(all.joined(separator: ", "))")
            }
            switch option {
            case "type", "format":
                if value.lowercased() == "eddystone-url" { continue }  // the url= key selects Eddystone-URL
                guard let format = Format(rawValue: value.lowercased()) else {
                    let registered = BeaconFormats.registeredNames.map { ", \($0)" }.joined()
                    throw Invalid("type must be ibeacon, altbeacon, eddystone-uid, eddystone-tlm, eddystone-eid\(registered) "
                                  + "(or give url= for Eddystone-URL), got '\(value)'")
                }
                self.format = format
            case "url": eddystoneURL = value
            case "uuid": uuid = value
            case "major": major = try Self.integer(key, value)
            case "minor": minor = try Self.integer(key, value)
            case "measured-power": measuredPower = try Self.integer(key, value)
            case "company-id": companyID = value
            case "namespace": namespace = value
            case "instance": instance = value
            case "battery": battery = try Self.integer(key, value)
            case "temperature": temperature = try Self.number(key, value)
            case "pdu-count": pduCount = try Self.integer(key, value)
            case "uptime": uptime = try Self.number(key, value)
            case "identity-key": identityKey = value
            case "identity-key-file": identityKeyFile = value
            case "rotation-exponent": rotationExponent = try Self.integer(key, value)
            case "clock": clock = try Self.integer(key, value)
            case "ad": ad = value
            case "scan-response": scanResponse = value
            case "name": name = value
            case "manufacturer-data": manufacturerData.append(value)
            case "service-data": serviceData.append(value)
            case "service-uuid":
                // Several in one value (a configuration file's key holds one): space-separated.
                serviceUUIDs += value.split(separator: " ").map(String.init)
            case "flags": flags = value
            default:  // extended-pdu
                guard ["true", "yes", "1", "false", "no", "0"].contains(value.lowercased()) else {
                    throw Invalid("extended-pdu must be true or false, got '\(value)'")
                }
                extendedPDU = ["true", "yes", "1"].contains(value.lowercased())
            }
        }
    }

    /// The plain keys the registered formats take.
    private static var registeredKeys: Set<String> { Set(BeaconFormats.descriptionKeys.map(plain)) }

    /// The registered format's beacon, from the fields given: those it names, and `type`.
    private func registeredBeacon(_ format: any RegisteredBeaconFormat.Type) throws(Invalid) -> Beacon {
        let keys = Dictionary(format.descriptionKeys.map { (Self.plain($0), $0) }) { first, _ in first }
        if let stray = given.keys.sorted().first(where: { keys[$0] == nil && $0 != "type" && $0 != "format" }) {
            throw Invalid("\(stray) does not apply to a \(format.name) beacon: it takes \(format.descriptionKeys.joined(separator: ", "))")
        }
        let fields = Dictionary(uniqueKeysWithValues: given.compactMap { key, value in keys[key].map { ($0, value) } })
        do {
            return try Self.registered(format, fields)
        } catch {
            throw Invalid("\(format.name): \(error.message)")
        }
    }

    private static func registered<F: RegisteredBeaconFormat>(_ format: F.Type,
                                                              _ fields: [String: String]) throws(FormatDescriptionError) -> Beacon {
        .registered(RegisteredBeacon(try F(description: fields)))
    }

    private static func number(_ key: String, _ value: String) throws(Invalid) -> Double {
        guard let number = Double(value), number.isFinite else {
            throw Invalid("\(key) must be a number from \(numberRanges[plain(key)] ?? "its range"), got '\(value)'")
        }
        return number
    }

    private static func integer(_ key: String, _ value: String) throws(Invalid) -> Int {
        if let integer = Int(value) { return integer }
        // YAML and JSON write whole numbers as 7.0 now and then.
        let number = try number(key, value)
        guard number == number.rounded(), abs(number) < 1e15 else {
            throw Invalid("\(key) must be a whole number from \(numberRanges[plain(key)] ?? "its range"), got '\(value)'")
        }
        return Int(number)
    }

    /// The Eddystone-EID identity key: read from `identityKeyFile`, or `identityKey`'s digits;
    /// never repeated in a message.
    private func identityKeyBytes() throws(Invalid) -> [UInt8] {
        switch (identityKey, identityKeyFile) {
        case (nil, nil):
            throw Invalid("missing --identity-key-file (a file holding the key, 32 hex digits, that only its owner can read)")
        case (.some, .some):
            throw Invalid("--identity-key and --identity-key-file both give the key: give one (the file)")
        case let (key?, nil):
            return try IdentityKey.parse(key, "--identity-key")
        case let (nil, path?):
            return try IdentityKey.read(file: path, "--identity-key-file")
        }
    }

    /// The most advertising data allowed: 31 bytes, or 251 with extended PDUs.
    private var maximumLength: Int {
        extendedPDU ? AdvertisingData.extendedPDUMaximumLength : AdvertisingData.legacyMaximumLength
    }

    /// Whether nothing was described at all (another source may describe the beacons).
    public var isEmpty: Bool {
        !describesFormat && ad == nil && scanResponse == nil && !hasBuildingBlocks
    }

    /// Whether a building block was given (a name, manufacturer or service data, service UUIDs, Flags).
    private var hasBuildingBlocks: Bool {
        name != nil || !manufacturerData.isEmpty || !serviceData.isEmpty || !serviceUUIDs.isEmpty || flags != nil
    }

    /// Whether a beacon format's own field was given.
    private var describesFormat: Bool {
        format != nil || registeredFormat != nil || eddystoneURL != nil || uuid != nil || major != nil || minor != nil || measuredPower != nil
            || companyID != nil || namespace != nil || instance != nil || battery != nil || temperature != nil
            || pduCount != nil || uptime != nil || identityKey != nil || identityKeyFile != nil || rotationExponent != nil
            || clock != nil
    }

    /// The beacon described: a beacon format, any advertising data (`ad`), or building blocks
    /// alone or around a beacon format (`AdvertisingDataBuilder`).
    /// - Throws: `Invalid` naming the option (`--uuid`) and what is wrong.
    public func beacon() throws(Invalid) -> Beacon {
        if registeredFormat == nil,
           let stray = given.keys.sorted().first(where: { Self.keysByPlainName[$0] == nil && Self.registeredKeys.contains($0) }) {
            throw Invalid("\(stray) is a key of a registered format (\(BeaconFormats.registeredNames.joined(separator: ", "))): "
                          + "give its type= with it")
        }
        // Empty: scannable advertising whose scan response holds nothing (as a capture may have it).
        let response = try scanResponse.map { (hex) throws(Invalid) in
            hex.allSatisfy(\.isWhitespace) ? AdvertisingData()
                : try advertisingData(hex, "--scan-response", maximumLength: AdvertisingData.legacyMaximumLength)
        }
        if let ad {
            if describesFormat || hasBuildingBlocks {
                throw Invalid("--ad is the whole advertising data: it goes with no other beacon option (but --scan-response)")
            }
            let data = try advertisingData(ad, "--ad", maximumLength: maximumLength)
            guard !data.structures.isEmpty else { throw Invalid("--ad holds no AD structure") }
            return .custom(CustomAdvertisement(data: data, scanResponse: response))
        }
        guard hasBuildingBlocks || response != nil else { return try formatBeacon() }
        var builder = AdvertisingDataBuilder()
        builder.scanResponse = response
        if describesFormat { builder.beacon = try formatBeacon().advertisingData }
        if let flags { builder.flags = flags.lowercased() == "none" ? nil : ADFlags(rawValue: try Self.byte(flags, "--flags")) }
        builder.name = name
        for text in serviceUUIDs {
            do {
                builder.serviceUUIDs.append(try ServiceUUID(parsing: text))
            } catch {
                throw Invalid("--service-uuid \(text): \(error.reasonDescription)")
            }
        }
        for text in serviceData {
            let (key, bytes) = try Self.pair(text, "--service-data", "UUID:HEX")
            do {
                builder.serviceData.append(ServiceData(uuid: try ServiceUUID(parsing: key), data: bytes))
            } catch {
                throw Invalid("--service-data \(text): \(error.reasonDescription)")
            }
        }
        for text in manufacturerData {
            let (key, bytes) = try Self.pair(text, "--manufacturer-data", "ID:HEX")
            builder.manufacturerData.append(ManufacturerData(company: try Self.companyIdentifier(key, "--manufacturer-data"),
                                                             data: bytes))
        }
        do {
            return .custom(try builder.buildAdvertisement(maximumLength: maximumLength))
        } catch {
            throw Invalid("the advertising data does not fit: \(error.reasonDescription) "
                          + (extendedPDU ? "(extended PDUs here carry at most 251 bytes)"
                             : "(legacy advertising carries at most 31 bytes; --extended-pdu allows more)"))
        }
    }

    /// Advertising data given as hex, checked as AD structures within `maximumLength` bytes.
    private func advertisingData(_ hex: String, _ option: String, maximumLength: Int) throws(Invalid) -> AdvertisingData {
        do {
            let data = try AdvertisingData(parsing: try HexText.parse(hex))
            try data.validate(maximumLength: maximumLength)
            return data
        } catch {
            throw Invalid("\(option) \(hex): \(error)")
        }
    }

    /// `KEY:HEX` split, the bytes parsed.
    private static func pair(_ text: String, _ option: String, _ form: String) throws(Invalid) -> (String, [UInt8]) {
        guard let colon = text.firstIndex(of: ":") else { throw Invalid("\(option) takes \(form), got '\(text)'") }
        let hex = text[text.index(after: colon)...]
        do {
            return (String(text[..<colon]), hex.isEmpty ? [] : try HexText.parse(String(hex)))
        } catch {
            throw Invalid("\(option) \(text): \(error.reasonDescription)")
        }
    }

    /// One byte as hex (`06`, `0x1A`).
    private static func byte(_ text: String, _ option: String) throws(Invalid) -> UInt8 {
        guard let bytes = try? HexText.parse(text), bytes.count == 1 else {
            throw Invalid("\(option) takes one byte as hex (06) or none, got '\(text)'")
        }
        return bytes[0]
    }

    /// The beacon format the format fields describe.
    private func formatBeacon() throws(Invalid) -> Beacon {
        if let registeredFormat, let registered = BeaconFormats.named(registeredFormat) {
            return try registeredBeacon(registered)
        }
        if eddystoneURL != nil, let format {
            throw Invalid("--eddystone-url cannot be combined with --\(format.rawValue)")
        }
        let power = try Self.ranged(measuredPower, "--measured-power", -128...127, unit: " dBm",
                                    default: Int(IBeacon.defaultMeasuredPower))
        let powerAt0m = Int8(clamping: power + EddystoneFrame.zeroToOneMetreLoss)
        if let eddystoneURL {
            try rejectUnused()
            do {
                return .eddystone(.url(try EddystoneURL(txPowerAt0m: powerAt0m, url: eddystoneURL)))
            } catch {
                throw Invalid("--eddystone-url: \(error.reasonDescription)")
            }
        }
        let eidKeys = [("--identity-key", identityKey != nil), ("--identity-key-file", identityKeyFile != nil),
                       ("--rotation-exponent", rotationExponent != nil), ("--clock", clock != nil)]
        if format != .eddystoneEID, let (name, _) = eidKeys.first(where: \.1) {
            throw Invalid("\(name) describes an Eddystone-EID beacon: give --eddystone-eid (type=eddystone-eid) with it")
        }
        switch format ?? .ibeacon {
        case .ibeacon:
            return .iBeacon(IBeacon(proximityUUID: try requiredUUID(), major: try Self.required(major, "--major"),
                                    minor: try Self.required(minor, "--minor"), measuredPower: Int8(power)))
        case .altbeacon:
            let company = try companyID.map { (text) throws(Invalid) in try Self.companyIdentifier(text, "--company-id") }
                ?? .radiusNetworks
            return .altBeacon(AltBeacon(company: company, id1: try requiredUUID(), id2: try Self.required(major, "--major"),
                                        id3: try Self.required(minor, "--minor"), measuredPower: Int8(power)))
        case .eddystoneUID:
            try rejectUnused()
            let namespace = try Self.hexBytes(namespace, "--namespace", count: 10)
            let instance = try Self.hexBytes(instance, "--instance", count: 6)
            do {
                return .eddystone(.uid(try EddystoneUID(txPowerAt0m: powerAt0m, namespace: namespace, instance: instance)))
            } catch {
                throw Invalid("\(error.reasonDescription)")
            }
        case .eddystoneEID:
            try rejectUnused()
            let key = try identityKeyBytes()
            let exponent = try Self.ranged(rotationExponent, "--rotation-exponent", 0...15, default: 10)
            let counter = try Self.ranged(clock, "--clock", 0...Int(UInt32.max), unit: " (seconds)", default: 0)
            do {
                let identity = try EddystoneEIDIdentity(identityKey: key, rotationExponent: UInt8(exponent))
                return .eddystone(.eid(EddystoneEID(txPowerAt0m: powerAt0m, identity: identity, counter: UInt32(counter),
                                                    aes: BoringAES())))
            } catch {
                throw Invalid("\(error.reasonDescription)")
            }
        case .eddystoneTLM:
            try rejectUnused()
            var rawTemperature = EddystoneTLM.temperatureNotSupported
            if let temperature {
                // 8.8 fixed point; -128.0 (0x8000) is reserved for "not supported".
                let raw = (temperature * 256).rounded()
                guard raw.isFinite, raw > -32768, raw <= 32767 else {
                    throw Invalid("--temperature must be from -127.99 to 127.99 degrees C, got \(temperature)")
                }
                rawTemperature = Int16(raw)
            }
            var uptimeTenths = 0
            if let uptime {
                let tenths = (uptime * 10).rounded()
                guard tenths.isFinite, tenths >= 0, tenths <= Double(UInt32.max) else {
                    throw Invalid("--uptime must be from 0 to 429496729.5 seconds, got \(uptime)")
                }
                uptimeTenths = Int(tenths)
            }
            return .eddystone(.tlm(EddystoneTLM(
                batteryMillivolts: UInt16(try Self.ranged(battery, "--battery", 0...65535, default: 0)),
                rawTemperature: rawTemperature,
                advertisingPDUCount: UInt32(try Self.ranged(pduCount, "--pdu-count", 0...Int(UInt32.max), default: 0)),
                uptimeDeciseconds: UInt32(uptimeTenths))))
        }
    }

    /// The UUID given; `random`: a new one (version 4), which the beacon's line prints for reuse.
    private func requiredUUID() throws(Invalid) -> UUID {
        guard let uuid else { throw Invalid("missing --uuid (32 hex digits, dashes optional; or random)") }
        if uuid.lowercased() == "random" { return UUID() }
        do {
            return try UUID(beaconText: uuid)
        } catch {
            throw Invalid("--uuid '\(uuid)': \(error.reasonDescription)")
        }
    }

    private static func required(_ value: Int?, _ name: String) throws(Invalid) -> UInt16 {
        guard let value else { throw Invalid("missing \(name) (0 to 65535)") }
        return UInt16(try ranged(value, name, 0...65535, default: 0))
    }

    private static func ranged(_ value: Int?, _ name: String, _ range: ClosedRange<Int>, unit: String = "",
                               default fallback: Int) throws(Invalid) -> Int {
        guard let value else { return fallback }
        guard range.contains(value) else {
            throw Invalid("\(name) must be from \(range.lowerBound) to \(range.upperBound)\(unit), got \(value)")
        }
        return value
    }

    /// The iBeacon identifiers, refused for formats that do not have them.
    private func rejectUnused() throws(Invalid) {
        for (name, given) in [("--major", major != nil), ("--minor", minor != nil), ("--uuid", uuid != nil)] where given {
            throw Invalid("\(name) does not apply to this beacon format")
        }
    }

    private static func companyIdentifier(_ text: String, _ option: String) throws(Invalid) -> CompanyIdentifier {
        let hex = text.lowercased().hasPrefix("0x")
        let value = hex ? Int(text.dropFirst(2), radix: 16) : Int(text)
        guard let value, (0...0xFFFF).contains(value) else {
            throw Invalid("\(option): the company ID must be from 0x0000 to 0xFFFF (decimal or 0x hex), got '\(text)'")
        }
        return CompanyIdentifier(UInt16(value))
    }

    /// `count` bytes given as hex digits in option `name`.
    public static func hexBytes(_ text: String?, _ name: String, count: Int) throws(Invalid) -> [UInt8] {
        guard let text else { throw Invalid("missing \(name) (\(count * 2) hex digits)") }
        let bytes: [UInt8]
        do {
            bytes = try HexText.parse(text)
        } catch {
            throw Invalid("\(name) takes \(count * 2) hex digits (\(count) bytes): '\(text)': \(error.reasonDescription)")
        }
        guard bytes.count == count else {
            throw Invalid("\(name) must be \(count) bytes (\(count * 2) hex digits), got \(bytes.count) bytes")
        }
        return bytes
    }

    /// The beacon `fields` describe (the `BeaconFactory` scenarios and control requests use).
    /// - Throws: `Invalid` saying what is wrong.
    @Sendable public static func beacon(fromFields fields: [String: String]) throws -> Beacon {
        try BeaconDescription(fields: fields).beacon()
    }

    /// A beacon's fields in the description's keys, from which `init(fields:)` and `beacon()`
    /// build the same beacon again (what a live update starts from).
    public static func fields(of beacon: Beacon) -> [String: String] {
        beacon.format.descriptionFields
    }
}
