// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import Foundation

/// One beacon as people describe it, in the beacon options' names: the command line's options,
/// `--beacon KEY=VALUE,...`, a configuration file, a scenario and a control request all fill
/// this one model, and `beacon()` is the one place a beacon is built from it and checked.
public struct BeaconDescription: Sendable, Equatable {
    /// The format `type=` names (`BeaconFormats.all(named:)`); none: the format whose
    /// selecting key is given (`url=`: Eddystone-URL), else the first (iBeacon).
    public var format: String?
    /// The format's fields given, by their plain keys (`plain`): the format reads them.
    public var given: [String: String] = [:]
    public var ad: String?
    public var scanResponse: String?
    public var name: String?
    public var manufacturerData: [String] = []
    public var serviceData: [String] = []
    public var serviceUUIDs: [String] = []
    public var flags: String?
    public var extendedPDU = false

    public init() {}

    /// What is wrong with a description: a message naming the option or key.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The keys of the advertising data around or instead of a format (`AdvertisingDataBuilder`).
    public static let buildingBlockKeys = ["ad", "scan-response", "name", "manufacturer-data", "service-data", "service-uuid",
                                           "flags", "extended-pdu"]

    /// The plain keys that list values, space-separated (`ids=0x01020304 258`, `channels=37 38`):
    /// a layout's identifiers and data fields (`LayoutBeacon`) and the settings that take lists;
    /// a file and a control request give them as lists.
    public static let listKeys = Set(["ids", "data"] + AnyBeaconSetting.all.filter(\.takesList).flatMap(\.plainNames))

    /// The keys a description takes: `type`, the formats' (`BeaconFormats.descriptionKeys`), the
    /// building blocks'.
    public static var keys: [String] { ["type", "format"] + BeaconFormats.descriptionKeys + buildingBlockKeys }

    /// What each key that takes a number takes, by its plain key (`plain`), as the formats and
    /// a beacon's own settings (`BeaconSetting`) say.
    public static var numberRanges: [String: String] {
        var ranges: [String: String] = [:]
        for format in BeaconFormats.all {
            for (key, range) in format.numberRanges { ranges[plain(key)] = range }
        }
        for setting in AnyBeaconSetting.all { if let range = setting.rangeText { ranges[setting.plain] = range } }
        return ranges
    }

    /// Sets a format's field (`uuid`, in any spelling) when a value is given.
    public mutating func set(_ key: String, _ value: (some CustomStringConvertible)?) {
        if let value { given[Self.plain(key)] = value.description }
    }

    /// What the formats' descriptions get from this host: a secret's file read as only its
    /// owner may (`IdentityKey`), and AES.
    static let host = DescriptionHost(
        readSecret: { (path, key) throws(FormatDescriptionError) in
            do throws(Invalid) { return try IdentityKey.read(file: path, "--\(key)") } catch { throw FormatDescriptionError(error.message) }
        },
        parseSecret: { (text, key) throws(FormatDescriptionError) in
            do throws(Invalid) { return try IdentityKey.parse(text, "--\(key)") } catch { throw FormatDescriptionError(error.message) }
        },
        aes: BoringAES())

    /// The plain keys of a beacon's own settings (`BeaconSetting`): a scenario's and
    /// `advertise`'s beacons take them (each beacon on a set or instance of its own); they are
    /// not the beacon's data, so `init(pairs:)` refuses them.
    public static let parameterKeys = Set(AnyBeaconSetting.all.flatMap(\.plainNames))

