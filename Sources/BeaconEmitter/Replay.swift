// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports
import BeaconRig
import BeaconTracking
import Foundation

/// `beacon-emit replay FILE`: a capture's advertisers put back on the air.
struct Replay: ParsableCommand, ScenarioLaunching {
    static let configuration = CommandConfiguration(
        abstract: "Put a capture's advertisers back on the air: their data, PDU type, interval and comings and goings.",
        discussion: """
            Reads FILE (btsnoop, pcap or pcapng, as decode and scan --replay read them) and puts \
            each advertiser in it (an address and its advertising data) back on the air on a set \
            of its own: its data and scan response byte for byte, its PDU type (ADV_IND, \
            ADV_SCAN_IND, ADV_NONCONN_IND), its interval as estimated from the capture's report \
            times, from its own static random address where the capture has one, else from a \
            new static random address (the mapping is printed first), coming and going at the \
            capture's offsets (--speed scales them): an advertiser silent for longer than --gap \
            seconds and 5 of its own intervals goes and comes back as it did (a shorter silence is \
            events a scanner missed). Where the capture has more advertisers at \
            once than the controller has sets (or --sets), they take turns (--turn seconds each, \
            the ones on the air least lately first), and the plan says the period a receiver \
            will hear each at (achievedInterval). The plan is printed once the device is open, \
            before anything is sent (--json: one line per advertiser); --check prints it without \
            a device (for --sets, else as if every advertiser had a set). Each advertiser's TX power \
            follows its strength in the capture (its median RSSI relative to the strongest's, \
            which gets 0 dBm; at most 30 dB below) where the controller sets TX power per set \
            (extended advertising); --same-power leaves every set at the controller's default. \
            The run ends when the capture does.
            """ + guide("test-rigs.md#replaying-a-field-capture") + HelpExamples.text("replay")
    )

    @Argument(help: "The capture: btsnoop, pcap or pcapng.")
    var file: String

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup var accessOptions: AccessOptions
    @OptionGroup var capture: CaptureOptions
    @OptionGroup(title: "Which advertisers (a beacon's region and format, the strength in the capture, addresses)")
    var filter: ScanFilterOptions

    @Option(help: ArgumentHelp("How much faster than the capture the advertisers come and go (0.01 to 100; their "
                               + "intervals are kept).", valueName: "factor"))
    var speed: Double = 1

