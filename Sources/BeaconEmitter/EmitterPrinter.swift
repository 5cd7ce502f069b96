// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// Prints what the emitter reports: readable lines, or JSON lines with `--json`.
/// Results go to standard output; progress and verbose steps to standard error. Under
/// systemd, readable lines go to standard error with their syslog priority (`<4>...`), as
/// journald reads them, and the service manager hears READY, STATUS and STOPPING.
final class EmitterPrinter {
    let json: Bool
    let verbose: Bool
    /// The beacons on the air (changed by a reload).
    var beacons: [Beacon]
    /// Each beacon's own parameters, in order (changed by a reload).
    var parameters: [BeaconParameters]
    /// systemd's notification socket, under `Type=notify`.
    var service: ServiceNotifier?
    /// The interval as the user reads it: "100 ms = 160 x 0.625 ms".
    let interval: String
    let intervalUnits: UInt32
    var device = ""

    init(json: Bool, verbose: Bool, options: AdvertisingOptions) {
        self.json = json
        self.verbose = verbose
        self.beacons = options.beacons
        self.parameters = options.beaconParameters
        self.interval = options.intervalDescription
        self.intervalUnits = options.intervalUnits
    }

    /// The mean period, in ms, a receiver hears beacon `index` at under `plan`: its own interval
    /// or the run's, shared with those taking turns on its set.
    private func heardEvery(_ index: Int, plan: AdvertisingPlan) -> Double {
        let units = own(index).intervalUnits ?? intervalUnits
        let every = plan.heardEvery(beacon: index, of: beacons.count, interval: Double(units) * 0.625)
        return (every * 10).rounded() / 10
    }

    /// Beacon `index`'s own parameters (`.run` where it has none).
    private func own(_ index: Int) -> BeaconParameters {
        parameters.indices.contains(index) ? parameters[index] : .run
    }

    /// A beacon's JSON line (one object) with its own parameters where it has them, in the
    /// shape `control list` shows them (`BeaconParameters.fields`).
    static func withOwn(_ own: BeaconParameters, _ line: String) -> String {
        guard own != .run, line.hasSuffix("}") else { return line }
        return line.dropLast() + "," + JSONValue.object(own.fields).line.dropFirst()
    }

    /// A fact worth a warning's priority: `{"event": EVENT, "detail": TEXT}` with --json, else
    /// `EVENT: TEXT` on standard error.
    private func notice(_ event: String, _ text: String) {
        if json {
            var object = JSONObject()
            object.add("event", event)
            object.add("detail", text)
            print(object.line)
        } else {
            Console.error("\(event): \(text)", priority: .warning)
        }
    }

    func progress(_ text: String) {
        Console.error(text, priority: .notice)
    }

    /// A readable line: standard output, or the journal with its priority.
    func line(_ text: String, _ priority: JournalStream.Priority = .info) {
        if Console.journal {
            Console.error(text, priority: priority)
        } else {
            print(text)
        }
    }

    /// Tells systemd how things stand (nothing when not under systemd).
    func notify(_ assignments: String...) {
        service?.notify(assignments)
    }

