// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import Dispatch
import Foundation
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
            """
    )

    @Flag(name: .long, help: "Print one JSON object per beacon per line.")
    var json = false

    @Option(help: ArgumentHelp(
        "Check every decoded beacon: KEY=VALUE pairs in the keys of --json's output (type=ibeacon,major=101); exit 1 with the differing fields when one does not match.",
        valueName: "key=value,..."))
    var expect: String?

    @Flag(help: "With --expect: at least one beacon must match, not all.")
    var expectAny = false

    @Argument(help: "Packets as hex. Without any, read lines from standard input.")
    var hex: [String] = []

    /// An argument that is not hex and names a file: a capture or a text file to decode.
    static func namesFile(_ argument: String) -> Bool {
        var copy = argument
        let hexLike = copy.withUTF8 { PacketTextReader.startsLikeHex($0) && PacketTextReader.looksLikeHex($0) }
        var directory: ObjCBool = false
        return !hexLike && FileManager.default.fileExists(atPath: argument, isDirectory: &directory) && !directory.boolValue
    }

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
        let decoders = LineDecoders(json: json, expectation: expectation)
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
            for (index, argument) in hex.enumerated() {
                if Self.namesFile(argument) {
                    decoders.decode(file: argument)
                } else if argument.contains(where: \.isNewline) {
                    decoders.decode(text: argument)
                } else {
                    var text = argument
                    text.withUTF8 { decoders.decode($0, label: "argument", number: index + 1) }
                }
            }
            decoders.flush()
        }
        if decoders.failed > 0, decoders.attempted > 1 {
            Console.error("\(decoders.failed) of \(decoders.attempted) inputs failed to decode")
        }
        if let expectation {
            Console.error(expectation.report)
            if !expectation.holds { throw ExitCode.failure }
        }
        if decoders.failed > 0 { throw ExitStatus.dataError }
        if decoders.passedOver > 0 && decoders.found == 0 {
            Console.error("no beacon in \(decoders.passedOver) packet\(decoders.passedOver == 1 ? "" : "s") "
                          + "without advertising data")
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

    /// Whether `--expect` checks the beacons.
    private let checking: Bool

    /// - Parameter expectation: checks every beacon (on one thread, in input order).
    init(json: Bool, expectation: Expectation? = nil) {
        checking = expectation != nil
        // Two workers at most: the output must be written in order, and past two the writing
        // and reading dominate.
        workers = expectation != nil ? 1 : min(2, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        decoders = .allocate(capacity: workers)
        for index in 0..<workers {
            (decoders + index).initialize(to: LineDecoder(json: json))
            decoders[index].expectation = expectation
        }
    }

    deinit {
        decoders.deinitialize(count: workers)
        decoders.deallocate()
    }

    var attempted: Int { (0..<workers).reduce(0) { $0 + decoders[$1].attempted } }
    var failed: Int { (0..<workers).reduce(0) { $0 + decoders[$1].failed } }
    var found: Int { (0..<workers).reduce(0) { $0 + decoders[$1].found } }
    /// Packets of another tool's dump that carry no advertising data (hcidump's commands and
    /// their answers): passed over, not failures.
    private(set) var passedOver = 0
    /// Other tools' spellings (hcidump, hex dumps, Android and Apple logs), read line by line.
    private var reader = PacketTextReader()
    /// Whether another tool's spelling was seen: the input is a log, whose other text is passed over.
    private var sawSpelling = false
    /// Lines of text put aside until the input shows whether it is a log (the first few kept).
    private var asideLines: [(bytes: [UInt8], label: StaticString, number: Int)] = []
    private var asideCount = 0
    private static let asideShown = 20

    /// Decodes one input of one line on the calling thread; `label` and `number` name it in an
    /// error message.
    func decode(_ input: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        read(input, label: label, number: number)
        handle(reader.finish(), line: nil, label: label)
        reportAside()
    }

    /// Decodes `lines` (numbered from `firstNumber` in error messages), then writes their output.
    /// Lines of plain hex are decoded as they are (a large chunk on two threads); a chunk with
    /// other tools' spellings goes through the text reader, in order, on this thread.
    func decode(_ lines: [UnsafeBufferPointer<UInt8>], firstNumber: Int) {
        // (With --expect, in order on one thread: a chunk read again would check its beacons twice.)
        if !(!checking && reader.isIdle && lines.allSatisfy(Self.startsPlain) && decodeAsHex(lines, firstNumber: firstNumber)) {
            for (index, line) in lines.enumerated() { read(line, label: "line", number: firstNumber + index) }
        }
        flush()
    }

    /// Decodes lines that all start like hex, a large chunk in halves on two threads; false
    /// (and nothing decoded) when one is not hex after all.
    private func decodeAsHex(_ lines: [UnsafeBufferPointer<UInt8>], firstNumber: Int) -> Bool {
        let parts = lines.count >= Self.parallelLines ? workers : 1
        let share = (lines.count + parts - 1) / parts
        var marks: [LineDecoder.Mark] = []
        for index in 0..<workers { marks.append(self.decoders[index].mark) }
        // Each worker has a decoder (and its buffers) of its own, and reads its own lines from
        // the read buffer, which nothing changes until this returns. A line that is not hex
        // stops its worker.
        nonisolated(unsafe) let decoders = self.decoders
        nonisolated(unsafe) let lines = lines
        let work: @Sendable (Int) -> Void = { part in
            let decoder = decoders + part
            for index in part * share..<min(lines.count, (part + 1) * share) {
                if !decoder.pointee.decode(lines[index], label: "line", number: firstNumber + index, onlyHex: true) {
                    decoder.pointee.stopped = true
                    return
                }
            }
        }
        if parts == 1 {
            work(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: parts, execute: work)
        }
        var stopped = false
        for index in 0..<parts where self.decoders[index].stopped { stopped = true }
        guard stopped else { return true }
        for index in 0..<workers { self.decoders[index].rewind(to: marks[index]) }
        return false
    }

    /// Starts like plain hex (or is blank, or a comment): what the per-line decoding tries first.
    private static func startsPlain(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        isBlankOrComment(line) || PacketTextReader.startsLikeHex(line)
    }

    /// Nothing but spaces and tabs, or a `#` line: what the per-line decoding skips.
    private static func isBlankOrComment(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = line.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { return true }
        return first == UInt8(ascii: "#")
    }

    /// One line: as hex while nothing spans lines and it is hex, else through the text reader.
    private func read(_ line: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        if reader.isIdle && Self.startsPlain(line)
            && decoders.pointee.decode(line, label: label, number: number, onlyHex: true) {
            return
        }
        handle(reader.add(String(decoding: line, as: UTF8.self), number: number), line: line, label: label)
    }

    private func handle(_ items: [PacketTextReader.Item], line: UnsafeBufferPointer<UInt8>?, label: StaticString) {
        for item in items {
            switch item {
            case let .plain(number):
                guard let line else { break }
                if PacketTextReader.looksLikeHex(line) || Self.isBlankOrComment(line) {
                    decoders.pointee.decode(line, label: label, number: number)
                } else {
                    putAside(line, label: label, number: number)
                }
            case let .packet(packet):
                sawSpelling = true
                if !decoders.pointee.decode(packet: packet, label: label) { passedOver += 1 }
            case let .failure(_, message):
                sawSpelling = true
                decoders.pointee.fail(message, counting: true)
            }
        }
    }

    /// A line of text (not even an attempt at hex) that is not another tool's packet either:
    /// in a log (once another tool's spelling was seen) it is passed over; otherwise it is
    /// reported at the end, as a line that does not decode (the first few, then a count).
    private func putAside(_ line: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        guard !sawSpelling else { return }
        if asideLines.count < Self.asideShown { asideLines.append((Array(line), label, number)) }
        asideCount += 1
    }

    /// Reports what was put aside, unless the input turned out to be a log.
    private func reportAside() {
        defer { asideLines.removeAll(); asideCount = 0 }
        guard !sawSpelling else { return }
        for (bytes, label, number) in asideLines {
            bytes.withUnsafeBufferPointer { _ = decoders.pointee.decode($0, label: label, number: number) }
        }
        if asideCount > asideLines.count {
            decoders.pointee.fail("\(asideCount - asideLines.count) more lines of text hold neither hex nor a packet")
        }
    }

    /// An argument of several lines, read as standard input's lines would be.
    func decode(text: String) {
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var copy = String(line)
            copy.withUTF8 { read($0, label: "line", number: number) }
        }
        handle(reader.finish(), line: nil, label: "line")
        reportAside()
    }

    /// A file named on the command line: a capture's beacons (the reports without one passed
    /// over, like hcidump's commands), or its text read as standard input's would be.
    func decode(file path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            decoders.pointee.fail("\(path): cannot open the file", counting: true)
            return
        }
        let start = (try? handle.read(upToCount: 8)) ?? Data()
        try? handle.close()
        if start.starts(with: Array("btsnoop".utf8)) || PcapParser.format(of: start) != nil {
            decodeCapture(path)
        } else if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            decode(text: text)
        } else {
            decoders.pointee.fail("\(path): neither a capture (btsnoop, pcap, pcapng) nor text", counting: true)
        }
        flush()
    }

    private func decodeCapture(_ path: String) {
        let reader: CaptureReader
        do {
            reader = try CaptureReader(path: path, decode: true, name: path)
        } catch {
            decoders.pointee.fail("\(error)", counting: true)
            return
        }
        var reports = 0
        while true {
            let batch = reader.next()
            for index in batch.reports.indices {
                reports += 1
                if batch.failures[index] == nil, !batch.sightings(index).isEmpty {
                    decoders.pointee.decode(sightings: batch.sightings(index), report: reports)
                } else {
                    passedOver += 1
                }
            }
            if let failure = batch.failure { decoders.pointee.fail("\(failure)", counting: true) }
            if batch.isLast { break }
        }
    }

    /// Ends standard input: a packet still open in the text reader is complete now.
    func finish() {
        handle(reader.finish(), line: nil, label: "line")
        reportAside()
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
    private(set) var found = 0
    /// Bytes of the line being decoded: only ever grows, the packet is a prefix of it.
    private var packet: [UInt8] = []
    var output = ByteBuffer(capacity: 1 << 16)
    var errors = ByteBuffer(capacity: 1 << 12)

    init(json: Bool) {
        self.json = json
    }

    /// Set by a worker that met a line that is not hex (its chunk is read again in order).
    var stopped = false
    /// `--expect`: every beacon is checked, named by the input it came from.
    var expectation: Expectation?
    private var place: (label: StaticString, number: Int) = ("line", 0)
    /// The beacons of the input being decoded, checked once all of it decoded (a failed
    /// input prints nothing, and is not checked either).
    private var unchecked: [BeaconSighting] = []

    private mutating func checkDecoded(_ succeeded: Bool) {
        guard let expectation, !unchecked.isEmpty else { return }
        if succeeded {
            for sighting in unchecked { expectation.check(sighting, place: "\(place.label) \(place.number)") }
        }
        unchecked.removeAll(keepingCapacity: true)
    }

    /// Where the buffers and counts stand, to go back to.
    struct Mark {
        var output: Int, errors: Int, attempted: Int, failed: Int, found: Int
    }

    var mark: Mark { Mark(output: output.count, errors: errors.count, attempted: attempted, failed: failed, found: found) }

    /// Forgets what was decoded since `mark`.
    mutating func rewind(to mark: Mark) {
        stopped = false
        output.removeLast(from: mark.output)
        errors.removeLast(from: mark.errors)
        attempted = mark.attempted
        failed = mark.failed
        found = mark.found
    }

    /// Decodes one line of hex (UTF-8); `label` and `number` ("line 12") name it in an error message.
    /// - Parameter onlyHex: a line that is not hex is left alone (for the text reader): false.
    @discardableResult
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int,
                         onlyHex: Bool = false) -> Bool {
        guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
              line[first] != UInt8(ascii: "#") else { return true }
        let room = HexText.mostBytes(inUTF8Count: line.count)
        if packet.count < room { packet += repeatElement(0, count: room - packet.count) }
        let length: Int
        do throws(CodecError) {
            length = try packet.withUnsafeMutableBufferPointer { bytes throws(CodecError) in
                try HexText.parse(utf8: line, into: UnsafeMutableBufferPointer(rebasing: bytes[..<room]))
            }
        } catch {
            if onlyHex { return false }
            attempted += 1
            report(error, label: label, number: number)
            return true
        }
        attempted += 1
        place = (label, number)
        let mark = output.count
        do throws(CodecError) {
            let summary = try PacketDecoder.decode(packet[..<length]) { write($0) }
            try summary.requireBeacons()
            found += summary.beaconCount
            checkDecoded(true)
        } catch {
            output.removeLast(from: mark)  // nothing printed for a line that failed part way
            checkDecoded(false)
            report(error, label: label, number: number)
        }
        return true
    }

    private mutating func report(_ error: CodecError, label: StaticString, number: Int) {
        failed += 1
        errors.append("beacon-emit: ")
        errors.append(label)
        errors.append(UInt8(ascii: " "))
        errors.appendDecimal(number)
        errors.append(": ")
        errors.append(utf8: error.description)
        errors.append(UInt8(ascii: "\n"))
    }

    /// Decodes a packet read from another tool's text. A packet of hcidump's that carries no
    /// advertising data (a command, its answer) is passed over: returns false.
    mutating func decode(packet: PacketTextReader.Packet, label: StaticString) -> Bool {
        let mark = output.count
        place = (label, packet.line)
        do throws(CodecError) {
            let summary = try PacketDecoder.decode(packet.bytes[...]) { write($0) }
            if packet.spelling == .hcidump && summary.beaconCount == 0 { return false }
            try summary.requireBeacons()
            found += summary.beaconCount
            checkDecoded(true)
        } catch {
            output.removeLast(from: mark)
            checkDecoded(false)
            if packet.spelling == .hcidump, case .unrecognized = error.reason, error.offset == 0 { return false }
            fail("\(label) \(packet.line) (\(packet.spelling.rawValue)): \(error)")
        }
        attempted += 1
        return true
    }

    /// Writes the beacons of a capture's report (numbered from 1 in the capture).
    mutating func decode(sightings: ArraySlice<BeaconSighting>, report: Int) {
        attempted += 1
        place = ("report", report)
        for sighting in sightings { write(sighting) }
        found += sightings.count
        checkDecoded(true)
    }

    /// Reports a failure already put into words; `counting` an input of its own.
    mutating func fail(_ message: String, counting: Bool = false) {
        if counting { attempted += 1 }
        failed += 1
        errors.append("beacon-emit: ")
        errors.append(utf8: message)
        errors.append(UInt8(ascii: "\n"))
    }

    private mutating func write(_ sighting: BeaconSighting) {
        if expectation != nil { unchecked.append(sighting) }
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
