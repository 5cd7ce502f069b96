// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost

/// A scripted test rig: named beacons, the devices that advertise and observe them, and the
/// steps of a timeline (`beacon-emit run FILE`). Read from YAML or JSON by `ScenarioParser`, or
/// built in code by a test suite.
public struct Scenario: Sendable {
    /// A beacon as the file describes it: its fields (the `--beacon KEY=VALUE` keys), kept so
    /// that an update can change some of them and build the beacon again.
    public struct BeaconDefinition: Sendable {
        public var name: String
        public var fields: [String: String]
        public var beacon: Beacon
        /// Its own advertising parameters (`interval`, `txPower` among its fields).
        public var parameters: BeaconParameters
        /// The box that advertises it (a name under `hosts`); nil: this machine's device.
        public var host: String?

        public init(name: String, fields: [String: String], beacon: Beacon, parameters: BeaconParameters = .run,
                    host: String? = nil) {
            self.name = name
            self.fields = fields
            self.beacon = beacon
            self.parameters = parameters
            self.host = host
        }
    }

    /// A box elsewhere whose running emitter (`advertise --control PATH`) the run drives over
    /// one SSH session (`beacon-emit control PATH --session` there).
    public struct HostDefinition: Sendable, Equatable {
        public var name: String
        /// `ssh`'s destination, `[user@]host`: the system's ssh client, its configuration,
        /// keys and known hosts apply.
        public var destination: String
        /// The control socket's path on the box.
        public var controlPath: String
        /// More arguments for `ssh`, before the destination (`-i KEY`, `-p PORT`, `-F FILE`, `-o ...`).
        public var sshOptions: [String]
        /// The program to run there.
        public var command: String

        public init(name: String, destination: String, controlPath: String, sshOptions: [String] = [],
                    command: String = "beacon-emit") {
            self.name = name
            self.destination = destination
            self.controlPath = controlPath
            self.sshOptions = sshOptions
            self.command = command
        }
    }

    /// A region watched with Core Location's timing (`RegionMonitor`): of iBeacons and AltBeacons
    /// (a UUID, a major, a minor), or of an app's layout (`{layout: acme, ids: [...]}`, as the
    /// android-beacon-library's `Region(id1, id2, id3)` matches).
    public struct RegionDefinition: Sendable {
        public var name: String
        /// The built-in formats' region; nil for a layout's.
        public var region: BeaconRegion?
        /// A layout's region; nil for the built-in formats'.
        public var layout: BeaconLayout.Region?

        public init(name: String, region: BeaconRegion) {
            self.name = name
            self.region = region
        }

        public init(name: String, layout: BeaconLayout.Region) {
            self.name = name
            self.layout = layout
        }

        /// Whether a report's advertising data, whose beacons are `beacons`, is of the region: a
        /// layout's region reads the data as the app's parser does; the built-ins' asks the beacons.
        public func contains(_ data: [UInt8], beacons: [Beacon]) -> Bool {
            if let layout { return (try? AdvertisingData(parsing: data)).map(layout.contains) ?? false }
            return region.map { region in beacons.contains(where: region.matches) } ?? false
        }

        /// Whether a beacon is of the region (its advertising data read as a report's is).
        public func contains(_ beacon: Beacon) -> Bool {
            contains(beacon.advertisingData.bytes, beacons: [beacon])
        }
    }

