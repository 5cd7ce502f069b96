// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import ArgumentParser
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `beacon-emit decode`: hex in, beacons out.
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode beacons from packet hex.",
        discussion: """
            Each HEX argument, or each line of standard input when none is given, is one packet: \
            raw advertising data, manufacturer data alone, an HCI event (3E ...), an H4 event \
            packet (04 3E ...), or an HCI / H4 command that sets advertising data. Hex may be \
            contiguous, spaced, colon-separated or 0x-prefixed, in any case. Blank lines and \
            lines starting with # are skipped. A line that does not decode or holds no beacon \
            is reported on standard error with its byte offset; the rest still decode, and the \
            exit status is 65 if any failed.

            Packets as other tools print them are recognised too, on standard input or in an \
            argument of several lines: btmon's text (the bytes it prints; not its iBeacon \
            fields), hcidump -R and -X -R (packets across lines; those \
            without advertising data are passed over), hex dumps with offsets (xxd, hexdump -C, \
            od -Ax -tx1, Wireshark's Copy as Hex Dump, tshark -x; one packet per dump), Android \
            logs (a signed decimal list, mBytes=[...], ScanRecord's mManufacturerSpecificData \
            and mServiceData), and Apple's logs of data (<4c000215 ...>, {length = 25, bytes = \
            0x...}). An empty argument is an error.

            An argument that names a file is read whole: a capture (btsnoop, pcap, pcapng, \
            known by its first bytes; every beacon in its advertising reports) or text as above.
            """ + guide("scanning.md#decode") + HelpExamples.text("decode")
    )

    @Flag(name: .long, help: "Print one JSON object per beacon per line.")
    var json = false

    @Option(help: ArgumentHelp(
        "Check every decoded beacon: KEY=VALUE pairs in the keys of --json's output (type=ibeacon,major=101); exit 1 with the differing fields when one does not match.",
        valueName: "key=value,..."))
    var expect: String?

    @Flag(help: "With --expect: at least one beacon must match, not all.")
    var expectAny = false

    @Option(name: .customLong("layout"), help: ArgumentHelp(
        "Your app's own beacon layout, as the android-beacon-library writes it (m:2-3=beac,i:4-19,...), named with "
        + "NAME= in front: each advertising data is read with it too, and a beacon of it printed beside the built-in "
        + "ones with its identifiers as the library prints them. Repeatable: the first that reads it wins, as in the "
        + "library.", valueName: "[name=]layout"))
    var layouts: [String] = []

    @Argument(help: "Packets as hex. Without any, read lines from standard input.")
    var hex: [String] = []

    @OptionGroup var capture: CaptureOptions

    func run() throws {
        if let empty = hex.firstIndex(where: { $0.allSatisfy(\.isWhitespace) }) {
            Console.error("argument \(empty + 1) is empty (an unset variable?): give packet hex, or no argument "
                          + "to read standard input")
            throw ExitStatus.dataError
        }
        let expectation: Expectation?
        do {
            expectation = try expect.map { text throws(ExpectationError) in try Expectation(text, any: expectAny) }
        } catch {
            Console.error("\(error)")
            throw ExitStatus.usage
        }
        if expectAny && expectation == nil {
            Console.error("--expect-any goes with --expect KEY=VALUE,...")
            throw ExitStatus.usage
        }
        let decoders = LineDecoders(json: json, expectation: expectation,
                                    advertisements: AdvertisementFormatter(companyName: CompanyNames.name))
        decoders.includeBadCRC = capture.includeBadCRC
        do {
            decoders.layouts = try BeaconLayout.named(layouts)
        } catch {
            Console.error("--layout: \(error)")
            throw ExitStatus.usage
        }
        if hex.isEmpty {
            var number = 0
            do {
                try LineReader.forEachChunk(of: STDIN_FILENO) { lines in
                    decoders.decode(lines, firstNumber: number + 1)
                    number += lines.count
                }
            } catch {
                Console.error("\(error)")
                throw ExitStatus.ioError
            }
            decoders.finish()
        } else {
            for (index, argument) in hex.enumerated() { decoders.decode(argument: argument, number: index + 1) }
            decoders.flush()
        }
        // A file that cannot be read is the environment's fault, not the input's: 74.
        if decoders.unreadable > 0 { throw ExitStatus.ioError }
        if decoders.failed > 0, decoders.attempted > 1 {
            Console.error("\(decoders.failed) of \(decoders.attempted) inputs failed to decode")
        }
        if let expectation {
            Console.error(expectation.report)
            if !expectation.holds { throw ExitCode.failure }
        }
        if decoders.failed > 0 { throw ExitStatus.dataError }
        if decoders.passedOver > 0 && decoders.found == 0 {
            Console.error(decoders.noBeaconMessage)
            throw ExitStatus.dataError
        }
    }
}
