// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation

/// `--report FILE.html` (run, audit): the page written, or a message and exit 74 where it
/// cannot be.
enum ReportFile {
    static func write(_ html: @autoclosure () -> String, to path: String?) throws {
        guard let path else { return }
        do {
            try html().write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Console.error("--report \(path): cannot write the report: \(error.localizedDescription)")
            throw ExitStatus.ioError
        }
    }
}