    /// Where a step was written, for messages and reports.
    public struct Place: Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int

        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }

        public var description: String { "line \(line), column \(column)" }
    }

    public struct Step: Sendable {
        public var action: Action
        public var place: Place

        public init(_ action: Action, place: Place = Place(line: 0, column: 0)) {
            self.action = action
            self.place = place
        }
    }

    /// A phone whose app's log the run reads (`phones:`): a command whose every line is the
    /// phone's log, stamped on receipt with the run's clock, and the app's lines as regular
    /// expressions (a named group `region` picks the region; `state` in a state line says
    /// inside or outside). See `PhoneLog`.
    public struct PhoneDefinition: Sendable, Equatable {
        public var name: String
        /// Run with `sh -c`.
        public var command: String
        /// The app's line for entering a region, for leaving one, and for a region's state.
        public var enter: String?
        public var exit: String?
        public var state: String?
        public var place: Place

        public init(name: String, command: String, enter: String? = nil, exit: String? = nil, state: String? = nil,
                    place: Place = Place(line: 0, column: 0)) {
            self.name = name
            self.command = command
            self.enter = enter
            self.exit = exit
            self.state = state
            self.place = place
        }

        /// The one-line convention an app can adopt (`preset: marker`): `BEACON-EMIT enter
        /// region=NAME`, `BEACON-EMIT exit region=NAME`, `BEACON-EMIT state region=NAME inside`.
        public static let marker = (enter: #"BEACON-EMIT enter region=(?<region>[^\s]+)"#,
                                    exit: #"BEACON-EMIT exit region=(?<region>[^\s]+)"#,
                                    state: #"BEACON-EMIT state region=(?<region>[^\s]+) (?<state>inside|outside)"#)
    }

    /// What a phone's expectation waits for: a transition of the region in the app's log
    /// since the region's previous expectation on that phone, a state, or no transition at all
    /// for the time.
    public enum PhoneExpectation: String, Sendable {
        case enter, exit, inside, outside
        case noEvent
    }

    /// What a region expectation waits for.
    public enum RegionExpectation: String, Sendable {
        /// The state at launch, or now: inside or outside.
        case inside, outside
        /// A transition from now on.
        case enter, exit
    }

    public indirect enum Action: Sendable {
        /// Puts these beacons on the air (each on an advertising set of its own).
        case advertise([String])
        /// Changes fields of a beacon in place: its data, or (`interval`, `txPower`) its parameters.
        case update(String, fields: [String: String])
        /// Takes these beacons off the air; nil: every one on the air.
        case stop([String]?)
        /// Waits the time; `paced`: on a timeline (a replay's), to `seconds` after the previous
        /// paced wait's end as it was due (the first: from its own start), so the time the steps
        /// between took comes out of the wait instead of adding up.
        case wait(seconds: Double, paced: Bool = false)
        /// The observer must receive the beacon's current data within the time.
        case expectSeen(String, within: Double)
        /// The observer must not receive the beacon's data for the time.
        case expectNotSeen(String, for: Double)
        /// The region must reach a state, or report a transition, within the time.
        case expectRegion(String, RegionExpectation, within: Double)
        /// A phone's app must log the region's transition or state within the time, or (`noEvent`)
        /// no transition of it for the time.
        case expectPhone(String, region: String, PhoneExpectation, seconds: Double)
        case repeatSteps(times: Int, steps: [Step])
        /// Steps a beacon's TX power from one level to another (extended advertising), to mimic
        /// walking away and back: `every` seconds per step of `step` dB.
        case ramp(String, from: Int, to: Int, step: Int, every: Double)
    }

    /// The controller that advertises (`--device` syntax); the command line may override it.
    public var device: String?
    /// The second device that observes, for expectations: a device, or `peer` for a second
    /// controller on the same virtual radio (rootcanal, `virtual`).
    public var scanner: String?
    /// Advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32
    /// Seconds without a sighting before a region is left (Core Location: about 30).
    public var exitAfter: Double
    /// With more beacons on the air than sets, seconds each takes on the shared set.
    public var rotation: Double
    public var beacons: [BeaconDefinition]
    /// The file's `layouts:`: names to android-beacon-library layouts (declared when the file is
    /// loaded, so that a control request names them too).
    public var layouts: [String: String] = [:]
    /// The boxes elsewhere that some beacons live on.
    public var hosts: [HostDefinition] = []
    /// Crowds: a beacon declared with a range (`minor: 1-24`) is its members (`room-1` ...
    /// `room-24`, each a beacon), and its name in `advertise` and `stop` stands for them all.
    public var crowds: [String: [String]] = [:]
    /// What running the scenario starts on this machine: each host's ssh session, and what its
    /// ssh options run or load here.
    public var localPrograms: [LocalProgram] = []
    /// The phones whose app's log the run reads.
    public var phones: [PhoneDefinition] = []
    public var regions: [RegionDefinition]
    public var steps: [Step]

    public init(device: String? = nil, scanner: String? = nil, intervalUnits: UInt32 = 160, exitAfter: Double = 30,
                rotation: Double = 1, beacons: [BeaconDefinition], regions: [RegionDefinition] = [], steps: [Step]) {
        self.rotation = rotation
        self.device = device
        self.scanner = scanner
        self.intervalUnits = intervalUnits
        self.exitAfter = exitAfter
        self.beacons = beacons
        self.regions = regions
        self.steps = steps
    }

    public func beacon(named name: String) -> BeaconDefinition? {
        beacons.first { $0.name == name }
    }

    public func host(named name: String) -> HostDefinition? {
        hosts.first { $0.name == name }
    }

    /// Each beacon that lives on a box elsewhere: its host's name, by the beacon's name.
    public var beaconHosts: [String: String] {
        Dictionary(uniqueKeysWithValues: beacons.compactMap { beacon in beacon.host.map { (beacon.name, $0) } })
    }

    /// Whether any beacon is this machine's to advertise (so the run needs a device).
    public var hasLocalBeacons: Bool {
        beacons.contains { $0.host == nil }
    }

    public func region(named name: String) -> RegionDefinition? {
        regions.first { $0.name == name }
    }

    /// Whether any step expects something (and so needs a scanner).
    public var expectsAnything: Bool {
        func expects(_ steps: [Step]) -> Bool {
            steps.contains {
                switch $0.action {
                case .expectSeen, .expectNotSeen, .expectRegion: true
                case let .repeatSteps(_, inner): expects(inner)
                default: false
                }
            }
        }
        return expects(steps)
    }
}

/// Builds a beacon from its data fields (the `--beacon KEY=VALUE` keys) and its own parameters
/// (`BeaconDescription.parameters(in:)` splits them: `pdu=extended` lets its data be longer);
/// throws a message saying what is wrong. The command line gives the one its options use, so
/// both read fields alike.
public typealias BeaconFactory = @Sendable (_ fields: [String: String], _ parameters: BeaconParameters) throws -> Beacon
