// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// A scan that hears nothing says so (it printed nothing at all and exited 0): on a private
/// virtual radio nothing advertises.
@Suite struct SilentScanTests {
    @Test func aScanThatHearsNothingSaysSo() throws {
        let scan = try runBeaconEmit(["scan", "--device", "virtual", "--duration", "1", "--json"])
        #expect(scan.status == 0 && scan.stdout.isEmpty, "\(scan.status) \(scan.stdout)")
        #expect(scan.stderr.contains("heard no advertisement in 1 s on virtual: nothing advertises in range"), "\(scan.stderr)")
    }
}
