// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value, read and written through `Codable` (`JSONDecoder`, `JSONEncoder`): the one
/// model for what is read back or exchanged as JSON (the control protocol's requests and
/// replies, a line checked against an expectation). True and false stay apart from numbers,
/// and whole numbers stay exact. The fast writer (`JSONObject`) stays where output is a hot path.
public enum JSONValue: Codable, Hashable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements) { $1 })
    }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// The deepest nesting read (arrays and objects within one another): a control request
    /// needs 3; the decoder and everything that walks a value recurse once per level.
    public static let maximumDepth = 64

    /// Parses one JSON text; nil when it is not JSON, or nests deeper than `maximumDepth`
    /// (measured before anything is decoded).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard Self.depth(of: bytes) <= Self.maximumDepth,
              let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return nil }
        self = value
    }

    /// How deeply a JSON text nests arrays and objects: its brackets and braces outside strings,
    /// counted in one pass (a string is the only place JSON hides one); stops counting once the
    /// text passes `maximumDepth`.
    static func depth(of bytes: [UInt8]) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > maximumDepth { return deepest }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// One line of JSON: keys sorted, slashes as they are.
    public var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A member of an object (nil for anything else, or a missing key).
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members[key]
    }

    public var string: String? { if case let .string(value) = self { value } else { nil } }
    public var bool: Bool? { if case let .bool(value) = self { value } else { nil } }
    public var array: [JSONValue]? { if case let .array(value) = self { value } else { nil } }

    /// Any number, whole or not.
    public var number: Double? {
        switch self {
        case let .integer(value): Double(value)
        case let .number(value): value
        default: nil
        }
    }

    /// A whole number, written as one (`7`) or as a number with no fraction (`7.0`).
    public var integer: Int? {
        switch self {
        case let .integer(value): value
        case let .number(value): Int(exactly: value)
        default: nil
        }
    }

    /// A scalar as text: a string as it is, a number as JSON writes it, `null`, `true`, `false`.
    public var text: String {
        switch self {
        case let .string(value): value
        case .array, .object, .number: line
        case .null: "null"
        case let .bool(value): value ? "true" : "false"
        case let .integer(value): String(value)
        }
    }
}
