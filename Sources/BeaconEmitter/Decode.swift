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
                text.withUTF8 { decoders.decode($0, label: "argument", number: index + 1) }
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
    /// One decoder per worker, each changed only by its worker (kept behind a pointer: a
    /// class's stored property would cost a runtime exclusivity check per access).
    private let decoders: UnsafeMutablePointer<LineDecoder>
    private let workers: Int
    /// Below this many lines a chunk is decoded on one thread (interactive use, short files).
    private static let parallelLines = 2048

    init(json: Bool) {
        // Two workers at most: the output must be written in order, and past two the writing
        // and reading dominate.
        workers = min(2, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        decoders = .allocate(capacity: workers)
        for index in 0..<workers { (decoders + index).initialize(to: LineDecoder(json: json)) }
    }

    deinit {
        decoders.deinitialize(count: workers)
        decoders.deallocate()
    }

    var attempted: Int { (0..<workers).reduce(0) { $0 + decoders[$1].attempted } }
    var failed: Int { (0..<workers).reduce(0) { $0 + decoders[$1].failed } }

    /// Decodes one input on the calling thread; `label` and `number` name it in an error message.
    func decode(_ input: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        decoders.pointee.decode(input, label: label, number: number)
    }

    /// Decodes `lines` (numbered from `firstNumber` in error messages), then writes their output.
    func decode(_ lines: [UnsafeBufferPointer<UInt8>], firstNumber: Int) {
        let parts = lines.count >= Self.parallelLines ? workers : 1
        let share = (lines.count + parts - 1) / parts
        // Each worker has a decoder (and its buffers) of its own, and reads its own lines from
        // the read buffer, which nothing changes until this returns.
        nonisolated(unsafe) let decoders = self.decoders
        nonisolated(unsafe) let lines = lines
        let work: @Sendable (Int) -> Void = { part in
            let decoder = decoders + part
            for index in part * share..<min(lines.count, (part + 1) * share) {
                decoder.pointee.decode(lines[index], label: "line", number: firstNumber + index)
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
        for index in 0..<workers { decoders[index].output.write(to: STDOUT_FILENO) }
        for index in 0..<workers { decoders[index].errors.write(to: STDERR_FILENO) }
    }
}

/// Decodes inputs one at a time, collecting beacons and failures in buffers of its own for
/// `LineDecoders` to write; a line's bytes, its packet and its output reuse the same storage.
struct LineDecoder: ~Copyable {
    let json: Bool
    private(set) var attempted = 0
    private(set) var failed = 0
    /// Bytes of the line being decoded: only ever grows, the packet is a prefix of it.
    private var packet: [UInt8] = []
    var output = ByteBuffer(capacity: 1 << 16)
    var errors = ByteBuffer(capacity: 1 << 12)

    init(json: Bool) {
        self.json = json
    }

    /// Decodes one line of hex (UTF-8); `label` and `number` ("line 12") name it in an error message.
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
              line[first] != UInt8(ascii: "#") else { return }
        attempted += 1
        let mark = output.count
        let room = HexText.mostBytes(inUTF8Count: line.count)
        if packet.count < room { packet += repeatElement(0, count: room - packet.count) }
        do throws(CodecError) {
            let length = try packet.withUnsafeMutableBufferPointer { bytes throws(CodecError) in
                try HexText.parse(utf8: line, into: UnsafeMutableBufferPointer(rebasing: bytes[..<room]))
            }
            let summary = try PacketDecoder.decode(packet[..<length]) { write($0) }
            try summary.requireBeacons()
        } catch {
            output.removeLast(from: mark)  // nothing printed for a line that failed part way
            failed += 1
            errors.append("beacon-emit: ")
            errors.append(label)
            errors.append(UInt8(ascii: " "))
            errors.appendDecimal(number)
            errors.append(": ")
            errors.append(utf8: error.description)
            errors.append(UInt8(ascii: "\n"))
        }
    }

    private mutating func write(_ sighting: BeaconSighting) {
        if json {
            var object = JSONObject(continuing: &output)
            SightingFormatter.add(sighting, to: &object)
            object.finish(into: &output)
            output.append(UInt8(ascii: "\n"))
        } else {
            output.append(utf8: SightingFormatter.text(sighting))
            output.append(UInt8(ascii: "\n"))
        }
    }
}
