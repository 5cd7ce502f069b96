// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Lines collected in memory and written to a file descriptor when the caller flushes (a live
/// scan after each report, a replay after each batch), so a reader of a pipe sees results as
/// soon as their input arrived. A value with one owner (not a class): writing a line checks no
/// exclusive access at run time.
public struct OutputBuffer: ~Copyable {
    let descriptor: Int32
    private var bytes = ByteBuffer(capacity: 1 << 16)
    /// The second the last JSON line's timestamp was in.
    private var timestamps = Timestamp.Cache()

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    mutating func append(line: String) {
        bytes.append(utf8: line)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends one JSON object as a line, written straight into the buffer.
    mutating func appendJSONLine(_ fill: (inout JSONObject) -> Void) {
        var object = JSONObject(continuing: &bytes, timestamps: timestamps)
        fill(&object)
        object.finish(into: &bytes, timestamps: &timestamps)
        bytes.append(UInt8(ascii: "\n"))
    }

    mutating func flush() {
        bytes.write(to: descriptor)
    }

    /// Writes all of `bytes`, resuming after interrupted and partial writes; gives up silently
    /// on an error (a closed pipe: there is no one left to tell).
    public static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) {
        try? Descriptor(descriptor).writeAll(buffer)
    }
}
