// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports
import BeaconTracking
import BeaconRig
import Foundation
import LinuxSystem

/// `beacon-emit calibrate`: the measured power to advertise, from RSSI taken 1 m away.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the RSSI of a beacon 1 m from --scanner and print the measured power to advertise.",
        discussion: """
            Hold the scanner 1 m from the beacon. For --duration seconds every report of the \
            beacon (its identifiers; any other advertising data by its bytes) gives an RSSI \
            sample; the top and bottom 10 % are dropped, as the AltBeacon library and Apple's \
            calibration do, and the mean of the rest, rounded, is the value for \
            --measured-power. With --device, the beacon is advertised there meanwhile. At \
            least 10 samples are needed: exit 1 with fewer, saying how many arrived.
            """ + guide("scanning.md#calibrate") + HelpExamples.text("calibrate")
    )

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup(title: "Beacon") var beacon: BeaconOptions

    @OptionGroup var scanning: ScannerOptions

    @Option(help: ArgumentHelp("Seconds to collect samples.", valueName: "seconds"))
    var duration: Double = 10

    @Option(help: ArgumentHelp("Put the value into the beacon's entry of this configuration file (its measured-power "
                               + "key, changed or added; the rest of the file unchanged).", valueName: "file"))
    var write: String?

    @Flag(help: ArgumentHelp("With --write: write the value even when the samples spread too much for it to mean "
                             + "anything (standard deviation over 6 dB)."))
    var force = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        if beacon.isEmpty { throw ValidationError("describe the beacon to calibrate: --uuid UUID --major N --minor N, ...") }
        if !(duration > 0 && duration <= 3600) { throw ValidationError("--duration must be from 0 to 3600 seconds") }
        if force && write == nil { throw ValidationError("--force only applies with --write") }
    }

    func run() throws {
        let described = try beacon.makeBeacon()
        // The file is checked before the samples are taken: a mistake there costs no waiting.
        if let write { _ = try edited(write, power: -59, for: described) }
        let interrupt = SignalWatcher.install()
        let samples: [Int]
        do {
            let rig = try deviceOptions.openWithScanner(scanning.scanner, advertising: described, legacy: scanning.legacy,
                                                        scanOptions: .init(controllerFiltersDuplicates: false))
            defer { rig.close() }
            if !json { Console.error("collecting RSSI samples for \(duration) s: hold the scanner 1 m from the beacon") }
            samples = try rig.rssiSamples(of: described, for: .milliseconds(Int64(duration * 1000)), interrupt: interrupt)
        } catch {
            throw fail(error)
        }
        let calibration: Calibration
        do {
            calibration = try Calibration(samples: samples)
        } catch {
            Console.error("calibrate: \(error)")
            throw ExitCode(1)
        }
        print(json ? Self.json(calibration) : Self.text(calibration))
        if let warning = calibration.spreadWarning {
            Console.error("calibrate: \(warning)")
            if write != nil && !force {
                Console.error("calibrate: \(write ?? "") left as it was (--force writes the value anyway)")
                throw ExitCode(1)
            }
        }
        if let write {
            let text = try edited(write, power: calibration.measuredPower, for: described)
            do {
                try text.write(toFile: write, atomically: true, encoding: .utf8)
            } catch {
                Console.error("calibrate: cannot write \(write): \(error.localizedDescription)")
                throw ExitCode(74)
            }
            Console.error("wrote measured power \(calibration.measuredPower) dBm into \(write)")
        }
    }

    /// The configuration file's text with `power` in the entry that describes `beacon`.
    private func edited(_ path: String, power: Int, for beacon: Beacon) throws -> String {
        if case .custom = beacon {
            Console.error("--write: a measured power belongs to iBeacon, AltBeacon and Eddystone beacons")
            throw ExitStatus.usage
        }
        let wanted = BeaconTracker.identity(of: BeaconSighting(beacon: beacon))
        do throws(ScenarioError) {
            return try ScenarioParser(file: path)
                .settingMeasuredPower(power, in: try ScenarioParser.readText(path)) {
                    BeaconTracker.identity(of: BeaconSighting(beacon: $0)) == wanted
                }
        } catch {
            Console.error("--write \(error.description)")
            throw error.unreadable ? ExitStatus.ioError : ExitStatus.usage
        }
    }

    static func text(_ calibration: Calibration) -> String {
        let deviation = (calibration.standardDeviation * 10).rounded() / 10
        return "measured power at 1 m: \(calibration.measuredPower) dBm (--measured-power \(calibration.measuredPower)); "
            + "\(calibration.sampleCount) samples, \(calibration.keptCount) kept after dropping the top and bottom 10 %: "
            + "\(calibration.lowest) to \(calibration.highest) dBm, standard deviation \(deviation) dB"
    }

    static func json(_ calibration: Calibration) -> String {
        var object = JSONObject()
        object.add("event", literal: "calibrated")
        object.add("measuredPower", calibration.measuredPower)
        object.add("mean", number: String((calibration.mean * 100).rounded() / 100))
        object.add("samples", calibration.sampleCount)
        object.add("kept", calibration.keptCount)
        object.add("lowest", calibration.lowest)
        object.add("highest", calibration.highest)
        object.add("standardDeviation", number: String((calibration.standardDeviation * 100).rounded() / 100))
        object.add("meaningful", calibration.isMeaningful)
        return object.line
    }
}
