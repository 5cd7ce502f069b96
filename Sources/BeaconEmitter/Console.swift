// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

import ArgumentParser
import BeaconHost
import BeaconReports

/// Where the CLI writes: results to standard output, diagnostics to standard error.
enum Console {
    /// Standard error goes to systemd's journal: lines carry their syslog priority (`<3>`)
    /// instead of the program name (journald adds that as SYSLOG_IDENTIFIER).
    nonisolated(unsafe) static var journal = false

    /// Writes one line to standard error, prefixed with the program name (or, to the
    /// journal, with its priority: an error unless said otherwise).
    static func error(_ message: String, priority: JournalStream.Priority = .error) {
        var line = journal ? "<\(priority.rawValue)>\(message)\n" : "beacon-emit: \(message)\n"
        line.withUTF8 { OutputBuffer.writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }
    }

    /// Input nobody asked for, as every command warns of it (first of each kind, then at 10, 100, ...).
    static func ignored(_ report: UnsolicitedInputReport) {
        error("warning: \(report)", priority: .warning)
    }
}

/// Pushes buffered standard output out now, so a reader of a pipe sees each event as it happens.
func fflushStandardOutput() {
    fflush(nil)
}

/// What a scan says at its end about the input it passed over.
enum ScanSummary {
    static func skipped(_ controller: HCIController) {
        if let summary = controller.unsolicited.summary { Console.error("skipped \(summary)", priority: .notice) }
    }
}

/// `--duration`: a positive number of seconds, under 10^9 (about 31 years), so that it fits a
/// count of milliseconds whatever is typed.
func validateDuration(_ duration: Double?) throws {
    if let duration, !(duration > 0 && duration < 1e9) {
        throw ValidationError("--duration must be a positive number of seconds (under 10^9), got \(duration)")
    }
}

/// The line a command's discussion (its `--help` and man page) ends with: where its guide is.
func guide(_ page: String) -> String {
    "\n\nThe guide: \(page) (docs/ in the source; share/doc/beacon-emit/docs/ where it is installed)."
}
