// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import ArgumentParser

/// `beacon-emit encode`: a beacon description in, exact bytes out.
struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a beacon's advertising data, or the HCI command that sets it, as hex.",
        discussion: """
            Without --hci: the advertising data, and on a second line the scan response where \
            there is one. With --hci: the H4 packet (type byte 01 first) of LE Set Advertising \
            Data (then LE Set Scan Response Data), or with --extended LE Set Extended Advertising \
            Data (then Scan Response Data) for advertising set 0, one command per line. With \
            --hcitool: the hcitool lines tutorials use (advertising off, the parameters at --interval, the \
            data, the scan response, advertising on), which decode reads back.

            Any advertisement is built from blocks, alone or after a beacon format's own structures, in this \
            order: Flags (--flags), service UUID lists (--service-uuid), the beacon, service data \
            (--service-data), manufacturer data (--manufacturer-data), the name (--name); or given whole \
            (--ad). Legacy advertising carries 31 bytes, a scan response 31 more: more is a usage error with \
            the count (--extended-pdu allows 251 in extended PDUs).
            """ + guide("scanning.md#encode") + HelpExamples.text("encode")
    )

    @OptionGroup var beacon: BeaconOptions

    @Flag(help: ArgumentHelp("Print one JSON object: the beacon's keys as decode --json gives them, then its "
                             + "advertising data (data) and scan response (scanResponse) as hex."))
    var json = false

    @Flag(help: "Print the HCI command that sets the data instead of the data.")
    var hci = false

    @Flag(help: "With --hci: LE Set Extended Advertising Data (set 0) instead of the legacy command.")
    var extended = false

    @Option(help: "Text between bytes, for example ' ' or ':' (default: none).")
    var separator: String = ""

    @Flag(help: ArgumentHelp("Print the hcitool lines that advertise the beacon (legacy commands: off, parameters, "
                             + "data, scan response, on), for a script that must keep using hcitool."))
    var hcitool = false

    @Option(help: ArgumentHelp("With --hcitool: the adapter the lines name.", valueName: "hciN"))
    var hcitoolDevice: String = "hci0"

    @Option(help: ArgumentHelp("With --hcitool: the advertising interval in ms (20 to 10240).", valueName: "ms"))
    var interval: Double?

    func validate() throws {
        if extended && !hci { throw ValidationError("--extended only applies with --hci") }
        if json && (hci || hcitool) { throw ValidationError("--json prints the data: it goes with neither --hci nor --hcitool") }
        if hcitool && hci { throw ValidationError("--hcitool and --hci exclude each other") }
        if !hcitool && (interval != nil || hcitoolDevice != "hci0") {
            throw ValidationError("--interval and --hcitool-device only apply with --hcitool")
        }
        if let interval, !(interval >= 20 && interval <= 10240) {
            throw ValidationError("--interval must be from 20 to 10240 ms (legacy advertising), got \(interval)")
        }
    }

    func run() throws {
        let described = try beacon.makeBeacon()
        if json {
            print(SightingFormatter.encoded(described))
            return
        }
        let data = described.advertisingData.bytes
        let response = described.scanResponseData?.bytes
        if hcitool {
            let units = UInt16(((interval ?? 100) / 0.625).rounded())
            do {
                for line in try HcitoolText.lines(advertising: described, intervalUnits: units, device: hcitoolDevice) {
                    print(line)
                }
            } catch {
                throw ValidationError("--hcitool writes legacy advertising commands, which carry at most 31 bytes: "
                                      + "\(error.reasonDescription)")
            }
            return
        }
        var packets: [[UInt8]]
        if !hci {
            packets = [data] + (response.map { [$0] } ?? [])
        } else if extended {
            packets = LESetExtendedAdvertisingData.fragments(handle: 0, data: data).map(\.packet.h4Bytes)
            packets += (response.map { LESetExtendedScanResponseData.fragments(handle: 0, data: $0) } ?? []).map(\.packet.h4Bytes)
        } else {
            packets = [try LESetAdvertisingData(data: data).packet.h4Bytes]
            if let response { packets.append(try LESetScanResponseData(data: response).packet.h4Bytes) }
        }
        for packet in packets { print(HexText.format(packet, separator: separator)) }
    }
}
