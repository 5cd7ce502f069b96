// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import Foundation

/// The control protocol of a running emitter (`advertise --control PATH`): one JSON object
/// per line in, one per line out. Requests:
///
///     {"command": "list"}
///     {"command": "status"}
///     {"command": "add", "beacon": {"uuid": "...", "major": 1, "minor": 2}}   (or "uuid=...,major=1,minor=2")
///     {"command": "update", "id": 1, "fields": {"minor": 3}}   (or {"interval": 200, "txPower": -8})
///     {"command": "remove", "id": 2}
///
/// Every reply has `"ok": true` with what was asked, or `"ok": false` with an `"error"`; a
/// request that fails changes nothing: the list, the ids and the air change together or not
/// at all. Beacons are named by an id that stays theirs (the first ones 1, 2, ... in the order
/// given; each added one the next number).
///
/// A request that changes the beacons (add, update, remove) while they are off the air, or
/// that a disruption cuts short, is held and run once they are back; one still held after
/// `holdLimit` is answered `"ok": false, "retry": true`, having changed nothing. One that comes
/// while a command of the emitter waits for its answer is held until the command is over.
public final class ControlHandler {
    private let session: any LiveAdvertising
    private let makeBeacon: BeaconFactory
    private let fieldsOf: (Beacon) -> [String: String]
    private let started = ContinuousClock.now
    /// What the emitter last reported: on the air, off it, waiting for the adapter.
    private var state = "on-air"
    private var lastDisruption: String?
    /// Set by the caller: the device, and how advertising runs there.
    public var device = ""
    /// With a canary (`advertise --canary`): its device, and for each beacon in order how long
    /// ago it was heard (nil: not yet) and whether it is unheard now; `status` reports them.
    public var canary: (device: String, beacons: () -> [(lastHeard: Duration?, unheard: Bool)])?
    /// What the server in front refused or dropped, by why (`ControlServer.Refusals`), for status.
    public var refused: (() -> [String: Int])?
    /// Each change a request made, once made: the command (add, update, remove), the beacon's
    /// id, and the beacon as it is now (nil when removed). The emitter says so in its output.
    public var changed: ((_ command: String, _ id: Int, _ beacon: Beacon?) -> Void)?
    /// Each request answered (not one held, until it is): its command (`other` for a line
    /// that is no request) and how it ended. For the emitter's metrics.
    public var answered: ((_ command: String, _ outcome: Outcome) -> Void)?
    /// Set by the server while a command of the emitter waits for its answer: a change is held
    /// (whatever its age) until the command is over, the others are answered.
    public var commandWaiting = false
    /// How long a change is held for the beacons to come back before it is answered `retry`.
    public static let holdLimit = Duration.seconds(5)

    /// - Parameters:
    ///   - makeBeacon: builds a beacon from fields (the `--beacon` keys).
    ///   - fieldsOf: a beacon's fields in those keys (what an update starts from).
    public init(session: any LiveAdvertising, makeBeacon: @escaping BeaconFactory = BeaconDescription.beacon(fromFields:parameters:),
                fieldsOf: @escaping (Beacon) -> [String: String] = BeaconDescription.fields(of:)) {
        self.session = session
        self.makeBeacon = makeBeacon
        self.fieldsOf = fieldsOf
    }

    /// Follows the emitter's events, for `status`.
    public func note(_ event: EmitterEvent) {
        switch event {
        case let .offAir(disruption):
            state = "off-air"
            lastDisruption = disruption.description
        case .waiting: state = "waiting"
        case .restored, .advertising: state = "on-air"
        case .stopped: state = "stopped"
        default: break
        }
    }

    package struct Refusal: Error { package var message: String }

    /// Whether a change would run now: the beacons are on the air.
    public var acceptsChanges: Bool { state == "on-air" }

    /// The reply to one request line (without its line end), never held: a change that would
    /// be held is answered `retry` at once.
    public func reply(to line: String) -> String {
        respond(to: line, received: .now - Self.holdLimit) ?? ""
    }

