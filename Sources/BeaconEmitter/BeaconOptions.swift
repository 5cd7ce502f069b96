// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which beacon format to build; iBeacon unless a flag says otherwise.
enum BeaconFormat: String, EnumerableFlag {
    case ibeacon, altbeacon, eddystoneUID, eddystoneTLM

    /// The flag's spelling, without dashes.
    var flagName: String {
        switch self {
        case .ibeacon: "ibeacon"
        case .altbeacon: "altbeacon"
        case .eddystoneUID: "eddystone-uid"
        case .eddystoneTLM: "eddystone-tlm"
        }
    }

    static func name(for value: BeaconFormat) -> NameSpecification { .customLong(value.flagName) }

    static func help(for value: BeaconFormat) -> ArgumentHelp? {
        switch value {
        case .ibeacon: "Apple iBeacon (the default): --uuid, --major, --minor."
        case .altbeacon: "AltBeacon: --uuid, --major, --minor as id1, id2, id3; --company-id."
        case .eddystoneUID: "Eddystone-UID: --namespace, --instance."
        case .eddystoneTLM: "Eddystone-TLM telemetry: --battery, --temperature, --pdu-count, --uptime."
        }
    }
}

/// The options that describe one beacon, shared by every command that builds one.
struct BeaconOptions: ParsableArguments {
    @Flag(help: "Beacon format.")
    var format: BeaconFormat?

    @Option(name: .customLong("eddystone-url"), help: "Eddystone-URL beacon for this URL.")
    var eddystoneURL: String?

    @Option(help: "Proximity UUID (iBeacon), id1 (AltBeacon): 32 hex digits, dashes optional.")
    var uuid: String?

    @Option(parsing: .unconditional, help: "Major (iBeacon) or id2 (AltBeacon), 0 to 65535.")
    var major: Int?