    /// `fields` apart: the beacon's data fields and its own parameters (for
    /// `beacon(fromFields:parameters:)`, whose data may hold what the PDUs they ask for carry).
    /// - Throws: `Invalid` for a setting's value it does not take (`BeaconSetting`), or settings
    ///   that do not go together.
    public static func parameters(in fields: [String: String]) throws(Invalid)
        -> (fields: [String: String], parameters: BeaconParameters) {
        var rest: [String: String] = [:]
        var parameters = BeaconParameters.run
        for (key, value) in fields {
            if let setting = AnyBeaconSetting.named(key) {
                try setting.read(key, value, into: &parameters)
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
        return (try BeaconDescription(pairs: data).beacon(parameters: parameters), parameters)
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
            (try BeaconDescription(pairs: member).beacon(parameters: parameters), parameters)
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
        let formatKeys = Set(BeaconFormats.descriptionKeys.map(Self.plain))
        for (key, value) in pairs {
            let plainKey = Self.plain(key)
            if plainKey == "type" || plainKey == "format" {
                guard let described = BeaconFormats.named(value) else { throw Invalid(Self.unknownType(value)) }
                format = described.name
                continue
            }
            if formatKeys.contains(plainKey) {
                given[plainKey] = value
                continue
            }
            guard let option = Self.buildingBlockKeys.first(where: { Self.plain($0) == plainKey }) else {
                if Self.parameterKeys.contains(plainKey) {
                    throw Invalid("\(key) is one of a beacon's own parameters ("
                                  + AnyBeaconSetting.all.map(\.field).joined(separator: ", ") + "), not part of its data")
                }
                // Its own settings are keys a beacon takes too (a file and --beacon accept them).
                let all = Self.keys + AnyBeaconSetting.all.map(\.key)
                let nearest = NearestWord.nearest(to: key, in: all).map { " (did you mean '\($0)'?)" } ?? ""
                throw Invalid("unknown key '\(key)'\(nearest): a beacon takes \(all.joined(separator: ", "))")
            }
            switch option {
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

    /// The message for a `type=` no format takes: the formats' names, and those a key selects.
    private static func unknownType(_ value: String) -> String {
        var names: [String] = []
        var selected = ""
        for format in BeaconFormats.all {
            let name = format.name
            names.append(name)
            if let key = format.selectingKey { selected += " (or give \(key)= for \(name))" }
        }
        return "type must be \(names.joined(separator: ", "))\(selected), got '\(value)'"
    }

    /// The most advertising data a beacon with parameters `own` carries: 31 bytes, or 251 in
    /// the extended PDUs `--extended-pdu` (`extended-pdu=true`) or its own `pdu=extended` asks
    /// for, as the advertisers decide it (`BeaconParameters.maximumDataLength(whereTheRunSends:)`).
    private func maximumLength(_ own: BeaconParameters) -> Int {
        own.maximumDataLength(whereTheRunSends: extendedPDU)
    }

    /// What a refusal of data too long for `own`'s PDUs adds: what carries more.
    private func longerData(_ own: BeaconParameters) -> String {
        if maximumLength(own) > AdvertisingData.legacyMaximumLength { return "(extended PDUs here carry at most 251 bytes)" }
        if own.pdu == .legacy { return "(its pdu=legacy carries at most 31 bytes)" }
        return "(legacy advertising carries at most 31 bytes; --extended-pdu, or pdu=extended for the beacon alone, allows more)"
    }

    /// Whether nothing was described at all (another source may describe the beacons).
    public var isEmpty: Bool {
        !describesFormat && ad == nil && scanResponse == nil && !hasBuildingBlocks
    }

    /// Whether a building block was given (a name, manufacturer or service data, service UUIDs, Flags).
    private var hasBuildingBlocks: Bool {
        name != nil || !manufacturerData.isEmpty || !serviceData.isEmpty || !serviceUUIDs.isEmpty || flags != nil
    }

    /// Whether a beacon format or one of its fields was given.
    private var describesFormat: Bool { format != nil || !given.isEmpty }

    /// The beacon described: a beacon format, any advertising data (`ad`), or building blocks
    /// alone or around a beacon format (`AdvertisingDataBuilder`).
    /// - Parameter parameters: the beacon's own (`pdu=extended`: its data may be longer than a
    ///   legacy PDU carries).
    /// - Throws: `Invalid` naming the option (`--uuid`) and what is wrong.
    public func beacon(parameters: BeaconParameters = .run) throws(Invalid) -> Beacon {
        // Empty: scannable advertising whose scan response holds nothing (as a capture may have it).
        let response = try scanResponse.map { (hex) throws(Invalid) in
            hex.allSatisfy(\.isWhitespace) ? AdvertisingData()
                : try advertisingData(hex, "--scan-response", maximumLength: AdvertisingData.legacyMaximumLength)
        }
        if format == nil && given["layout"] == nil && ["ids", "data"].contains(where: { given[$0] != nil }) {
            throw Invalid("--id and --data are a layout's identifiers and data fields: give its --layout")
        }
        if let ad {
            if describesFormat || hasBuildingBlocks {
                throw Invalid("--ad is the whole advertising data: it goes with no other beacon option (but --scan-response)")
            }
            let data = try advertisingData(ad, "--ad", maximumLength: maximumLength(parameters))
            guard !data.structures.isEmpty else { throw Invalid("--ad holds no AD structure") }
            return .custom(CustomAdvertisement(data: data, scanResponse: response))
        }
        guard hasBuildingBlocks || response != nil else { return try formatBeacon(parameters) }
        var builder = AdvertisingDataBuilder()
        builder.scanResponse = response
        if describesFormat {
            builder.beacon = try formatBeacon(parameters).advertisingData
        }
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
            return .custom(try builder.buildAdvertisement(maximumLength: maximumLength(parameters)))
        } catch {
            throw Invalid("the advertising data does not fit: \(error.reasonDescription) \(longerData(parameters))")
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

    /// The beacon the format's fields describe, built by the format, within what `own`'s PDUs carry.
    private func formatBeacon(_ own: BeaconParameters) throws(Invalid) -> Beacon {
        let format = try describedFormat()
        let keys = Dictionary(format.descriptionKeys.map { (Self.plain($0), $0) }) { first, _ in first }
        if let stray = given.keys.sorted().first(where: { keys[$0] == nil }) {
            throw Invalid(Self.stray(stray, for: format))
        }
        let fields = Dictionary(uniqueKeysWithValues: given.compactMap { key, value in keys[key].map { ($0, value) } })
        let beacon: Beacon
        do throws(FormatDescriptionError) {
            beacon = try format.beacon(described: DescribedFields(fields, host: Self.host))
        } catch {
            throw Invalid(error.message)
        }
        // A format whose fields are given (a layout's, a program's) may make more than a PDU holds.
        do {
            try beacon.advertisingData.validate(maximumLength: maximumLength(own))
        } catch {
            throw Invalid("the beacon does not fit: \(error.reasonDescription) \(longerData(own))")
        }
        return beacon
    }

    /// The format described: `type=`'s, else the one whose selecting key is given, else the first.
    private func describedFormat() throws(Invalid) -> BeaconFormatRegistration {
        let formats = BeaconFormats.all
        if let format {
            guard let described = BeaconFormats.named(format) else { throw Invalid(Self.unknownType(format)) }
            return described
        }
        return formats.first { $0.selectingKey.map { given[Self.plain($0)] != nil } ?? false } ?? formats[0]
    }

    /// The message for a key `format` does not take (`plain`), naming the formats that do.
    private static func stray(_ plainKey: String, for format: BeaconFormatRegistration) -> String {
        let takers = BeaconFormats.all.filter { $0.descriptionKeys.contains { plain($0) == plainKey } }
        let key = takers.first?.descriptionKeys.first { plain($0) == plainKey } ?? plainKey
        let article = format.name.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        let takes = format.descriptionKeys.isEmpty ? "it takes none" : "it takes " + format.descriptionKeys.joined(separator: ", ")
        guard takers.count == 1, let taker = takers.first else { return "\(key) does not apply to \(article) \(format.name) beacon: \(takes)" }
        // The command has a flag for each of the codec's own formats that no key selects.
        let flagged = taker.selectingKey == nil && BeaconFormats.ownNames.contains(taker.name)
        let flag = flagged ? " (--\(taker.name))" : ""
        return "\(key) does not apply to \(article) \(format.name) beacon (\(takes)): it describes \(taker.name), "
            + "so give type=\(taker.name)\(flag) with it"
    }

    private static func companyIdentifier(_ text: String, _ option: String) throws(Invalid) -> CompanyIdentifier {
        do throws(FormatDescriptionError) {
            return try DescribedFields.company(text, option)
        } catch {
            throw Invalid(error.message)
        }
    }

    /// `count` bytes given as hex digits in option `name`.
    public static func hexBytes(_ text: String?, _ name: String, count: Int) throws(Invalid) -> [UInt8] {
        do {
            return try DescribedFields.bytes(text, name, count: count)
        } catch {
            throw Invalid(error.message)
        }
    }

    /// The telemetry frame that goes out interleaved with Eddystone's identifying frames
    /// (`--interleave-tlm battery=2900,temperature=21.5`): the TLM format's keys alone.
    /// - Throws: `Invalid` naming a key it does not take or a value out of its range.
    public static func interleavedTelemetry(_ text: String) throws(Invalid) -> Beacon {
        let format = EddystoneTLM.self
        let expected = "expected battery=MV, temperature=C, pdu-count=N, uptime=S (comma-separated), got"
        let pairs: [(key: String, value: String)]
        do {
            pairs = try KeyValueText.pairs(text)
        } catch {
            throw Invalid("\(expected) '\(error.item)'")
        }
        let keys = Dictionary(format.descriptionKeys.map { (plain($0), $0) }) { first, _ in first }
        var fields: [String: String] = [:]
        for (key, value) in pairs {
            guard let own = keys[plain(key)] else { throw Invalid("\(expected) '\(key)=\(value)'") }
            fields[own] = value
        }
        do {
            return try format.beacon(described: DescribedFields(fields))
        } catch {
            throw Invalid(error.message)
        }
    }

    /// The beacon `fields` describe, with its own `parameters` (the `BeaconFactory` scenarios
    /// and control requests use).
    /// - Throws: `Invalid` saying what is wrong.
    @Sendable public static func beacon(fromFields fields: [String: String],
                                        parameters: BeaconParameters = .run) throws -> Beacon {
        try BeaconDescription(fields: fields).beacon(parameters: parameters)
    }

    /// A beacon's fields in the description's keys, from which `init(fields:)` and `beacon()`
    /// build the same beacon again (what a live update starts from).
    public static func fields(of beacon: Beacon) -> [String: String] {
        beacon.format.descriptionFields
    }
}