    /// The reply to one request line (without its line end), received at `received`; nil when
    /// the request is held (a change while the beacons are off the air, one a disruption cut
    /// short, or one while a command waits): the caller offers it again later, in order; off
    /// the air, it is answered `retry` once `holdLimit` has passed since `received`.
    public func respond(to line: String, received: ContinuousClock.Instant) -> String? {
        var command = "other"
        let (reply, outcome): (String?, Outcome)
        do {
            let request = try ControlRequest(line: line)
            command = request.command
            (reply, outcome) = try respond(to: request, received: received)
        } catch let refusal as Refusal {
            (reply, outcome) = (ControlReply.refusal(refusal.message).line, .refused)
        } catch let refusal as ControlRequest.Refusal {
            (reply, outcome) = (ControlReply.refusal(refusal.message).line, .error)
        } catch let error as HostError {
            (reply, outcome) = (ControlReply.refusal(error.description).line, .refused)
        } catch {
            (reply, outcome) = (ControlReply.refusal("\(error)").line, .error)
        }
        if reply != nil { answered?(command, outcome) }
        return reply
    }

    /// How a request ended, for `answered`.
    public enum Outcome: String, Sendable {
        /// Done as asked.
        case ok
        /// Refused: by the controller or the advertising's rules, the emitter stopping, or held
        /// past `holdLimit`.
        case refused
        /// No request: not JSON, an unknown command or field, a field of the wrong kind.
        case error
    }

    private func respond(to request: ControlRequest, received: ContinuousClock.Instant) throws -> (String?, Outcome) {
        guard request.changesBeacons else { return (try handle(request).line, .ok) }
        if state == "stopped" { throw Refusal(message: "the emitter is stopping: nothing changes now") }
        guard !commandWaiting else { return (nil, .ok) }
        guard acceptsChanges else { return (held(since: received), .refused) }
        do {
            return (try handle(request).line, .ok)
        } catch let HostError.interrupted(disruption, _) {
            // Undone; the supervisor is putting the beacons back (its events confirm it).
            state = "off-air"
            lastDisruption = disruption.description
            return (held(since: received), .refused)
        }
    }

    /// Nil while a held request may wait longer; then the `retry` answer.
    private func held(since received: ContinuousClock.Instant) -> String? {
        guard received.duration(to: .now) >= Self.holdLimit else { return nil }
        let why = lastDisruption.map { "off the air (\($0))" } ?? (state == "waiting" ? "waiting for the adapter" : "off the air")
        return ControlReply.refusal("the beacons are \(why) and were not back within \(Self.holdLimit); "
                                    + "nothing changed: send the request again", retry: true).line
    }

