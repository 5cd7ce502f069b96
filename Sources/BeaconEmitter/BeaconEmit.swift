// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser

/// `beacon-emit`: BLE beacons from Linux. Subcommands decode and encode packets offline.
@main
struct BeaconEmit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-emit",
        abstract: "Emit, encode and decode BLE beacons (iBeacon, AltBeacon, Eddystone).",
        discussion: """
            Exit status: 0 success; 64 usage error; 65 input that holds no beacon or does not \
            decode (decode prints one line per failure and keeps going).
            """,
        version: "0.1.0",
        subcommands: [Decode.self, Encode.self]
    )
}

/// The exit statuses the README documents.
enum ExitStatus {
    /// EX_USAGE: bad arguments (ArgumentParser's validation errors use it too).
    static let usage = ExitCode(64)
    /// EX_DATAERR: input that does not decode, or holds no beacon.
    static let dataError = ExitCode(65)
}
