// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconRig
import Foundation

/// The tests' own beacon factory: iBeacons from uuid, major and minor (the command line's
/// reader is the CLI's; the parser must work with any).
@Sendable func testBeacon(_ fields: [String: String], _ parameters: BeaconParameters = .run) throws -> Beacon {
    struct Refused: Error, CustomStringConvertible { var description: String }
    for key in fields.keys where !["uuid", "major", "minor"].contains(key) { throw Refused(description: "unknown field '\(key)'") }
    guard let text = fields["uuid"], let uuid = UUID(uuidString: text) else { throw Refused(description: "needs a uuid") }
    guard let major = fields["major"].flatMap(UInt16.init), let minor = fields["minor"].flatMap(UInt16.init) else {
        throw Refused(description: "major and minor must be from 0 to 65535")
    }
    return .iBeacon(IBeacon(proximityUUID: uuid, major: major, minor: minor))
}

let lobbyUUID = "39ED98FF-2900-441A-802F-9C398FC199D2"

/// A stage and an observer on a simulated air and clock: every beacon on the stage is received
/// every `interval` seconds of virtual time, starting `latency` after it goes on the air; time
/// passes only in `next(until:)`, so a 45 s scenario runs in microseconds.
final class SimulatedAir: ScenarioStage, ScenarioObserver {
    var now = 100.0
    let interval: Double
    let latency: Double
    /// What is on the air: name, data, since when.
    private(set) var onAir: [String: (data: [UInt8], since: Double)] = [:]
    /// Every call the stage got, with its time (relative to the first call).
    private(set) var calls: [String] = []
    /// The time of the last advertising event, and its reports not yet handed out.
    private var cursor = 100.0
    private var due: [(String, [UInt8])] = []
    /// When set, the stage refuses to advertise this beacon.
    var refuse: String?
    /// The virtual time each controller command takes: an advertiser coming three, several
    /// coming or going together one more (their enable or disable), as on HCI sets.
    var commandSeconds = 0.0

    init(interval: Double = 0.1, latency: Double = 0.01) {
        self.interval = interval
        self.latency = latency
    }

    func advertise(_ name: String, _ beacon: Beacon, parameters: BeaconParameters) throws(HostError) {
        if name == refuse { throw .unsupported("no set left for \(name)") }
        calls.append("advertise \(name)")
        now += 3 * commandSeconds
        onAir[name] = (beacon.advertisingData.bytes, now)
    }

    func advertise(_ beacons: [(name: String, beacon: Beacon, parameters: BeaconParameters)]) throws(HostError) {
        for coming in beacons { try advertise(coming.name, coming.beacon, parameters: coming.parameters) }
        now += commandSeconds
    }

    func stop(_ names: [String]) throws(HostError) {
        now += commandSeconds
        for name in names { try stop(name) }
    }

    func update(_ name: String, to beacon: Beacon) throws(HostError) {
        calls.append("update \(name)")
        onAir[name]?.data = beacon.advertisingData.bytes
    }

    func setParameters(_ name: String, _ parameters: BeaconParameters) throws(HostError) {
        calls.append(["parameters \(name)", parameters.intervalUnits.map { "interval \($0)" },
                      parameters.txPower.map { "tx \($0)" }].compactMap { $0 }.joined(separator: " "))
    }

    func stop(_ name: String) throws(HostError) {
        calls.append("stop \(name)")
        onAir[name] = nil
    }

    func stopAll() throws(HostError) {
        calls.append("stop all")
        onAir.removeAll()
    }

    func next(until deadline: Double) throws(HostError) -> Observation {
        while true {
            if let (name, data) = due.first {
                guard cursor <= deadline else { break }
                due.removeFirst()
                now = max(now, cursor)
                _ = name
                return .report(ScanReport(address: BluetoothAddress(0xC0FFEE), addressType: .publicDevice, rssi: -60,
                                          data: data))
            }
            // The next advertising event, with what is on the air now (nothing changes on the
            // stage until this returns, so it is what will be on the air then).
            let next = cursor + interval
            guard next <= deadline else { break }
            cursor = next
            due = onAir.sorted { $0.key < $1.key }.filter { cursor >= $0.value.since + latency }.map { ($0.key, $0.value.data) }
        }
        now = max(now, deadline)
        return .deadline
    }
}