    @Option(help: ArgumentHelp("Replay at most this many seconds (after --speed).", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("The shortest silence of an advertiser's taken as a going (0.1 to 3600; it must be "
                               + "longer than 5 of the advertiser's intervals too).", valueName: "seconds"))
    var gap: Double = Presence.defaultGap

    @Option(help: ArgumentHelp("Only the advertiser at this address (AA:BB:CC:DD:EE:FF, as in the capture); "
                               + "repeat for several.", valueName: "address"))
    var only: [String] = []

    @Option(help: ArgumentHelp("At most this many advertisers on the air at once (default: as many as the "
                               + "controller has sets); the others take turns.", valueName: "count"))
    var sets: Int?

    @Option(help: ArgumentHelp("Where advertisers take turns, how long each turn is (0.1 to 60).", valueName: "seconds"))
    var turn: Double = 1

    @Flag(help: "Leave every advertiser at the controller's default TX power (not its strength in the capture).")
    var samePower = false

    @Flag(help: ArgumentHelp("Start again at the capture's end, until a signal, or as many whole rounds as --duration "
                             + "holds (each round the advertisers come and go as in the capture)."))
    var loop = false

    @Flag(help: "Print the plan as JSON lines (one per advertiser), then the run's events.")
    var json = false

    @Flag(help: "Only print the plan: send nothing.")
    var check = false

    func validate() throws {
        if loop && check { throw ValidationError("--loop runs the plan: it goes without --check") }
        guard speed >= 0.01 && speed <= 100 else { throw ValidationError("--speed must be from 0.01 to 100, got \(speed)") }
        if let duration, !(duration > 0 && duration <= 86400) {
            throw ValidationError("--duration must be from 0 to 86400 seconds, got \(duration)")
        }
        if let sets, !(1...240).contains(sets) { throw ValidationError("--sets must be from 1 to 240, got \(sets)") }
        guard turn >= 0.1 && turn <= 60 else { throw ValidationError("--turn must be from 0.1 to 60 seconds, got \(turn)") }
        guard Presence.gaps.contains(gap) else {
            throw ValidationError("--gap must be from \(Presence.gaps.lowerBound) to \(Int(Presence.gaps.upperBound)) seconds, got \(gap)")
        }
        _ = try addresses()
    }

    /// The advertisers chosen: the scan filter's options, with --only's addresses.
    private func chosen() throws -> ScanFilter {
        let scan = try filter.filter()
        return ScanFilter(minRssi: scan.minRssi, format: scan.format, region: scan.region,
                          addresses: scan.addresses.union(try addresses()))
    }

    private func addresses() throws -> Set<BluetoothAddress> {
        var addresses = Set<BluetoothAddress>()
        for text in only {
            guard let address = try? BluetoothAddress(parsing: text) else {
                throw ValidationError("--only takes an address AA:BB:CC:DD:EE:FF, got '\(text)'")
            }
            addresses.insert(address)
        }
        return addresses
    }

    func run() throws {
        let advertisers = try survey()
        // Looping, --duration counts the rounds, each the whole capture.
        func plan(sets: Int?, strength: Bool, ownAddresses: Bool = true) throws -> ReplayPlan {
            do {
                // Without addresses of its own the host is the kernel's management API.
                return try ReplayPlan(advertisers, speed: speed, only: try chosen(), duration: loop ? nil : duration,
                                      ownAddresses: ownAddresses, strength: strength && !samePower, sets: sets, turn: turn,
                                      scannableWithoutResponse: ownAddresses)
            } catch let refusal as ReplayPlan.Refusal {
                Console.error("\(file): \(refusal)")
                throw ExitStatus.dataError
            }
        }
        func scenario(of plan: ReplayPlan) throws -> Scenario {
            do {
                // Looping: as many whole rounds as --duration holds (at least one), or until a signal.
                return try plan.scenario(device: nil, rounds: loop ? plan.rounds(in: duration) : 1)
            } catch {
                Console.error("\(file): \(error)")
                throw ExitStatus.dataError
            }
        }
        // Without a device, the plan for --sets (or a set for each); with one, for its sets.
        let unlimited = try plan(sets: sets, strength: true)
        if check {
            // What the replay would send, made as it would be: what --check passes, a replay sends.
            printPlan(unlimited, try scenario(of: unlimited))
            return
        }
        let printer = ScenarioPrinter(json: json)
        // Each advertiser has an address of its own on HCI advertising sets (--access auto takes
        // raw HCI, as it does for any beacon's own address); --access mgmt keeps the kernel's.
        var launch = self
        if launch.accessOptions.access == .automatic { launch.accessOptions.access = .raw }
        var planned = unlimited
        let outcome: ScenarioOutcome
        do {
            outcome = try launch.runScenario(try scenario(of: unlimited), printer: printer) { advertisement in
                let (capacity, setsTXPower) = (try advertisement.slotCapacity(), advertisement.setsTXPowerPerBeacon)
                if !setsTXPower && !samePower {
                    printer.progress("the advertisers go at the controller's TX power: their strengths in the capture need "
                                     + "a TX power per set (extended advertising)")
                }
                if !advertisement.makesAddresses {
                    printer.progress("through the kernel's management API the advertisers go out from the address the kernel "
                                     + "chooses, not addresses of their own (--access raw gives each its own)")
                }
                guard capacity > 0 else { throw HostError.refused(Refusal(nil, .noFreeSet(sets: 0))) }
                planned = try plan(sets: min(capacity, sets ?? capacity), strength: setsTXPower,
                                   ownAddresses: advertisement.makesAddresses)
                let scenario = try scenario(of: planned)
                printPlan(planned, scenario)
                return scenario
            }
        } catch let error as HostError {
            throw fail(error)
        }
        if let error = outcome.error { throw fail(error) }
        let ending = outcome.interrupted ? "interrupted" : "the capture's end"
        let rounds = loop ? planned.rounds(in: duration) : 1
        for line in planned.outcomeLines(after: outcome.duration, loops: loop, rounds: rounds, lateness: outcome.lateness,
                                         ending: ending, json: json) {
            print(line)
        }
        if let late = ReplayPlan.lateness(outcome.lateness) { Console.error("\(file): \(late)", priority: .warning) }
    }

    /// The capture's advertisers (`CaptureSurvey.read`), with `decode`'s errors and statuses:
    /// 74 for a file that does not open, 65 for one that does not read as a capture.
    private func survey() throws -> [CapturedAdvertiser] {
        let read: (survey: CaptureSurvey, badCRCPackets: Int)
        do {
            read = try CaptureSurvey.read(path: file, includeBadCRC: capture.includeBadCRC, gap: gap)
        } catch {
            Console.error("\(error)")
            throw ExitCode(ReplayError.exitStatus(for: error))
        }
        capture.report(leftOut: read.badCRCPackets, in: file)
        if read.survey.leftOut > 0 {
            Console.error("\(file): more than \(CaptureSurvey.mostAdvertisers) advertisers: \(read.survey.leftOut) reports of "
                          + "the others left out", priority: .warning)
        }
        return read.survey.advertisers
    }

    /// The plan, and what its busiest instant asks of the controller (said before it starts).
    private func printPlan(_ plan: ReplayPlan, _ scenario: Scenario) {
        for reason in plan.leftOut { Console.error("\(file): \(reason)", priority: .warning) }
        for line in plan.planLines(json: json, file: file, speed: speed) { print(line) }
        if let pace = ReplayPace(of: scenario) {
            print(pace.line(json: json))
            if let warning = pace.warning { Console.error("\(file): \(warning)", priority: .warning) }
        }
        fflushStandardOutput()
    }
}
