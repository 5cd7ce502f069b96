// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Dispatch
import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes chunks of lines, a large chunk in halves on two threads, and writes what each chunk
/// gave in input order: its results, then its errors.
public final class LineDecoders {
    /// One decoder per worker, each changed only by its worker (kept behind a pointer: a
    /// class's stored property would cost a runtime exclusivity check per access).
    private let decoders: UnsafeMutablePointer<LineDecoder>
    private let workers: Int
    /// Below this many lines a chunk is decoded on one thread (interactive use, short files).
    private static let parallelLines = 2048

    /// Whether `--expect` checks the beacons.
    private let checking: Bool
    /// Where beacons are written, and where failures are.
    private let output: Int32, errors: Int32

    /// - Parameters:
    ///   - json: one JSON object per beacon per line, else a line of text.
    ///   - expectation: checks every beacon (on one thread, in input order).
    ///   - output: where the beacons are written.
    ///   - errors: where the inputs that did not decode are reported, one line each.
    ///   - advertisements: how advertising data without a beacon is printed (nil: such an
    ///     input is an error, "expected a beacon"). With an expectation it is one all the same.
    public init(json: Bool, expectation: Expectation? = nil, output: Int32 = STDOUT_FILENO,
                errors: Int32 = STDERR_FILENO, advertisements: AdvertisementFormatter? = nil) {
        self.output = output
        self.errors = errors
        checking = expectation != nil
        // Two workers at most: the output must be written in order, and past two the writing
        // and reading dominate.
        workers = expectation != nil ? 1 : min(2, CurrentProcess.processorCount)
        decoders = .allocate(capacity: workers)
        for index in 0..<workers {
            (decoders + index).initialize(to: LineDecoder(json: json))
            decoders[index].expectation = expectation
            if expectation == nil { decoders[index].advertisements = advertisements }
        }
    }

    deinit {
        decoders.deinitialize(count: workers)
        decoders.deallocate()
    }

    /// An app's layouts (`decode --layout`), by name, in the order they are tried.
    public var layouts: [(name: String, layout: BeaconLayout)] = [] {
        didSet { for index in 0..<workers { decoders[index].layouts = layouts } }
    }

    public var attempted: Int { (0..<workers).reduce(0) { $0 + decoders[$1].attempted } }
    public var failed: Int { (0..<workers).reduce(0) { $0 + decoders[$1].failed } }
    public var found: Int { (0..<workers).reduce(0) { $0 + decoders[$1].found } }
    /// Packets of another tool's dump that carry no advertising data (hcidump's commands and
    /// their answers): passed over, not failures.
    public private(set) var passedOver = 0
    /// Of those, the advertising reports of a capture that hold no beacon, and the advertisers
    /// they came from (counted up to `mostAdvertisersCounted`).
    public private(set) var reportsWithoutBeacon = 0
    public private(set) var advertisersWithoutBeacon: Set<BluetoothAddress> = []
    private static let mostAdvertisersCounted = 100_000
    /// Link-layer PDUs whose CRC failed: handed out too when true, else left out, and how many
    /// said on standard error.
    public var includeBadCRC = false
    /// Arguments that name a file which cannot be read (no such file, no permission): an I/O
    /// failure (exit 74), not input that failed to decode.
    public private(set) var unreadable = 0
    /// Other tools' spellings (hcidump, hex dumps, Android and Apple logs), read line by line.
    private var reader = PacketTextReader()
    /// Whether another tool's spelling was seen: the input is a log, whose other text is passed over.
    private var sawSpelling = false
    /// Lines of text put aside until the input shows whether it is a log (the first few kept).
    private var asideLines: [(bytes: [UInt8], label: StaticString, number: Int)] = []
    private var asideCount = 0
    private static let asideShown = 20
    /// Each message another tool's text got in this input, by its words without the line: the
    /// line it was said for, and the lines it held for again (said once, with a count, at the end).
    private var repeated: [String: (first: Int, again: [Int])] = [:]
    private var repeatedOrder: [String] = []

