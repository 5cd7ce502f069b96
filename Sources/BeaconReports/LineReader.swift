// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a file descriptor in large chunks and hands out the lines of each, each without its
/// line end (`\n` or `\r\n`), straight from the read buffer.
public enum LineReader {
    public struct ReadError: Error, CustomStringConvertible {
        var code: Int32
        public var description: String { "cannot read standard input: \(SystemCallError.message(code))" }
    }

    /// Calls `chunk` with the complete lines of each read (and at the end, the last line without
    /// a line end). The buffers are valid only during the call.
    public static func forEachChunk(of descriptor: Int32, _ chunk: ([UnsafeBufferPointer<UInt8>]) -> Void) throws(ReadError) {
        var lines: [UnsafeBufferPointer<UInt8>] = []
        forEachMappedChunk(of: descriptor, lines: &lines, chunk)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var start = 0  // first byte of the line in progress
        var end = 0  // bytes read so far
        while true {
            if end == buffer.count {
                if start > 0 {
                    buffer.withUnsafeMutableBytes { raw in
                        _ = memmove(raw.baseAddress!, raw.baseAddress! + start, end - start)
                    }
                    end -= start
                    start = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))  // one line longer than the buffer
                }
            }
            let count: Int
            do {
                // A descriptor that would block (a non-blocking pipe) is waited for.
                switch try Descriptor(descriptor).read(into: &buffer, from: end) {
                case let .done(read): count = read
                case .wouldBlock:
                    _ = try Descriptor(descriptor).waitReadable(timeout: .seconds(3600))
                    continue
                }
            } catch {
                throw ReadError(code: error.errno)
            }
            buffer.withUnsafeBufferPointer { all in
                let base = all.baseAddress!
                lines.removeAll(keepingCapacity: true)
                if count == 0 {
                    if start < end { lines.append(trimmed(UnsafeBufferPointer(start: base + start, count: end - start))) }
                } else {
                    var scan = end
                    end += count
                    while let newline = memchr(base + scan, Int32(UInt8(ascii: "\n")), end - scan) {
                        let stop = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                        lines.append(trimmed(UnsafeBufferPointer(start: base + start, count: stop - start)))
                        start = stop + 1
                        scan = start
                    }
                }
                chunk(lines)
            }
            if count == 0 { return }
        }
    }

    /// A regular file is mapped rather than read: its complete lines are handed over from the
    /// mapping in pieces of about 1 MiB, with no copy (reading copied every byte once, a tenth
    /// of `decode`'s time, while the workers waited). The file offset is left after the last
    /// complete line, for `read` to go on from (a last line without a line end, a file that
    /// grew). Anything else (a pipe, a terminal, a mapping refused) is left to `read`.
    private static func forEachMappedChunk(of descriptor: Int32, lines: inout [UnsafeBufferPointer<UInt8>],
                                           _ chunk: ([UnsafeBufferPointer<UInt8>]) -> Void) {
        guard let file = MappedFile(restOf: descriptor) else { return }
        let base = file.bytes.baseAddress!
        let count = file.bytes.count
        var start = 0  // first byte of the next line
        var more = true
        while more {
            lines.removeAll(keepingCapacity: true)
            let pieceEnd = min(count, start + (1 << 20))
            while start < pieceEnd {
                guard let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), count - start) else {
                    more = false
                    break
                }
                let stop = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                lines.append(trimmed(UnsafeBufferPointer(start: base + start, count: stop - start)))
                start = stop + 1
            }
            if start >= count { more = false }
            if !lines.isEmpty { chunk(lines) }
            // Pages already handed over are given back, so that resident memory stays that of a
            // piece or two, not of the file (the file is unchanged: a page read again is read
            // from it again).
            file.release(before: start)
        }
        file.setOffset(to: start)
    }

    private static func trimmed(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let last = line.last, last == UInt8(ascii: "\r") else { return line }
        return UnsafeBufferPointer(rebasing: line.dropLast())
    }
}
