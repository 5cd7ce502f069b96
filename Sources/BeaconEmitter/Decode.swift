// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser

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
            """
    )

    @Flag(name: .long, help: "Print one JSON object per beacon per line.")
    var json = false

    @Argument(help: "Packets as hex. Without any, read lines from standard input.")
    var hex: [String] = []

    func run() throws {
        var decoder = LineDecoder(json: json)
        if hex.isEmpty {
            var number = 0
            while let line = readLine(strippingNewline: true) {
                number += 1
                decoder.decode(line, label: "line \(number)")
            }
        } else {
            for (index, argument) in hex.enumerated() {
                decoder.decode(argument, label: "argument \(index + 1)")
            }
        }
        if decoder.failed > 0 {
            if decoder.attempted > 1 {
                Console.error("\(decoder.failed) of \(decoder.attempted) inputs failed to decode")
            }
            throw ExitStatus.dataError
        }
    }
}

/// Decodes inputs one at a time, printing beacons and counting failures.
struct LineDecoder {
    let json: Bool
    private(set) var attempted = 0
    private(set) var failed = 0

    init(json: Bool) { self.json = json }

    mutating func decode(_ line: String, label: String) {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
        attempted += 1
        do {
            let packet = try PacketDecoder.decode(try HexText.parse(line))
            try packet.requireBeacons()
            for sighting in packet.sightings {
                print(json ? SightingFormatter.json(sighting) : SightingFormatter.text(sighting))
            }
        } catch {
            failed += 1
            Console.error("\(label): \(error)")
        }
    }
}
