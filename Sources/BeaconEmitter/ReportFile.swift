// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// `--report FILE.html` (run, audit): the page written, or a message and exit 74 where it
/// cannot be. A regular file only, new or in place of one (`FileSystem.writeRegularFile`):
/// never a device, a FIFO or a link's target; its mode the user's umask's, or 0600 for a run
/// that holds an identity key (`ownerOnly`).
enum ReportFile {
    static func write(_ html: @autoclosure () -> String, to path: String?, ownerOnly: Bool = false) throws {
        guard let path else { return }
        do {
            try FileSystem.writeRegularFile(path, Array(html().utf8), mode: ownerOnly ? 0o600 : 0o666)
        } catch {
            let why = error.errno == FileSystem.notRegularFile
                ? "it is not a regular file (a device, a FIFO, a link or a directory): give a new file's name"
                : SystemCallError.message(error.errno)
            Console.error("--report \(path): cannot write the report: \(why)")
            throw ExitStatus.ioError
        }
    }
}
