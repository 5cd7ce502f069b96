// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

/// A first word that is no command, and `help` of no command, are usage errors that name the
/// word and the nearest command (`sacn` went to advertise, which asked for a beacon; `help
/// nosuch` printed the root help and exited 0).
@Suite struct CommandWordTests {
    @Test func anUnknownCommandIsNamedWithTheNearest() throws {
        let typo = try runBeaconEmit(["sacn", "--duration", "1"])
        #expect(typo.status == 64 && typo.stdout.isEmpty, "\(typo.status) \(typo.stdout)")
        #expect(typo.stderr.hasPrefix("beacon-emit: unknown command 'sacn' (did you mean 'scan'?): the commands are advertise, scan,"),
                "\(typo.stderr)")
        let help = try runBeaconEmit(["help", "nosuch"])
        #expect(help.status == 64 && help.stderr.hasPrefix("beacon-emit: unknown command 'nosuch': "), "\(help.status) \(help.stderr)")
        // What was right before still is.
        #expect(try runBeaconEmit(["help", "scan"]).stdout.hasPrefix("OVERVIEW: Scan"))
        #expect(try runBeaconEmit(["decode", "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"]).status == 0)
        #expect(try runBeaconEmit(["--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "1", "--minor", "2", "--check"]).status == 0)
    }

    @Test func theNearestWordIsNearEnoughOrNone() {
        #expect(NearestWord.nearest(to: "sacn", in: ["scan", "stop", "run"]) == "scan")
        #expect(NearestWord.nearest(to: "Intervall", in: ["interval", "uuid"]) == "interval")
        #expect(NearestWord.nearest(to: "xyz", in: ["scan", "stop"]) == nil)
        #expect(NearestWord.nearest(to: "ab", in: ["cd"]) == nil, "every letter changed is no near miss")
    }
}
