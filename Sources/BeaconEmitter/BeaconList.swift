// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports
import BeaconRig
import Foundation
import Yams

/// Several beacons, from repeated `--beacon KEY=VALUE,...` descriptions or a config file.
/// Each description is read with the same options and checks as a single beacon's.
enum BeaconList {
    /// A beacon and its own interval and TX power (`.run`: the run's).
    typealias BeaconEntry = (beacon: Beacon, parameters: BeaconParameters)

    /// Parses `uuid=...,major=1,minor=2` (keys are the option names without dashes;
    /// `type=altbeacon|eddystone-uid|eddystone-tlm` and `url=` pick other formats).
    /// - Throws: `ValidationError` naming the description and what is wrong.
    /// A range for major or minor (`minor=1-200`) makes a crowd: one beacon per value.
    static func beacons(fromSpecification specification: String, label: String) throws -> [BeaconEntry] {
        if (try? KeyValueText.pairs(specification))?.contains(where: { BeaconDescription.plain($0.key) == "identitykey" }) == true {
            Console.error(BeaconOptions.keyOnCommandLine, priority: .warning)
        }
        do {
            return try BeaconDescription.beaconsAndParameters(specification: specification)
        } catch {
            throw ValidationError("\(label): \(error.message)")
        }
    }

    /// Reads a JSON or YAML file: `{"beacons": [{"uuid": ..., "major": 1, "minor": 2}, ...]}`,
    /// with the scenario reader (bounded in size and in aliases; each mistake at its
    /// FILE:LINE:COLUMN with what was expected there).
    /// - Throws: `ValidationError` with that message.
    static func beacons(fromConfigurationFile path: String) throws -> [BeaconEntry] {
        try configuration(fromFile: path).entries
    }

    /// The file's beacons and its `metrics:` as written (nil: none), from one read.
    static func configuration(fromFile path: String) throws -> (entries: [BeaconEntry], metrics: String?) {
        do {
            return try ScenarioParser.loadConfiguration(path: path)
        } catch {
            throw ConfigurationFileError(error: error)
        }
    }
}

/// A configuration file that cannot be read (exit 74) or holds a mistake (65), as `run` says of
/// a scenario: the file's fault, not the options'.
struct ConfigurationFileError: Error, CustomStringConvertible {
    var error: ScenarioError
    var description: String { "--config \(error.description)" }
    var exitStatus: ExitCode { error.unreadable ? ExitStatus.ioError : ExitStatus.dataError }
}

/// A file named on the command line that cannot be opened (exit 74, with its errno's words).
struct UnreadableFile: Error {
    var message: String
}
