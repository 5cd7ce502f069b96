// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// The process's own figures under the names Prometheus clients export them by
/// (`process_start_time_seconds`, `process_resident_memory_bytes`, `process_open_fds`...),
/// read from /proc/self at each scrape. Neither swift-prometheus nor swift-metrics reads them.
struct ProcessFigures {
    /// Each metric's name and help line.
    static let names: [(String, String)] = [
        ("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds."),
        ("process_resident_memory_bytes", "Resident memory size, in bytes."),
        ("process_virtual_memory_bytes", "Virtual memory size, in bytes."),
        ("process_open_fds", "Number of open file descriptors."),
        ("process_max_fds", "Maximum number of open file descriptors."),
    ]
    /// The one counter among them.
    static let cpu = ("process_cpu_seconds_total", "Total user and system CPU time spent, in seconds.")

    private let ticks = Double(CurrentProcess.clockTicksPerSecond)
    private let pageSize = Double(CurrentProcess.pageSize)

    /// The figures now (one that cannot be read is left out).
    func read() -> [(String, Double)] {
        var figures: [(String, Double)] = []
        // /proc/self/stat: after the command's closing parenthesis, field 3 (state) on; utime
        // and stime are fields 14 and 15, starttime (ticks after boot) field 22.
        if let stat = Self.text("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]), let start = Double(fields[19]) {
                figures.append(("process_cpu_seconds_total", (user + system) / ticks))
                if let boot = Self.bootTime { figures.append(("process_start_time_seconds", boot + start / ticks)) }
            }
        }
        if let statm = Self.text("/proc/self/statm")?.split(separator: " "), statm.count > 1,
           let size = Double(statm[0]), let resident = Double(statm[1]) {
            figures.append(("process_virtual_memory_bytes", size * pageSize))
            figures.append(("process_resident_memory_bytes", resident * pageSize))
        }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            figures.append(("process_open_fds", Double(open.count)))
        }
        if let limit = CurrentProcess.descriptorLimit { figures.append(("process_max_fds", Double(limit))) }
        return figures
    }

    /// When the machine booted, since the Unix epoch (/proc/stat's `btime`).
    private static let bootTime: Double? = text("/proc/stat")?.split(separator: "\n")
        .first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) }

    private static func text(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}