    /// Decodes one input of one line on the calling thread; `label` and `number` name it in an
    /// error message.
    public func decode(_ input: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int) {
        read(input, label: label, number: number)
        handle(reader.finish(), line: nil, label: label)
        reportAside()
    }

    /// Decodes `lines` (numbered from `firstNumber` in error messages), then writes their output.
    /// Lines of plain hex are decoded as they are (a large chunk on two threads); a chunk with
    /// other tools' spellings goes through the text reader, in order, on this thread.
    public func decode(_ lines: [UnsafeBufferPointer<UInt8>], firstNumber: Int) {
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
            case let .failure(number, message):
                sawSpelling = true
                let prefix = "line \(number): "
                let words = message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
                if repeated[words] != nil {
                    repeated[words]?.again.append(number)
                    decoders.pointee.fail(nil, counting: true)
                } else {
                    repeated[words] = (number, [])
                    repeatedOrder.append(words)
                    decoders.pointee.fail(message, counting: true)
                }
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

    /// Says once, for each message given again, on how many more lines (the first few named).
    private func reportRepeats() {
        defer { repeated.removeAll(); repeatedOrder.removeAll() }
        for words in repeatedOrder {
            guard let (first, again) = repeated[words], !again.isEmpty else { continue }
            let shown = again.prefix(5).map(String.init).joined(separator: ", ") + (again.count > 5 ? ", ..." : "")
            decoders.pointee.errors.append(utf8: "beacon-emit: line \(first)'s message holds for \(again.count) more line"
                                           + (again.count == 1 ? "" : "s") + " too (\(shown))\n")
        }
    }

    /// Reports what was put aside, unless the input turned out to be a log.
    private func reportAside() {
        reportRepeats()
        defer { asideLines.removeAll(); asideCount = 0 }
        guard !sawSpelling else { return }
        for (bytes, label, number) in asideLines {
            bytes.withUnsafeBufferPointer { _ = decoders.pointee.decode($0, label: label, number: number) }
        }
        if asideCount > asideLines.count {
            decoders.pointee.fail("\(asideCount - asideLines.count) more lines of text hold neither hex nor a packet")
        }
    }

    /// A command-line argument: a file's capture or text when it names one, else text (of
    /// several lines) or one line of hex; `number` names it in error messages.
    public func decode(argument: String, number: Int) {
        if Self.namesFile(argument) {
            decode(file: argument)
        } else if let why = Self.unreadableFile(argument) {
            unreadable += 1
            decoders.pointee.fail("\(argument): cannot read the file: \(why)", counting: true)
            flush()
        } else if argument.contains(where: \.isNewline) {
            decode(text: argument)
        } else {
            var text = argument
            text.withUTF8 { decode($0, label: "argument", number: number) }
        }
    }

    /// An argument that is not hex and names a file: a capture or a text file to decode.
    public static func namesFile(_ argument: String) -> Bool {
        var directory: ObjCBool = false
        return !readsAsHex(argument) && FileManager.default.fileExists(atPath: argument, isDirectory: &directory) && !directory.boolValue
    }

    /// Why an argument that reads as a path (a slash, or a capture's or log's file name) and
    /// not as hex cannot be read as a file: the system's words for it; nil when it is no path,
    /// or a readable one. `decode missing.pcap` blamed the hex at byte 0.
    public static func unreadableFile(_ argument: String) -> String? {
        let name = argument.split(separator: "/").last.map(String.init) ?? argument
        let fileName = [".pcap", ".pcapng", ".btsnoop", ".snoop", ".log", ".txt", ".cfa", ".hex"].contains {
            name.lowercased().hasSuffix($0)
        }
        guard !readsAsHex(argument), argument.contains("/") || fileName, !argument.contains(where: \.isNewline) else {
            return nil
        }
        return FileSystem.whyUnreadable(argument)
    }

    /// Whether an argument reads as hex (then it is decoded as such, whatever file shares its name).
    private static func readsAsHex(_ argument: String) -> Bool {
        var copy = argument
        return copy.withUTF8 { PacketTextReader.startsLikeHex($0) && PacketTextReader.looksLikeHex($0) }
    }

    /// An argument of several lines, read as standard input's lines would be.
    public func decode(text: String) {
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
    public func decode(file path: String) {
        let handle: FileHandle
        do {
            // Read twice (its first bytes, then as a capture or text): a regular file only; a
            // stream goes to standard input.
            handle = FileHandle(fileDescriptor: try FileSystem.openForReading(path), closeOnDealloc: true)
        } catch {
            unreadable += 1
            decoders.pointee.fail("\(path): cannot read the file: \(FileSystem.whyNotOpened(error, path: path))"
                                  + (error.errno == FileSystem.notRegularFile ? " (give a stream on standard input)" : ""),
                                  counting: true)
            flush()
            return
        }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 8)) ?? Data()
        if start.starts(with: Array("btsnoop".utf8)) || PcapParser.format(of: start) != nil {
            decodeCapture(path)
        } else if let data = { () -> Data? in
            do { try handle.seek(toOffset: 0); return try handle.readToEnd() ?? Data() } catch { return nil }
        }(), let text = String(data: data, encoding: .utf8) {
            decode(text: text)
        } else {
            decoders.pointee.fail("\(path): neither a capture (btsnoop, pcap, pcapng) nor text", counting: true)
        }
        flush()
    }

