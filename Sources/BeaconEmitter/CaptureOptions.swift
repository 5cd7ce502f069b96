// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import ArgumentParser

/// How a capture is read, for every command that reads one.
struct CaptureOptions: ParsableArguments {
    @Flag(help: ArgumentHelp("Keep an air sniffer's PDUs whose CRC failed (left out by default: a bit error "
                             + "in an address is a device that never existed)."))
    var includeBadCRC = false

    /// Says on standard error how many damaged PDUs `file` left out.
    func report(leftOut count: Int, in file: String) {
        if let notice = CaptureReader.badCRCNotice(count, in: file) { Console.error(notice, priority: .warning) }
    }
}
