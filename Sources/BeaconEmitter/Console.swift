// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI writes: results to standard output, diagnostics to standard error.
enum Console {
    /// Writes one line to standard error, prefixed with the program name.
    static func error(_ message: String) {
        let line = Array("beacon-emit: \(message)\n".utf8)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// Pushes buffered standard output out now, so a reader of a pipe sees each event as it happens.
func fflushStandardOutput() {
    fflush(nil)
}
