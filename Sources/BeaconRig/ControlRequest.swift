// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// One request of the control protocol (`advertise --control PATH`), as the server reads it
/// and `beacon-emit control` and `run`'s boxes send it: one JSON object per line, its
/// `"command"` naming the case. Read with `ControlRequest(line:)` (or `JSONDecoder`), whose
/// refusal says what is wrong; written with `line` (or `JSONEncoder`).
public enum ControlRequest: Codable, Hashable, Sendable {
    case list
    case status
    /// A beacon's fields: an object of the `--beacon` keys (numbers as numbers), or
    /// `"KEY=VALUE,..."` text.
    case add(beacon: JSONValue)
    /// The fields that change, as `add` takes them.
    case update(id: Int, fields: JSONValue)
    case remove(id: Int)

    /// Why a line is not a request, in the words the reply gives.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The request a line holds.
    /// - Throws: `Refusal` saying what is wrong: not an object, no or an unknown command, a key
    ///   the command does not take, an id that is not a number.
    public init(line: String) throws(Refusal) {
        guard case let .object(request) = JSONValue(parsing: line) else {
            throw Refusal(message: "not a JSON object: send one object per line, such as {\"command\":\"list\"}")
        }
        try self.init(object: request)
    }

    init(object request: [String: JSONValue]) throws(Refusal) {
        guard let command = request["command"]?.string else {
            throw Refusal(message: "no \"command\": expected one of add, remove, update, list, status")
        }
        let keys = Self.keys(of: command)
        for key in request.keys where !keys.contains(key) {
            throw Refusal(message: "\(command) takes \(keys.sorted().joined(separator: ", ")), not \"\(key)\"")
        }
        switch command {
        case "list": self = .list
        case "status": self = .status
        case "add": self = .add(beacon: request["beacon"] ?? .null)
        case "update": self = .update(id: try Self.id(request["id"]), fields: request["fields"] ?? .null)
        case "remove": self = .remove(id: try Self.id(request["id"]))
        default: throw Refusal(message: "unknown command \"\(command)\": expected one of add, remove, update, list, status")
        }
    }

    /// The command's name, as the request line gives it.
    public var command: String {
        switch self {
        case .list: "list"
        case .status: "status"
        case .add: "add"
        case .update: "update"
        case .remove: "remove"
        }
    }

    /// The keys each command takes.
    static func keys(of command: String) -> Set<String> {
        switch command {
        case "add": ["command", "beacon"]
        case "update": ["command", "id", "fields"]
        case "remove": ["command", "id"]
        default: ["command"]
        }
    }

    private static func id(_ value: JSONValue?) throws(Refusal) -> Int {
        guard let id = value?.integer else { throw Refusal(message: "\"id\" must be a beacon's id (a number; see list)") }
        return id
    }

    /// Whether the request changes the beacons (held while they are off the air).
    public var changesBeacons: Bool {
        switch self {
        case .add, .update, .remove: true
        case .list, .status: false
        }
    }

    /// The request as a JSON object.
    public var object: [String: JSONValue] {
        switch self {
        case .list: ["command": "list"]
        case .status: ["command": "status"]
        case let .add(beacon): ["command": "add", "beacon": beacon]
        case let .update(id, fields): ["command": "update", "id": .integer(id), "fields": fields]
        case let .remove(id): ["command": "remove", "id": .integer(id)]
        }
    }

    /// The request as one line of JSON (without its line end).
    public var line: String { JSONValue.object(object).line }

    public init(from decoder: any Decoder) throws {
        guard case let .object(request) = try JSONValue(from: decoder) else {
            throw Refusal(message: "not a JSON object: send one object per line, such as {\"command\":\"list\"}")
        }
        try self.init(object: request)
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(object).encode(to: encoder)
    }
}
