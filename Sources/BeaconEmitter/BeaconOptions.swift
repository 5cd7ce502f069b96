// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconRig
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which beacon format to build; iBeacon unless a flag says otherwise. swift-argument-parser
/// needs its flags as a static list: this is the one, each flag spelled as its format's name,
/// its help the format's own line (`DescribedBeaconFormat.summary`); FormatFlagTests holds it
/// equal to the codec's formats a flag selects (Eddystone-URL's is `--eddystone-url URL`).
enum FormatFlag: String, EnumerableFlag {
    case ibeacon, altbeacon, eddystoneUID = "eddystone-uid", eddystoneTLM = "eddystone-tlm", eddystoneEID = "eddystone-eid"

    static func name(for value: FormatFlag) -> NameSpecification { .customLong(value.rawValue) }

    static func help(for value: FormatFlag) -> ArgumentHelp? {
        BeaconFormats.named(value.rawValue).map { ArgumentHelp($0.summary) }
    }
}

/// The options that describe one beacon, shared by every command that builds one.
struct BeaconOptions: ParsableArguments {
    @Flag(help: "Beacon format.")
    var format: FormatFlag?

    @Option(name: .customLong("eddystone-url"), help: "Eddystone-URL beacon for this URL.")
    var eddystoneURL: String?

    @Option(help: "Proximity UUID (iBeacon), id1 (AltBeacon): 32 hex digits, dashes optional; random for a new one (printed).")
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

    @Option(help: ArgumentHelp("Eddystone-EID identity key, shared with the resolver: a file holding its 32 hex digits "
                               + "(AES-128) that only its owner can read (chmod 600).", valueName: "path"))
    var identityKeyFile: String?

    @Option(help: ArgumentHelp("Eddystone-EID identity key as 32 hex digits on the command line, where every local user "
                               + "can read it (ps): prefer --identity-key-file.", valueName: "hex"))
    var identityKey: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Eddystone-EID rotation exponent K, 0 to 15 (default 10): a new identifier (and address) every 2^K s.",
        valueName: "K"))
    var rotationExponent: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Eddystone-EID time counter at the start in seconds, 0 to 4294967295 (default 0); it then advances with "
        + "the clock. encode prints the frame for this counter.", valueName: "seconds"))
    var clock: Int?

    @Option(help: ArgumentHelp("The whole advertising data, advertised byte for byte: AD structures "
                               + "(length, type, data), at most 31 bytes. Goes with no other beacon option.",
                               valueName: "hex"))
    var ad: String?

    @Option(help: ArgumentHelp("What a scanner that asks gets (active scanning): AD structures, at most 31 bytes. "
                               + "The advertising becomes scannable (ADV_SCAN_IND; ADV_IND with --connectable); '' for an "
                               + "empty scan response.",
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

    @Option(help: ArgumentHelp("Your app's own beacon: a layout as the android-beacon-library writes it "
                               + "(setBeaconLayout), with --id for each i: term and --data for each d: term, in order, "
                               + "--measured-power (dBm at 1 m, as the app reads it) and --company-id (manufacturer "
                               + "layouts; default 0xFFFF).", valueName: "layout"))
    var layout: String?

    @Option(name: .customLong("id"), help: ArgumentHelp("With --layout: an identifier, as the library writes it (a UUID, "
                                                         + "a decimal number, or 0x and hex of the field's width). "
                                                         + "Repeatable, in order.", valueName: "id"))
    var layoutIdentifiers: [String] = []

    @Option(name: .customLong("data"), help: ArgumentHelp("With --layout: a data field's value (decimal, or 0x and hex). "
                                                          + "Repeatable, in order.", valueName: "value"))
    var layoutData: [String] = []

    @Flag(help: ArgumentHelp("Allow advertising data over 31 bytes (to 251), sent in extended advertising PDUs: "
                             + "phones and apps that scan for legacy advertising do not see it."))
    var extendedPdu = false

    /// The options as the library's beacon model.
    var beaconDescription: BeaconDescription {
        var description = BeaconDescription()
        description.format = format?.rawValue
        description.set("url", eddystoneURL)
        description.set("uuid", uuid)
        description.set("major", major)
        description.set("minor", minor)
        description.set("measured-power", measuredPower)
        description.set("company-id", companyId)
        description.set("namespace", namespace)
        description.set("instance", instance)
        description.set("battery", battery)
        description.set("temperature", temperature)
        description.set("pdu-count", pduCount)
        description.set("uptime", uptime)
        description.set("identity-key", identityKey)
        description.set("identity-key-file", identityKeyFile)
        description.set("rotation-exponent", rotationExponent)
        description.set("clock", clock)
        description.ad = ad
        description.scanResponse = scanResponse
        description.name = name
        description.manufacturerData = manufacturerData
        description.serviceData = serviceData
        description.serviceUUIDs = serviceUuid
        description.flags = flags
        description.extendedPDU = extendedPdu
        description.set("layout", layout)
        description.set("ids", layoutIdentifiers.isEmpty ? nil : layoutIdentifiers.joined(separator: " "))
        description.set("data", layoutData.isEmpty ? nil : layoutData.joined(separator: " "))
        return description
    }

    /// Whether no beacon option was given at all (another source may describe the beacons).
    var isEmpty: Bool { beaconDescription.isEmpty }

    func validate() throws {
        if identityKey != nil { Console.error(Self.keyOnCommandLine, priority: .warning) }
        if !isEmpty { _ = try makeBeacon() }
    }

    /// The warning for an identity key given on the command line (`--identity-key`, or
    /// `identity-key=` in `--beacon`).
    static let keyOnCommandLine = "warning: an identity key on the command line can be read by every local user (ps, "
        + "/proc/PID/cmdline): put it in a file only you can read (chmod 600) and give --identity-key-file FILE"

    /// The beacon these options describe (`BeaconDescription.beacon()`).
    /// - Throws: `ValidationError` naming the option and what is wrong.
    func makeBeacon() throws -> Beacon {
        do {
            return try beaconDescription.beacon()
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// `count` bytes given as hex digits in option `name`.
func hexBytes(_ text: String?, _ name: String, count: Int) throws -> [UInt8] {
    do {
        return try BeaconDescription.hexBytes(text, name, count: count)
    } catch {
        throw ValidationError(error.message)
    }
}