    @Option(parsing: .unconditional, help: "Minor (iBeacon) or id3 (AltBeacon), 0 to 65535.")
    var minor: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "RSSI at 1 m in dBm, -128 to 127 (default -59). Eddystone sends it at 0 m, 41 dB higher.",
        valueName: "dBm"))
    var measuredPower: Int?

    @Option(help: "AltBeacon company ID, 0x0000 to 0xFFFF (default 0x0118).")
    var companyId: String?

    @Option(help: "Eddystone-UID namespace: 20 hex digits (10 bytes).")
    var namespace: String?

    @Option(help: "Eddystone-UID instance: 12 hex digits (6 bytes).")
    var instance: String?

    @Option(parsing: .unconditional, help: "Eddystone-TLM battery voltage in mV, 0 to 65535.")
    var battery: Int?

    @Option(parsing: .unconditional, help: "Eddystone-TLM temperature in degrees C, -127.99 to 127.99 (omit: not supported).")
    var temperature: Double?

    @Option(parsing: .unconditional, help: "Eddystone-TLM advertising PDU count, 0 to 4294967295.")
    var pduCount: Int?

    @Option(parsing: .unconditional, help: "Eddystone-TLM time since power-up in seconds, 0 to 429496729.5.")
    var uptime: Double?

    @Option(help: ArgumentHelp("The whole advertising data, advertised byte for byte: AD structures "
                               + "(length, type, data), at most 31 bytes. Goes with no other beacon option.",
                               valueName: "hex"))
    var ad: String?

    @Option(help: ArgumentHelp("What a scanner that asks gets (active scanning): AD structures, at most 31 bytes. "
                               + "The advertising becomes scannable (ADV_SCAN_IND; ADV_IND with --connectable).",
                               valueName: "hex"))
    var scanResponse: String?

    @Option(help: ArgumentHelp("A Complete Local Name; where it does not fit whole, a Shortened one in the data and "
                               + "the whole name in the scan response.", valueName: "text"))
    var name: String?

    @Option(help: ArgumentHelp("Manufacturer specific data: the company ID (0x hex or decimal), a colon, the "
                               + "bytes after it. Repeatable.", valueName: "id:hex"))
    var manufacturerData: [String] = []

    @Option(help: ArgumentHelp("Service data: the service's UUID (16, 32 or 128-bit), a colon, the bytes after it. "
                               + "Repeatable.", valueName: "uuid:hex"))
    var serviceData: [String] = []

    @Option(help: ArgumentHelp("A service UUID for the complete list of its width (16, 32 or 128-bit). Repeatable.",
                               valueName: "uuid"))
    var serviceUuid: [String] = []

    @Option(help: ArgumentHelp("The Flags byte (default 06: LE General Discoverable, BR/EDR Not Supported), or "
                               + "none for no Flags structure.", valueName: "hex|none"))
    var flags: String?

    @Flag(help: ArgumentHelp("Allow advertising data over 31 bytes (to 251), sent in extended advertising PDUs: "
                             + "phones and apps that scan for legacy advertising do not see it."))
    var extendedPdu = false

    /// The most advertising data the options allow: 31 bytes, or 251 with --extended-pdu.
    private var maximumLength: Int {
        extendedPdu ? AdvertisingData.extendedPDUMaximumLength : AdvertisingData.legacyMaximumLength
    }

    /// Whether no beacon option was given at all (another source may describe the beacons).
    var isEmpty: Bool {
        format == nil && eddystoneURL == nil && uuid == nil && major == nil && minor == nil && measuredPower == nil
            && companyId == nil && namespace == nil && instance == nil && battery == nil && temperature == nil
            && pduCount == nil && uptime == nil && ad == nil && scanResponse == nil && !hasBuildingBlocks
    }

    /// Whether a building block was given (a name, manufacturer or service data, service UUIDs, Flags).
    private var hasBuildingBlocks: Bool {
        name != nil || !manufacturerData.isEmpty || !serviceData.isEmpty || !serviceUuid.isEmpty || flags != nil
    }

    /// Whether a beacon format's own option was given.
    private var describesFormat: Bool {
        format != nil || eddystoneURL != nil || uuid != nil || major != nil || minor != nil || measuredPower != nil
            || companyId != nil || namespace != nil || instance != nil || battery != nil || temperature != nil
            || pduCount != nil || uptime != nil
    }

    func validate() throws {
        if !isEmpty { _ = try makeBeacon() }
    }

    /// The beacon these options describe: a beacon format, any advertising data (`--ad`), or
    /// building blocks alone or around a beacon format (`AdvertisingDataBuilder`).
    /// - Throws: `ValidationError` naming the option and what is wrong.
    func makeBeacon() throws -> Beacon {
        let response = try scanResponse.map { try advertisingData($0, "--scan-response", maximumLength: AdvertisingData.legacyMaximumLength) }
        if let ad {
            if describesFormat || hasBuildingBlocks {
                throw ValidationError("--ad is the whole advertising data: it goes with no other beacon option "
                                      + "(but --scan-response)")
            }
            let data = try advertisingData(ad, "--ad", maximumLength: maximumLength)
            guard !data.structures.isEmpty else { throw ValidationError("--ad holds no AD structure") }
            return .custom(CustomAdvertisement(data: data, scanResponse: response))
        }
        guard hasBuildingBlocks || response != nil else { return try makeFormat() }
        var builder = AdvertisingDataBuilder()
        builder.scanResponse = response
        if describesFormat { builder.beacon = try makeFormat().advertisingData }
        do {
            if let flags {
                builder.flags = flags.lowercased() == "none" ? nil : ADFlags(rawValue: try byte(flags, "--flags"))
            }
            builder.name = name
            for text in serviceUuid {
                do {
                    builder.serviceUUIDs.append(try ServiceUUID(parsing: text))
                } catch {
                    throw ValidationError("--service-uuid \(text): \(error.reasonDescription)")
                }
            }
            for text in serviceData {
                let (key, bytes) = try pair(text, "--service-data", "UUID:HEX")
                do {
                    builder.serviceData.append(ServiceData(uuid: try ServiceUUID(parsing: key), data: bytes))
                } catch {
                    throw ValidationError("--service-data \(text): \(error.reasonDescription)")
                }
            }
            for text in manufacturerData {
                let (key, bytes) = try pair(text, "--manufacturer-data", "ID:HEX")
                builder.manufacturerData.append(ManufacturerData(company: try parseCompanyID(key, option: "--manufacturer-data"),
                                                                 data: bytes))
            }
            return .custom(try builder.buildAdvertisement(maximumLength: maximumLength))
        } catch let error as CodecError {
            throw ValidationError("the advertising data does not fit: \(error.reasonDescription) "
                                  + (extendedPdu ? "(extended PDUs here carry at most 251 bytes)"
                                     : "(legacy advertising carries at most 31 bytes; --extended-pdu allows more)"))
        }
    }

    /// Advertising data given as hex, checked as AD structures within `maximumLength` bytes.
    private func advertisingData(_ hex: String, _ option: String, maximumLength: Int) throws -> AdvertisingData {
        do {
            let data = try AdvertisingData(parsing: try HexText.parse(hex))
            try data.validate(maximumLength: maximumLength)
            return data
        } catch {
            throw ValidationError("\(option) \(hex): \(error)")
        }
    }

    /// `KEY:HEX` split, the bytes parsed.
    private func pair(_ text: String, _ option: String, _ form: String) throws -> (String, [UInt8]) {
        guard let colon = text.firstIndex(of: ":") else { throw ValidationError("\(option) takes \(form), got '\(text)'") }
        let hex = text[text.index(after: colon)...]
        do {
            return (String(text[..<colon]), hex.isEmpty ? [] : try HexText.parse(String(hex)))
        } catch {
            throw ValidationError("\(option) \(text): \(error.reasonDescription)")
        }
    }

    /// One byte as hex (`06`, `0x1A`).
    private func byte(_ text: String, _ option: String) throws -> UInt8 {
        guard let bytes = try? HexText.parse(text), bytes.count == 1 else {
            throw ValidationError("\(option) takes one byte as hex (06) or none, got '\(text)'")
        }
        return bytes[0]
    }

    /// The beacon format the format options describe.
    private func makeFormat() throws -> Beacon {
        if eddystoneURL != nil, let format {
            throw ValidationError("--eddystone-url cannot be combined with --\(format.flagName)")
        }
        let power = try ranged(measuredPower, "--measured-power", -128...127, unit: " dBm", default: Int(IBeacon.defaultMeasuredPower))
        let powerAt0m = Int8(clamping: power + EddystoneFrame.zeroToOneMetreLoss)
        if let eddystoneURL {
            try rejectUnused(["--uuid": uuid, "--major": major, "--minor": minor])
            do {
                return .eddystone(.url(try EddystoneURL(txPowerAt0m: powerAt0m, url: eddystoneURL)))
            } catch {
                throw ValidationError("--eddystone-url: \(error.reasonDescription)")
            }
        }
        switch format ?? .ibeacon {
        case .ibeacon:
            return .iBeacon(IBeacon(proximityUUID: try requiredUUID(), major: try required(major, "--major"),
                                    minor: try required(minor, "--minor"), measuredPower: Int8(power)))
        case .altbeacon:
            let company = try companyId.map { try parseCompanyID($0, option: "--company-id") } ?? .radiusNetworks
            return .altBeacon(AltBeacon(company: company, id1: try requiredUUID(), id2: try required(major, "--major"),
                                        id3: try required(minor, "--minor"), measuredPower: Int8(power)))
        case .eddystoneUID:
            try rejectUnused(["--uuid": uuid, "--major": major, "--minor": minor])
            let namespace = try hexBytes(namespace, "--namespace", count: 10)
            let instance = try hexBytes(instance, "--instance", count: 6)
            return .eddystone(.uid(try EddystoneUID(txPowerAt0m: powerAt0m, namespace: namespace, instance: instance)))
        case .eddystoneTLM:
            try rejectUnused(["--uuid": uuid, "--major": major, "--minor": minor])
            var rawTemperature = EddystoneTLM.temperatureNotSupported
            if let temperature {
                // 8.8 fixed point; -128.0 (0x8000) is reserved for "not supported".
                let raw = (temperature * 256).rounded()
                guard raw.isFinite, raw > -32768, raw <= 32767 else {
                    throw ValidationError("--temperature must be from -127.99 to 127.99 degrees C, got \(temperature)")
                }
                rawTemperature = Int16(raw)
            }
            var uptimeTenths = 0
            if let uptime {
                let tenths = (uptime * 10).rounded()
                guard tenths.isFinite, tenths >= 0, tenths <= Double(UInt32.max) else {
                    throw ValidationError("--uptime must be from 0 to 429496729.5 seconds, got \(uptime)")
                }
                uptimeTenths = Int(tenths)
            }
            return .eddystone(.tlm(EddystoneTLM(
                batteryMillivolts: UInt16(try ranged(battery, "--battery", 0...65535, default: 0)),
                rawTemperature: rawTemperature,
                advertisingPDUCount: UInt32(try ranged(pduCount, "--pdu-count", 0...Int(UInt32.max), default: 0)),
                uptimeDeciseconds: UInt32(uptimeTenths))))
        }
    }

    private func requiredUUID() throws -> UUID {
        guard let uuid else { throw ValidationError("missing --uuid (32 hex digits, dashes optional)") }
        do {
            return try UUID(beaconText: uuid)
        } catch {
            throw ValidationError("--uuid '\(uuid)': \(error.reasonDescription)")
        }
    }

    private func required(_ value: Int?, _ name: String) throws -> UInt16 {
        guard let value else { throw ValidationError("missing \(name) (0 to 65535)") }
        return UInt16(try ranged(value, name, 0...65535, default: 0))
    }

    private func ranged(_ value: Int?, _ name: String, _ range: ClosedRange<Int>, unit: String = "",
                        default fallback: Int) throws -> Int {
        guard let value else { return fallback }
        guard range.contains(value) else {
            throw ValidationError("\(name) must be from \(range.lowerBound) to \(range.upperBound)\(unit), got \(value)")
        }
        return value
    }

    private func rejectUnused(_ options: [String: Any?]) throws {
        for (name, value) in options.sorted(by: { $0.key < $1.key }) where value != nil {
            throw ValidationError("\(name) does not apply to this beacon format")
        }
    }


    private func parseCompanyID(_ text: String, option: String) throws -> CompanyIdentifier {
        let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        let value = text.lowercased().hasPrefix("0x") ? Int(digits, radix: 16) : Int(digits)
        guard let value, (0...0xFFFF).contains(value) else {
            throw ValidationError("\(option): the company ID must be from 0x0000 to 0xFFFF (decimal or 0x hex), got '\(text)'")
        }
        return CompanyIdentifier(UInt16(value))
    }
}

/// `count` bytes given as hex digits in option `name`.
func hexBytes(_ text: String?, _ name: String, count: Int) throws -> [UInt8] {
    guard let text else { throw ValidationError("missing \(name) (\(count * 2) hex digits)") }
    let bytes: [UInt8]
    do {
        bytes = try HexText.parse(text)
    } catch {
        throw ValidationError("\(name) '\(text)': \(error.reasonDescription)")
    }
    guard bytes.count == count else {
        throw ValidationError("\(name) must be \(count) bytes (\(count * 2) hex digits), got \(bytes.count) bytes")
    }
    return bytes
}