    private func handle(_ request: ControlRequest) throws -> ControlReply {
        switch request {
        case .list:
            return ControlReply(beacons: session.running.map(Self.describe))
        case .status:
            let canary = canary.map { canary in
                ControlReply.Canary(device: canary.device, beacons: zip(session.ids, canary.beacons()).map { id, state in
                    ControlReply.HeardBeacon(id: id.rawValue, heard: !state.unheard && state.lastHeard != nil,
                                             lastHeardMsAgo: state.lastHeard.map {
                                                 Int($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)
                                             })
                })
            }
            return ControlReply(status: .init(state: state, beaconCount: session.running.count,
                                              uptimeSeconds: Int(started.duration(to: .now).components.seconds),
                                              device: device, lastDisruption: lastDisruption, canary: canary,
                                              refused: refused?()))
        case let .add(described):
            let given = try Self.beaconFields(described, what: "add's \"beacon\"")
            if let refusal = Self.fileFields(in: given, command: "add") { throw refusal }
            let (fields, parameters) = try ownParameters(in: given)
            let beacon = try build(fields, parameters)
            let id = try session.add(beacon, parameters: parameters)
            changed?("add", id.rawValue, beacon)
            return ControlReply(id: id.rawValue, beacon: try describe(id.rawValue))
        case let .update(id, changed):
            let now = try running(id)
            let changes = try Self.beaconFields(changed, what: "update's \"fields\"")
            guard !changes.isEmpty else {
                throw Refusal(message: "update changes no field: give \"fields\": {\"minor\": 3} (or {\"interval\": 200})")
            }
            let current = fieldsOf(now.beacon)
            if let refusal = Self.secretFields(in: changes, of: now, current: current) ?? Self.fileFields(in: changes, command: "update") {
                throw refusal
            }
            // The parameters as a whole: the ones it had, with those the update gives.
            let (changedData, given) = try ownParameters(in: changes)
            let had = now.parameters
            var parameters = had.merging(given)
            // A rotation given alone implies a made-up address; one the beacon has stays then.
            let namesAddress = changes.keys.contains { BeaconDescription.plain($0) == "address" }
            if !namesAddress, had.address?.isMadeUp ?? false { parameters.address = had.address }
            if parameters.addressRotation != nil && !(parameters.address?.isMadeUp ?? false) {
                throw Refusal(message: "update: rotateAddress makes a new address every period: it goes with address static "
                              + "or non-resolvable, not \(parameters.address?.text ?? "none")")
            }
            let beacon: Beacon
            do {
                beacon = try build(current.merging(changedData) { $1 }, parameters)
            } catch {
                throw foreignFields(in: changedData, of: now, current: current) ?? error
            }
            try session.update(now.id, to: beacon, parameters: parameters)
            self.changed?("update", id, beacon)
            return ControlReply(id: id, beacon: try describe(id))
        case let .remove(id):
            try session.remove(try running(id).id)
            changed?("remove", id, nil)
            return ControlReply(id: id)
        }
    }

    /// A client's fields that name a file (`identity-key-file`), as the refusal that names
    /// them: the emitter would read it with its own rights, so a client could have it use the
    /// emitter's own key (or its credentials') and tell every identifier it will send, for any
    /// clock; a FIFO would hold its loop. A key reaches a beacon from the emitter's command
    /// line, configuration or credentials, or inline from the client (its own key).
    package static func fileFields(in fields: [String: String], command: String) -> Refusal? {
        let files = fields.keys.filter { BeaconDescription.plain($0).hasSuffix("file") }.sorted()
        guard !files.isEmpty else { return nil }
        return Refusal(message: "\(command): " + files.map { "\"\($0)\"" }.joined(separator: ", ")
            + " names a file, which the emitter would read with its own rights: over the control socket a beacon's key "
            + "is given inline (identity-key), or the emitter is started with it (--identity-key-file, its configuration)")
    }

    /// An update's fields that its beacon's format keeps while it runs (`fixedWhileRunning`:
    /// Eddystone-EID's key and clock), as the refusal that names them. Removing the beacon and
    /// adding it again is the way.
    private static func secretFields(in changes: [String: String], of running: RunningBeacon,
                                     current: [String: String]) -> Refusal? {
        let plain = BeaconDescription.plain
        guard let format = BeaconFormats.named(current["type"] ?? BeaconFormats.ownNames[0]),
              let (keys, why) = format.fixedWhileRunning else { return nil }
        let fixedKeys = Set(keys.map(plain))
        let fixed = changes.keys.filter { fixedKeys.contains(plain($0)) }.sorted()
        guard !fixed.isEmpty else { return nil }
        return Refusal(message: "update: " + fixed.map { "\"\($0)\"" }.joined(separator: ", ")
            + " of \(format.name) beacon \(running.id) cannot change while it runs (\(why)): remove it and add it again")
    }

    /// An update's fields that its beacon does not have (a URL for an iBeacon), as the refusal
    /// that names them; nil when every field is the beacon's own.
    private func foreignFields(in changes: [String: String], of running: RunningBeacon, current: [String: String]) -> Refusal? {
        // pduCount, pdu-count and pdu_count are one key.
        let plain = BeaconDescription.plain
        let own = Set(current.keys.map(plain))
        let foreign = changes.keys.filter { !own.contains(plain($0)) }.sorted()
        guard !foreign.isEmpty else { return nil }
        let type = Self.describe(running)["type"]?.string ?? "beacon"
        return Refusal(message: "update: " + foreign.map { "\"\($0)\"" }.joined(separator: ", ")
            + (foreign.count == 1 ? " is not a field" : " are not fields") + " of beacon \(running.id) (type \(type); "
            + "its fields: \(current.keys.sorted().joined(separator: ", "))): to change what it is, remove it and add another")
    }

