// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
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
            """
    )

    @Flag(name: .long, help: "Print one JSON object per beacon per line.")
    var json = false

    @Argument(help: "Packets as hex. Without any, read lines from standard input.")
    var hex: [String] = []

    func run() throws {
        let decoder = LineDecoder(json: json)
        if hex.isEmpty {
            var number = 0
            do {
                try LineReader.forEachLine(of: STDIN_FILENO, line: { line in
                    number += 1
                    decoder.decode(line, label: "line \(number)")
                }, chunkEnd: decoder.flush)
            } catch {
                decoder.flush()
                Console.error("\(error)")
                throw ExitStatus.ioError
            }
        } else {
            for (index, argument) in hex.enumerated() {
                var text = argument
                text.withUTF8 { decoder.decode($0, label: "argument \(index + 1)") }
            }
        }
        decoder.flush()
        if decoder.failed > 0 {
            if decoder.attempted > 1 {
                Console.error("\(decoder.failed) of \(decoder.attempted) inputs failed to decode")
            }
            throw ExitStatus.dataError
        }
    }
}

/// Decodes inputs one at a time, writing beacons to standard output and failures to standard
/// error, both buffered; a line's bytes, its packet and its output reuse the same storage.
final class LineDecoder {
    let json: Bool
    private(set) var attempted = 0
    private(set) var failed = 0
    private var packet: [UInt8] = []
    private let output = OutputBuffer(descriptor: STDOUT_FILENO)
    private let errors = OutputBuffer(descriptor: STDERR_FILENO)

    init(json: Bool) {
        self.json = json
        packet.reserveCapacity(512)
    }

    /// Decodes one line of hex (UTF-8); `label` names it in an error message.
    func decode(_ line: UnsafeBufferPointer<UInt8>, label: @autoclosure () -> String) {
        guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
              line[first] != UInt8(ascii: "#") else { return }
        attempted += 1
        let mark = output.bytes.count
        do throws(CodecError) {
            packet.removeAll(keepingCapacity: true)
            try HexText.parse(utf8: line, into: &packet)
            let summary = try PacketDecoder.decode(packet[...]) { write($0) }
            try summary.requireBeacons()
        } catch {
            output.bytes.removeSubrange(mark...)  // nothing printed for a line that failed part way
            failed += 1
            errors.append(line: "beacon-emit: \(label()): \(error)")
        }
        output.flushIfFull()
    }

    private func write(_ sighting: BeaconSighting) {
        if json {
            output.appendJSONLine { SightingFormatter.add(sighting, to: &$0) }
        } else {
            output.append(line: SightingFormatter.text(sighting))
        }
    }

    /// Writes what is buffered: results first, then the errors of the same lines.
    func flush() {
        output.flush()
        errors.flush()
    }
}
