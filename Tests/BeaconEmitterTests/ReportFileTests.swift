// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `--report` writes a regular file only: never a device (`/dev/null`, as root), a FIFO or a
/// link's target; a new one with the mode the user's umask gives. A scenario that does not read
/// still writes its error page, which is how these are exercised without a radio.
@Suite struct ReportFileTests {
    @Test func aReportIsARegularFileOrNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broken = directory + "/broken.yaml"
        try "beacons: [\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let fifo = directory + "/fifo", link = directory + "/link", target = directory + "/target"
        #expect(mkfifo(fifo, 0o600) == 0)
        try "mine\n".write(toFile: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        for path in ["/dev/null", fifo, link, directory] {
            let refused = try runBeaconEmit(["run", broken, "--report", path])
            #expect(refused.status == 74 && refused.stderr.contains("--report \(path): cannot write the report: it is not a "
                                                                    + "regular file"), "\(path): \(refused.status) \(refused.stderr)")
        }
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR, "/dev/null is still the device")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "mine\n", "the link's target is untouched")
        // A new report: the mode the user's umask gives (027 here: 0640); an old one replaced whole.
        let report = directory + "/report.html"
        for _ in 0..<2 {
            // The umask set in the command's own shell: the tests' process keeps its own.
            let written = try runBeaconEmit(["-c", "umask 027; exec \"$0\" \"$@\"", try beaconEmitPath(), "run", broken, "--report", report],
                                            executable: "/bin/sh")
            #expect(written.status == 65, "\(written.stderr)")
            #expect(stat(report, &info) == 0 && info.st_mode & 0o777 == 0o640, "mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(try String(contentsOfFile: report, encoding: .utf8).contains("broken.yaml"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["broken.yaml", "fifo", "link", "report.html", "target"],
                "no temporary file left")
    }
}