    /// The fields apart: the beacon's data, and its own interval and TX power.
    private func ownParameters(in fields: [String: String]) throws -> (fields: [String: String], parameters: BeaconParameters) {
        do {
            return try BeaconDescription.parameters(in: fields)
        } catch {
            throw Refusal(message: error.message)
        }
    }

    /// The running beacon with id `id`.
    private func running(_ id: Int) throws -> RunningBeacon {
        guard let running = session.running(BeaconID(id)) else {
            throw Refusal(message: "no beacon with id \(id); there are: \(session.ids.map(\.description).joined(separator: ", "))")
        }
        return running
    }

    /// Fields from a JSON object (values as their text) or a `KEY=VALUE,...` string.
    package static func beaconFields(_ value: JSONValue, what: String) throws -> [String: String] {
        if let text = value.string {
            do {
                return Dictionary(try KeyValueText.pairs(text).map { ($0.key, $0.value) }) { $1 }
            } catch {
                throw Refusal(message: "\(what): expected KEY=VALUE pairs, got '\(error.item)'")
            }
        }
        guard case let .object(object) = value else {
            throw Refusal(message: "\(what) must be an object of fields ({\"uuid\": ..., \"major\": 1}) or KEY=VALUE,...")
        }
        var fields: [String: String] = [:]
        for (key, value) in object {
            switch value {
            case let .string(text):
                // A number written as a string ("7") is a mistake, refused as a scenario refuses it.
                if let range = ScenarioParser.numberRanges[ScenarioParser.plain(key)] {
                    throw Refusal(message: "\(what): \"\(key)\" must be a number from \(range), got the string \"\(text)\" "
                                  + "(write it without quotes)")
                }
                fields[key] = text
            case .integer, .number: fields[key] = value.text
            case let .bool(flag): fields[key] = flag ? "true" : "false"
            case let .array(items) where BeaconDescription.listKeys.contains(ScenarioParser.plain(key)):
                // A layout's identifiers or data fields, in order: strings or numbers.
                let texts = items.compactMap { item -> String? in
                    switch item {
                    case let .string(text) where !text.isEmpty && !text.contains(" "): text
                    case .integer, .number: item.text
                    default: nil
                    }
                }
                guard texts.count == items.count, items.count <= BeaconLayout.maximumTerms else {
                    throw Refusal(message: "\(what): \"\(key)\" must list strings or numbers (at most \(BeaconLayout.maximumTerms))")
                }
                fields[key] = texts.joined(separator: " ")
            default: throw Refusal(message: "\(what): \"\(key)\" must be a string, a number or true/false")
            }
        }
        return fields
    }

    private func build(_ fields: [String: String], _ parameters: BeaconParameters) throws -> Beacon {
        do {
            return try makeBeacon(fields, parameters)
        } catch {
            throw Refusal(message: "\(error)")
        }
    }

    /// Beacon `id` as `list` shows it, as it is after a change.
    private func describe(_ id: Int) throws -> JSONValue {
        Self.describe(try running(id))
    }

    /// A beacon as `list` shows it: its id, the keys of `decode --json`, its own parameters and
    /// its data.
    private static func describe(_ running: RunningBeacon) -> JSONValue {
        let (beacon, id, own) = (running.beacon, running.id, running.parameters)
        // The keys `decode --json` writes (its fast writer), read into the model once.
        var object: [String: JSONValue] = [:]
        if case let .object(keys) = JSONValue(parsing: SightingFormatter.json(BeaconSighting(beacon: beacon))) { object = keys }
        object["id"] = .integer(id.rawValue)
        object.merge(own.fields) { $1 }
        object["data"] = .string(HexText.format(beacon.advertisingData.bytes))
        return .object(object)
    }
}
