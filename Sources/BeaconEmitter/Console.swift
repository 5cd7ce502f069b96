// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import BeaconReports

/// Where the CLI writes: results to standard output, diagnostics to standard error.
enum Console {
    /// Writes one line to standard error, prefixed with the program name.
    static func error(_ message: String) {
        var line = "beacon-emit: \(message)\n"
        line.withUTF8 { OutputBuffer.writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }
    }
}

/// Pushes buffered standard output out now, so a reader of a pipe sees each event as it happens.
func fflushStandardOutput() {
    fflush(nil)
}
