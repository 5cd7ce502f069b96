// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `beacon-emit`: BLE beacons from Linux.
@main
struct BeaconEmit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-emit",
        abstract: "Emit, encode and decode BLE beacons (iBeacon, AltBeacon, Eddystone).",
        discussion: """
            Without a subcommand, advertises: beacon-emit --uuid UUID --major 101 --minor 2. \
            Exit status: 0 success; 1 verify saw no intact advertisement, decode --expect or a run expectation failed; 64 usage error; 65 input that does not decode; 69 no usable \
            controller (kernel without Bluetooth, no adapter, adapter down, unsupported feature); \
            74 the controller link failed or closed; 75 a command went unanswered; 76 the \
            controller refused a command; 77 missing permission (CAP_NET_RAW, CAP_NET_ADMIN).
            """,
        version: BuildVersion.text,
        subcommands: [Advertise.self, Scan.self, Audit.self, Verify.self, Calibrate.self, Monitor.self, Run.self, Control.self, Stop.self, Info.self,
                      Doctor.self,
                      Decode.self, Encode.self],
        defaultSubcommand: Advertise.self
    )
}

/// The exit statuses the README documents.
enum ExitStatus {
    /// EX_USAGE: bad arguments (ArgumentParser's validation errors use it too).
    static let usage = ExitCode(64)
    /// EX_DATAERR: input that does not decode, or holds no beacon.
    static let dataError = ExitCode(65)
    /// EX_IOERR: standard input could not be read.
    static let ioError = ExitCode(74)
    /// A gate that could not judge (`audit`: a rule inconclusive, `--allow-inconclusive` not given).
    static let inconclusive = ExitCode(3)
}

extension HostError {
    /// The sysexits-style status `beacon-emit` exits with (the README's table).
    var exitStatus: Int32 {
        switch self {
        case .invalidDevice:
            return 64
        case let .kernel(_, code, _, _):
            return isPermission(code) ? 77 : 69
        case let .transport(error, _):
            if case let .system(_, code) = error {
                if isPermission(code) { return 77 }
                if code == ENETDOWN || code == ECONNREFUSED || code == ENOENT || code == ENODEV { return 69 }
            }
            return 74
        case .controllerRefused, .hardwareError, .malformedEvent:
            return 76
        case .commandTimeout, .managementTimeout:
            return 75
        case let .managementRefused(_, status, _, _):
            switch status {
            case .permissionDenied: return 77
            case .notPowered, .invalidIndex, .notSupported, .unknownCommand, .rfKilled: return 69
            default: return 76
            }
        case .unsupported, .virtualController, .userChannel:
            return 69
        case let .interrupted(_, error):
            return error.exitStatus
        }
    }

}

/// A missing capability or file permission.
private func isPermission(_ code: Int32) -> Bool { code == EPERM || code == EACCES }