    /// A change a control request made: a line in the output as for any other change of the air
    /// (an add over the socket printed nothing on the emitter's side).
    func controlChange(_ command: String, id: Int, beacon: Beacon?) {
        let sighting = beacon.map { SightingFormatter.json(BeaconSighting(beacon: $0)) }
        if json {
            var line = #"{"event":"control","command":""# + command + #"","id":\#(id)"#
            if let sighting { line += #","beacon":"# + sighting }
            print(line + "}")
        } else {
            let done = ["add": "added", "update": "updated", "remove": "removed"][command] ?? command
            line("control: beacon \(id) \(done)" + (beacon.map { ": " + SightingFormatter.text(BeaconSighting(beacon: $0)) } ?? ""))
        }
        fflushStandardOutput()
    }

    func handle(_ event: EmitterEvent) {
        switch event {
        case let .stopping(reason):
            notify("STOPPING=1", ServiceNotifier.status("stopping: \(reason)"))
        case let .step(text):
            if verbose { Console.error(text, priority: .debug) }
        case let .capabilities(capabilities):
            if verbose {
                Console.error("controller: " + (!capabilities.supportsExtendedAdvertising ? "legacy advertising only"
                    : "extended advertising" + (capabilities.numberOfAdvertisingSets.map { " with \($0) sets" } ?? "")))
            }
        case let .advertising(plan, elapsed, roundTrips, ownAddresses):
            advertising(plan, elapsed: elapsed, roundTrips: roundTrips, ownAddresses: ownAddresses)
        case let .stopped(reason, keptOn): stopped(reason, keptOn: keptOn)
        case let .offAir(disruption): offAir(disruption)
        case let .waiting(availability): waiting(availability)
        case let .restoreFailed(error, retryIn): restoreFailed(error, retryIn: retryIn)
        case let .ignored(input): ignored(input)
        case let .warning(text): notice("warning", text)
        case let .withheld(text): notice("withheld", text)
        case let .leftBehind(error):
            Console.error("could not take the beacons off \(device) at exit: \(error.message); run `beacon-emit stop -i \(device)` "
                          + "once it is back")
        case let .restored(cause, gap, afterUsable):
            restored(cause, gap: gap, afterUsable: afterUsable)
        case let .canary(news):
            canary(news)
        }
        fflushStandardOutput()
    }

    /// Advertising stopped, or left on (--keep).
    private func stopped(_ reason: String, keptOn: Bool) {
        if json {
            var object = JSONObject()
            object.add("event", "stopped")
            object.add("reason", reason)
            object.add("advertisingOn", keptOn)
            print(object.line)
        } else {
            line(keptOn ? "left advertising on (--keep): \(reason)" : "advertising off: \(reason)")
        }
    }

    /// The beacons went off the air (or were not heard).
    private func offAir(_ disruption: Disruption) {
        if json {
            var object = JSONObject()
            object.add("event", "off-air")
            object.add("cause", disruption.code)
            object.add("detail", disruption.description)
            if case let .notHeard(numbers, duration) = disruption {
                object.add("beacons", integers: numbers)
                object.add("forMs", number: Self.milliseconds(duration))
            }
            print(object.line)
        } else if case .notHeard = disruption {
            line("not heard: \(disruption); reprogramming the beacons once", .warning)
        } else {
            line("off the air: \(disruption); the beacons go back once \(device) is usable", .warning)
        }
        notify(ServiceNotifier.status("off the air: \(disruption)"))
    }

    /// Waiting for the adapter to come back.
    private func waiting(_ availability: AdapterAvailability) {
        if json {
            var object = JSONObject()
            object.add("event", "waiting")
            object.add("state", availability == .down ? "down" : "gone")
            print(object.line)
        } else {
            line(availability == .down
                 ? "waiting for \(device): it is down or powered off (bring it up, power it on)"
                 : "waiting for \(device): it is gone (plug it back in, restart the bridge)", .warning)
        }
        notify(ServiceNotifier.status("waiting for \(device) (\(availability == .down ? "down" : "gone"))"))
    }

    /// A restore that failed, to be tried again.
    private func restoreFailed(_ error: HostError, retryIn: Duration) {
        if json {
            var object = JSONObject()
            object.add("event", "restore-failed")
            object.add("error", error.message)
            object.add("retryInMs", number: Self.milliseconds(retryIn))
            print(object.line)
        } else {
            Console.error("could not put the beacons back yet (trying again in \(Self.milliseconds(retryIn)) ms): \(error.message)",
                          priority: .warning)
        }
    }

    /// Input nobody asked for, counted.
    private func ignored(_ input: UnsolicitedInputReport) {
        if json {
            var object = JSONObject()
            object.add("event", "ignored")
            object.add("kind", input.kind.code)
            object.add("count", input.count)
            object.add("detail", input.detail)
            print(object.line)
        } else {
            Console.error("warning: \(input)", priority: .warning)
        }
    }

    /// Advertising began (or began again): the plan, each beacon, and the unit told.
    private func advertising(_ plan: AdvertisingPlan, elapsed: Duration, roundTrips: Int, ownAddresses: [BluetoothAddress?]) {
        let milliseconds = Self.milliseconds(elapsed)
        if json {
            var object = JSONObject()
            object.add("event", "advertising")
            object.add("device", device)
            object.add("mode", plan.mode.rawValue)
            object.add("sets", plan.handles.count)
            object.add("handles", integers: plan.handles)
            object.add("rotating", plan.rotating)
            if let first = plan.firstTurn {
                // Who takes turns, as the text line says it: beacons from this number on, on this set.
                object.add("turnsFrom", first + 1)
                object.add("turnsOn", plan.handle(ofBeacon: first))
            }
            object.add("address", plan.address?.description ?? "")
            object.add("addressType", plan.addressIsRandom ? "random" : "public")
            object.add("beacons", beacons.count)
            object.add("intervalUnits", intervalUnits)
            if let range = plan.kernelInterval {
                object.add("kernelIntervalMs", integers: [Int(range.lowerBound), Int(range.upperBound)])
            }
            object.add("elapsedMs", number: milliseconds)
            object.add("hciRoundTrips", roundTrips)
            print(object.line)
            for (index, beacon) in beacons.enumerated() {
                // Each beacon an event line too: its id, then decode's keys, then its own parameters,
                // then the mean period a receiver hears it at under the plan, and the address of its
                // own it goes out as (`replay`'s key).
                let keys = SightingFormatter.json(BeaconSighting(beacon: beacon)).dropFirst()
                let line = Self.withOwn(own(index), #"{"event":"beacon","id":\#(index + 1),"# + keys)
                let sentAs = ownAddresses.indices.contains(index) ? ownAddresses[index].map { #","sentAs":"\#($0)""# } : nil
                print(line.dropLast() + #","achievedInterval":\#(Self.number(heardEvery(index, plan: plan)))"#
                      + (sentAs ?? "") + "}")
            }
        } else {
            let plural = plan.handles.count == 1 ? "" : "s"
            let numbers = plan.handles.map(String.init).joined(separator: ", ")
            let how = switch plan.mode {
            case .extended: "extended advertising, \(plan.handles.count) set\(plural) (\(numbers))"
            case .legacy: "legacy advertising"
            case .managed: "the kernel's management API, \(plan.handles.count) instance\(plural) (\(numbers))"
            }
            let rotation = plan.firstTurn.map { first in
                plan.mode == .legacy ? ", beacons taking turns (more beacons than sets)"
                    : ", beacons \(first + 1)-\(beacons.count) taking turns on \(plan.mode == .managed ? "instance" : "set") "
                      + "\(plan.handle(ofBeacon: first)) (more beacons than \(plan.mode == .managed ? "instances" : "sets"))"
                      + ", each heard every \(Self.number(heardEvery(first, plan: plan))) ms"
            } ?? ""
            let from = plan.mode == .managed
                ? (plan.addressIsRandom ? "a random address the kernel chooses" : "the adapter's identity address")
                : "\(plan.address?.description ?? "?") (\(plan.addressIsRandom ? "random" : "public"))"
            let every = plan.kernelInterval.map {
                "\(Self.number($0.lowerBound))-\(Self.number($0.upperBound)) ms (the kernel's choice)" } ?? interval
            line("advertising on \(device) from \(from): "
                  + "\(how)\(rotation), every \(every); enabled \(milliseconds) ms after start, "
                  + "\(roundTrips) HCI round trips")
            for (index, beacon) in beacons.enumerated() {
                let own = own(index).description
                line("  " + SightingFormatter.text(BeaconSighting(beacon: beacon)) + (own.isEmpty ? "" : " (its own \(own))"))
            }
        }
        notify("READY=1", ServiceNotifier.status("advertising \(beacons.count) beacon\(beacons.count == 1 ? "" : "s") on \(device) "
                                                  + "(\(plan.mode.rawValue))"))
    }

    /// Back on the air after a disruption, and how long it took.
    private func restored(_ cause: Disruption, gap: Duration, afterUsable: Duration) {
        if json {
            var object = JSONObject()
            object.add("event", "restored")
            object.add("cause", cause.code)
            object.add("gapMs", number: Self.milliseconds(gap))
            object.add("afterUsableMs", number: Self.milliseconds(afterUsable))
            print(object.line)
        } else if case .notHeard = cause {
            line("reprogrammed the beacons \(Self.milliseconds(gap)) ms after the canary missed them; "
                 + "it listens for them again", .notice)
        } else {
            line("back on the air after \(Self.milliseconds(gap)) ms off (\(cause)), "
                 + "\(Self.milliseconds(afterUsable)) ms after \(device) was usable again", .notice)
        }
        notify(ServiceNotifier.status("advertising \(beacons.count) beacon\(beacons.count == 1 ? "" : "s") on \(device) "
                                      + "(back after \(Self.milliseconds(gap)) ms off)"))
    }

    /// What the canary heard (`--canary`).
    private func canary(_ news: CanaryEvent) {
        let advertising = "advertising \(beacons.count) beacon\(beacons.count == 1 ? "" : "s") on \(device)"
        switch news {
        case let .stillNotHeard(beacon, duration):
            if json {
                var object = JSONObject()
                object.add("event", "not-heard")
                object.add("beacon", beacon)
                object.add("forMs", number: Self.milliseconds(duration))
                print(object.line)
            } else {
                line("beacon \(beacon) is still not heard by the canary, \(Self.milliseconds(duration)) ms since it last was "
                     + "(reprogrammed once already): check the controller and its antenna", .warning)
            }
            notify(ServiceNotifier.status("\(advertising); beacon \(beacon) not heard for "
                                          + "\(Self.seconds(duration)) s"))
        case let .heardAgain(beacon, duration):
            if json {
                var object = JSONObject()
                object.add("event", "heard-again")
                object.add("beacon", beacon)
                object.add("afterMs", number: Self.milliseconds(duration))
                print(object.line)
            } else {
                line("beacon \(beacon) is heard again by the canary, after \(Self.milliseconds(duration)) ms unheard", .notice)
            }
            notify(ServiceNotifier.status("\(advertising); beacon \(beacon) heard again"))
        case let .lastHeard(ages):
            let heard = ages.enumerated().map { index, age in
                "beacon \(index + 1) " + (age.map { "heard \(Self.seconds($0)) s ago" } ?? "not heard yet")
            }
            if verbose { Console.error("canary: " + heard.joined(separator: ", "), priority: .debug) }
            notify(ServiceNotifier.status("\(advertising); " + heard.joined(separator: ", ")))
        }
    }

    /// Seconds with one decimal (`Disruption.seconds`).
    static func seconds(_ duration: Duration) -> String { Disruption.seconds(duration) }

    func received(_ report: ScanReport, after elapsed: Duration) {
        if json {
            var object = JSONObject()
            object.add("event", "received")
            object.add("address", report.address.description)
            if let rssi = report.rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
            object.add("data", HexText.format(report.data))
            object.add("afterMs", number: Self.milliseconds(elapsed))
            print(object.line)
        } else {
            line("a virtual scanner received it from \(report.address) \(Self.milliseconds(elapsed)) ms after "
                  + "scanning began: \(report.data.count) bytes, identical to the data set")
        }
        fflushStandardOutput()
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func milliseconds(_ duration: Duration) -> String {
        let tenths = duration.components.seconds * 10_000 + duration.components.attoseconds / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
