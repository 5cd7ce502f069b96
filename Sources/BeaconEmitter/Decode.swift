// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import Dispatch
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
        let decoders = LineDecoders(json: json)
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
        } else {
            for (index, argument) in hex.enumerated() {
                var text = argument
                text.withUTF8 { decoders.first.decode($0, label: "argument \(index + 1)") }
            }
            decoders.flush()
        }
        if decoders.failed > 0 {
            if decoders.attempted > 1 {
                Console.error("\(decoders.failed) of \(decoders.attempted) inputs failed to decode")
            }
            throw ExitStatus.dataError
        }
    }
}

/// Decodes chunks of lines, a large chunk in halves on two threads, and writes what each chunk
/// gave in input order: its results, then its errors.
final class LineDecoders {
    private let decoders: [LineDecoder]
    /// Below this many lines a chunk is decoded on one thread (interactive use, short files).
    private static let parallelLines = 2048

    init(json: Bool) {
        // Two workers at most: the output must be written in order, and past two the writing
        // and reading dominate.
        let workers = min(2, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        decoders = (0..<workers).map { _ in LineDecoder(json: json) }
    }

    var first: LineDecoder { decoders[0] }
    var attempted: Int { decoders.reduce(0) { $0 + $1.attempted } }
    var failed: Int { decoders.reduce(0) { $0 + $1.failed } }

    /// Decodes `lines` (numbered from `firstNumber` in error messages), then writes their output.
    func decode(_ lines: [UnsafeBufferPointer<UInt8>], firstNumber: Int) {
        let parts = lines.count >= Self.parallelLines ? decoders.count : 1
        let share = (lines.count + parts - 1) / parts
        // Each worker has a decoder (and its buffers) of its own, and reads its own lines from
        // the read buffer, which nothing changes until this returns.
        nonisolated(unsafe) let decoders = self.decoders
        nonisolated(unsafe) let lines = lines
        let work: @Sendable (Int) -> Void = { part in
            let decoder = decoders[part]
            for index in part * share..<min(lines.count, (part + 1) * share) {
                decoder.decode(lines[index], label: "line \(firstNumber + index)")
            }
        }
        if parts == 1 {
            work(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: parts, execute: work)
        }
        flush()
    }

    /// Writes what is buffered: every worker's results in order, then their errors.
    func flush() {
        for decoder in decoders { decoder.output.flush() }
        for decoder in decoders { decoder.errors.flush() }
    }
}

/// Decodes inputs one at a time, writing beacons to standard output and failures to standard
/// error, both buffered; a line's bytes, its packet and its output reuse the same storage.
final class LineDecoder {
    let json: Bool
    private(set) var attempted = 0
    private(set) var failed = 0
    private var packet: [UInt8] = []
    /// Results and errors, written by `LineDecoders` once a chunk is decoded.
    let output = OutputBuffer(descriptor: STDOUT_FILENO)
    let errors = OutputBuffer(descriptor: STDERR_FILENO)

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
            output.bytes.removeLast(from: mark)  // nothing printed for a line that failed part way
            failed += 1
            errors.append(line: "beacon-emit: \(label()): \(error)")
        }
    }

    private func write(_ sighting: BeaconSighting) {
        if json {
            output.appendJSONLine { SightingFormatter.add(sighting, to: &$0) }
        } else {
            output.append(line: SightingFormatter.text(sighting))
        }
    }
}
