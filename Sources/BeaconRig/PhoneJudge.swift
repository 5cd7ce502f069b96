// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking

/// A run's phones and what its own radio did, for judging a phone's expectations: each
/// phone's log (`PhoneLog`), when each region's beacons came on the air (the first of them
/// enabled) and went off it (the last disabled, answered), when the rig's own scanner last
/// heard one of them, and where in a phone's log the region's previous expectation ended.
final class PhoneJudge {
    private let logs: [String: PhoneLog]
    /// The beacons of each region, by name.
    private let members: [String: Set<String>]
    private var onAir: Set<String> = []
    private var cameAt: [String: Double] = [:]
    private var wentAt: [String: Double] = [:]
    private var heardAt: [String: Double] = [:]
    /// By phone and region: the index in the phone's lines its previous expectation ended at,
    /// and, while one is judged, how far its search has read without a match (a line that did
    /// not meet it will not later, so each line is looked at once).
    private var checked: [String: Int] = [:]
    private var scanned: [String: Int] = [:]

    init(scenario: Scenario, logs: [PhoneLog]) {
        self.logs = Dictionary(logs.map { ($0.phone.name, $0) }) { first, _ in first }
        var members: [String: Set<String>] = [:]
        for region in scenario.regions {
            members[region.name] = Set(scenario.beacons.filter { region.contains($0.beacon) }.map(\.name))
        }
        self.members = members
    }

    func start() {
        for name in logs.keys.sorted() { logs[name]?.start() }
    }

    /// Ends every phone's command and what it started.
    func stop() {
        for log in logs.values { log.stop() }
    }

    /// What the phones printed since, in order of receipt.
    func take(now: Double) -> [PhoneLine] {
        logs.keys.sorted().flatMap { logs[$0]?.take(now: now) ?? [] }.sorted { $0.at < $1.at }
    }

    /// These beacons were put on the air, made at `at` (their enable answered).
    func advertised(_ names: [String], at: Double) {
        for (region, beacons) in members where onAir.isDisjoint(with: beacons) && !beacons.isDisjoint(with: names) {
            cameAt[region] = at
        }
        onAir.formUnion(names)
    }

    /// These beacons (nil: all) were taken off the air, made at `at` (their disable answered).
    func stopped(_ names: [String]?, at: Double) {
        let before = onAir
        if let names { onAir.subtract(names) } else { onAir.removeAll() }
        for (region, beacons) in members where !before.isDisjoint(with: beacons) && onAir.isDisjoint(with: beacons) {
            wentAt[region] = at
        }
    }

    /// The rig's own scanner heard one of the region's beacons.
    func heard(_ region: String, at: Double) {
        heardAt[region] = at
    }

    /// The line of `phone`'s log that meets `expected` for `region`, looked for since the
    /// region's previous expectation on that phone (a state: in every line so far, the last
    /// that says one); for `noEvent`, the transition that breaks it, received from `since` on
    /// (the step's start).
    func line(_ phone: String, _ region: String, _ expected: Scenario.PhoneExpectation, since: Double) -> PhoneLine? {
        guard let log = logs[phone] else { return nil }
        let lines = log.lines
        let key = phone + "\u{0}" + region
        let from = min(max(checked[key] ?? 0, scanned[key] ?? 0), lines.count)
        let found: PhoneLine?
        switch expected {
        case .enter, .exit:
            found = lines[from...].first { $0.concerns(region) && $0.transition == expected }
        case .noEvent:
            found = lines[from...].first { $0.at >= since && $0.concerns(region) && ($0.transition == .enter || $0.transition == .exit) }
        case .inside, .outside:
            // The state the app last said, or implied by its last transition.
            guard let last = lines.last(where: { $0.concerns(region) }) else { return nil }
            let state: Scenario.PhoneExpectation? = switch last.transition {
            case .enter, .inside: .inside
            case .exit, .outside: .outside
            default: nil
            }
            return state == expected ? last : nil
        }
        if found == nil { scanned[key] = lines.count }
        return found
    }

    /// The region's next expectation on `phone` looks at lines from here on.
    func finish(_ phone: String, _ region: String) {
        checked[phone + "\u{0}" + region] = logs[phone]?.lines.count ?? 0
        scanned[phone + "\u{0}" + region] = nil
    }

    /// From the rig's own instant to the phone's line: for an enter (or inside), the region's
    /// beacons coming on the air; for an exit (or outside), the last of them going off it;
    /// nil where the rig made no such change before the line.
    func latency(of line: PhoneLine, _ region: String) -> Double? {
        let instant: Double? = switch line.transition {
        case .enter, .inside: cameAt[region]
        case .exit, .outside: wentAt[region]
        default: nil
        }
        guard let instant, instant <= line.at else { return nil }
        return line.at - instant
    }

    /// How many of `phone`'s lines from `start` to `end` were not read for judging (over the
    /// rate, or past the lines kept).
    func unread(_ phone: String, from start: Double, to end: Double) -> Int {
        logs[phone]?.unread(from: start, to: end) ?? 0
    }

    /// What the phone's command did, for a failure's detail.
    func account(of phone: String) -> String {
        logs[phone].map { "\(phone): \($0.account)" } ?? "\(phone): not started"
    }

    /// What the rig's radio did with the region's beacons, for a failure's detail, so that a
    /// late phone is told from a beacon that was never on the air.
    func radio(_ region: String) -> String {
        let beacons = members[region] ?? []
        var text = "the radio: "
        if beacons.isEmpty {
            text += "no beacon of the scenario is in \(region)"
        } else if !onAir.isDisjoint(with: beacons) {
            text += "\(region)'s beacons on the air" + (cameAt[region].map { " since " + Self.seconds($0) } ?? "")
        } else if let went = wentAt[region] {
            text += "\(region)'s beacons off the air since " + Self.seconds(went) + ", as planned"
        } else {
            text += "\(region)'s beacons never on the air"
        }
        return text + (heardAt[region].map { ", last heard by the rig's scanner at " + Self.seconds($0) } ?? "")
    }

    private static func seconds(_ value: Double) -> String {
        "\((value * 10).rounded() / 10) s"
    }
}