    private func decodeCapture(_ path: String) {
        let reader: CaptureReader
        do {
            reader = try CaptureReader(path: path, decode: true, name: path, includeBadCRC: includeBadCRC)
        } catch {
            decoders.pointee.fail("\(error)", counting: true)
            return
        }
        var reports = 0
        while true {
            let batch = reader.next()
            for index in batch.reports.indices {
                reports += 1
                let hasBeacons = batch.failures[index] == nil && !batch.sightings(index).isEmpty
                if hasBeacons { decoders.pointee.decode(sightings: batch.sightings(index), report: reports) }
                // The app's layouts read each report too, after its beacons (as `scan --replay --layout`).
                let report = batch.report(index)
                let layoutRead = decoders.pointee.decodeLayouts(in: report.data, address: report.address,
                                                                addressType: report.addressType, rssi: report.rssi)
                if !hasBeacons && !layoutRead {
                    passedOver += 1
                    reportsWithoutBeacon += 1
                    if advertisersWithoutBeacon.count < Self.mostAdvertisersCounted {
                        advertisersWithoutBeacon.insert(batch.reports[index].address)
                    }
                }
            }
            if let failure = batch.failure { decoders.pointee.fail("\(failure)", counting: true) }
            if batch.isLast {
                if let notice = CaptureReader.badCRCNotice(batch.badCRCPackets, in: path) {
                    decoders.pointee.errors.append(utf8: notice + "\n")
                }
                break
            }
        }
    }

    /// What to say when nothing decoded held a beacon: what the input held instead.
    public var noBeaconMessage: String {
        let reports = reportsWithoutBeacon, advertisers = advertisersWithoutBeacon.count
        let packets = passedOver - reports
        var parts: [String] = []
        if reports > 0 {
            parts.append("\(reports) advertising report\(reports == 1 ? "" : "s") from \(advertisers) advertiser"
                         + (advertisers == 1 ? "" : "s") + " (scan --replay FILE shows what they hold)")
        }
        if packets > 0 { parts.append("\(packets) packet\(packets == 1 ? "" : "s") without advertising data") }
        return "no beacon in " + parts.joined(separator: ", nor in ")
    }

    /// Ends standard input: a packet still open in the text reader is complete now.
    public func finish() {
        handle(reader.finish(), line: nil, label: "line")
        reportAside()
        flush()
    }

    /// Writes what is buffered: every worker's results in order, then their errors.
    public func flush() {
        for index in 0..<workers { decoders[index].output.write(to: output) }
        for index in 0..<workers { decoders[index].errors.write(to: errors) }
    }
}
