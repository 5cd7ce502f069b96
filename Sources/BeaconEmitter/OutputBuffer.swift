// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines collected in memory and written to a file descriptor when the caller flushes (a live
/// scan after each report, a replay after each batch), so a reader of a pipe sees results as
/// soon as their input arrived.
final class OutputBuffer {
    let descriptor: Int32
    var bytes = ByteBuffer(capacity: 1 << 16)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func append(line: String) {
        bytes.append(utf8: line)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends one JSON object as a line, written straight into the buffer.
    func appendJSONLine(_ fill: (inout JSONObject) -> Void) {
        var object = JSONObject(continuing: &bytes)
        fill(&object)
        object.finish(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    func flush() {
        bytes.write(to: descriptor)
    }

    /// Writes all of `bytes`, resuming after interrupted and partial writes; gives up silently
    /// on an error (a closed pipe: there is no one left to tell).
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) {
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// Reads a file descriptor in large chunks and hands out the lines of each, each without its
/// line end (`\n` or `\r\n`), straight from the read buffer.
enum LineReader {
    struct ReadError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "cannot read standard input: \(String(cString: strerror(code)))" }
    }

    /// Calls `chunk` with the complete lines of each read (and at the end, the last line without
    /// a line end). The buffers are valid only during the call.
    static func forEachChunk(of descriptor: Int32, _ chunk: ([UnsafeBufferPointer<UInt8>]) -> Void) throws(ReadError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var lines: [UnsafeBufferPointer<UInt8>] = []
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
            let count = buffer.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress! + end, raw.count - end) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(code: errno)
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

    private static func trimmed(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let last = line.last, last == UInt8(ascii: "\r") else { return line }
        return UnsafeBufferPointer(rebasing: line.dropLast())
    }
}
