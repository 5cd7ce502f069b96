// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// One reply of the control protocol, as the server writes it and `beacon-emit control` and
/// `run`'s boxes read it: one JSON object per line. Every reply says `ok`; a refusal says why
/// (`error`) and, when the beacons were off the air and nothing changed, that the request may
/// be sent again (`retry`). What else it carries depends on the request:
///
///     list:               {"ok": true, "beacons": [{"id": 1, "type": "ibeacon", ...}, ...]}
///     status:             {"ok": true, "state": "on-air", "beacons": 2, "uptimeSeconds": 5, "device": "hci0", ...}
///     add, update:        {"ok": true, "id": 3, "beacon": {"id": 3, ...}}
///     remove:             {"ok": true, "id": 3}
///     a refusal:          {"ok": false, "error": "...", "retry": true}   (retry only where it applies)
///
/// Read with `ControlReply(line:)` (or `JSONDecoder`), written with `line` (or `JSONEncoder`).
public struct ControlReply: Codable, Hashable, Sendable {
    public var ok: Bool
    /// Why the request was refused.
    public var error: String?
    /// The beacons were off the air and the request changed nothing: send it again.
    public var retry: Bool
    /// add, update and remove: the beacon's id.
    public var id: Int?
    /// add and update: the beacon as `list` shows it.
    public var beacon: JSONValue?
    /// list: every beacon (its id, the keys of `decode --json`, and its data).
    public var beacons: [JSONValue]?
    /// status: the emitter's.
    public var status: Status?

    /// What `status` answers.
    public struct Status: Hashable, Sendable {
        /// `on-air`, `off-air`, `waiting` (for the adapter) or `stopped`.
        public var state: String
        public var beaconCount: Int
        public var uptimeSeconds: Int
        /// The device, and how advertising runs there.
        public var device: String
        /// What last took the beacons off the air.
        public var lastDisruption: String?
        /// With a canary (`advertise --canary`): what it hears.
        public var canary: Canary?
        /// What the control server refused or dropped since it opened, by why: clients idle past
        /// the deadline, displaced by a newcomer, refused while full, requests past the held
        /// bounds, clients that sent or left too much, accepts that found no descriptor.
        public var refused: [String: Int]?

        public init(state: String, beaconCount: Int, uptimeSeconds: Int, device: String, lastDisruption: String? = nil,
                    canary: Canary? = nil, refused: [String: Int]? = nil) {
            self.state = state
            self.beaconCount = beaconCount
            self.uptimeSeconds = uptimeSeconds
            self.device = device
            self.lastDisruption = lastDisruption
            self.canary = canary
            self.refused = refused
        }
    }

    /// What the canary of `advertise --canary` hears: its device and each beacon, in order.
    public struct Canary: Hashable, Sendable {
        public var device: String
        public var beacons: [HeardBeacon]

        public init(device: String, beacons: [HeardBeacon]) {
            self.device = device
            self.beacons = beacons
        }
    }

    public struct HeardBeacon: Hashable, Sendable {
        public var id: Int
        /// Heard, and not unheard since.
        public var heard: Bool
        /// How long ago it was last heard, in ms; nil when it never was.
        public var lastHeardMsAgo: Int?

        public init(id: Int, heard: Bool, lastHeardMsAgo: Int?) {
            self.id = id
            self.heard = heard
            self.lastHeardMsAgo = lastHeardMsAgo
        }
    }

    public init(ok: Bool = true, error: String? = nil, retry: Bool = false, id: Int? = nil, beacon: JSONValue? = nil,
                beacons: [JSONValue]? = nil, status: Status? = nil) {
        self.ok = ok
        self.error = error
        self.retry = retry
        self.id = id
        self.beacon = beacon
        self.beacons = beacons
        self.status = status
    }

    /// A refusal saying why.
    public static func refusal(_ message: String, retry: Bool = false) -> ControlReply {
        ControlReply(ok: false, error: message, retry: retry)
    }

    /// The reply a line holds; nil when the line is not a JSON object. A member of the wrong
    /// kind counts as missing (a reply without `"ok": true` is a refusal).
    public init?(line: String) {
        guard case let .object(members) = JSONValue(parsing: line) else { return nil }
        self.init(object: members)
    }

    init(object members: [String: JSONValue]) {
        ok = members["ok"]?.bool ?? false
        error = members["error"]?.string
        retry = members["retry"]?.bool ?? false
        id = members["id"]?.integer
        beacon = members["beacon"]
        // "beacons" is list's array, or status's count beside its "state".
        beacons = members["beacons"]?.array
        if let state = members["state"]?.string {
            var refused: [String: Int]?
            if case let .object(counts) = members["refused"] { refused = counts.compactMapValues(\.integer) }
            let canary = members["canary"].flatMap { canary -> Canary? in
                guard let device = canary["device"]?.string else { return nil }
                return Canary(device: device, beacons: (canary["beacons"]?.array ?? []).compactMap { beacon in
                    beacon["id"]?.integer.map {
                        HeardBeacon(id: $0, heard: beacon["heard"]?.bool ?? false, lastHeardMsAgo: beacon["lastHeardMsAgo"]?.integer)
                    }
                })
            }
            status = Status(state: state, beaconCount: members["beacons"]?.integer ?? 0,
                            uptimeSeconds: members["uptimeSeconds"]?.integer ?? 0, device: members["device"]?.string ?? "",
                            lastDisruption: members["lastDisruption"]?.string, canary: canary,
                            refused: refused)
        }
    }

    /// The reply as a JSON object.
    public var object: [String: JSONValue] {
        var members: [String: JSONValue] = ["ok": .bool(ok)]
        members["error"] = error.map(JSONValue.string)
        if retry { members["retry"] = true }
        members["id"] = id.map(JSONValue.integer)
        members["beacon"] = beacon
        members["beacons"] = beacons.map(JSONValue.array)
        if let status {
            members["state"] = .string(status.state)
            members["beacons"] = .integer(status.beaconCount)
            members["uptimeSeconds"] = .integer(status.uptimeSeconds)
            members["device"] = .string(status.device)
            members["lastDisruption"] = status.lastDisruption.map(JSONValue.string)
            members["refused"] = status.refused.map { .object($0.mapValues(JSONValue.integer)) }
            members["canary"] = status.canary.map { canary in
                ["device": .string(canary.device), "beacons": .array(canary.beacons.map { beacon in
                    ["id": .integer(beacon.id), "heard": .bool(beacon.heard),
                     "lastHeardMsAgo": beacon.lastHeardMsAgo.map(JSONValue.integer) ?? .null]
                })]
            }
        }
        return members
    }

    /// The reply as one line of JSON (without its line end).
    public var line: String { JSONValue.object(object).line }

    public init(from decoder: any Decoder) throws {
        guard case let .object(members) = try JSONValue(from: decoder) else {
            throw ControlRequest.Refusal(message: "a control reply is a JSON object")
        }
        self.init(object: members)
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(object).encode(to: encoder)
    }
}
