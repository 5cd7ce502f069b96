// SPDX-License-Identifier: GPL-2.0-or-later

/// One flat JSON object written as a single line, keys in insertion order (so output reads
/// the same way every time: `type` first). Values are strings, integers, decimals, booleans or null.
struct JSONObject {
    private var text = "{"
    private var empty = true

    mutating func add(_ key: String, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &text)
    }

    mutating func add<T: BinaryInteger>(_ key: String, _ value: T) {
        appendKey(key)
        text += String(value)
    }

    mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        text += value ? "true" : "false"
    }

    /// A number already formatted as a JSON number (callers guarantee the form).
    mutating func add(_ key: String, number: String) {
        appendKey(key)
        text += number
    }

    mutating func addNull(_ key: String) {
        appendKey(key)
        text += "null"
    }

    var line: String { text + "}" }

    private mutating func appendKey(_ key: String) {
        if !empty { text += "," }
        empty = false
        Self.appendQuoted(key, to: &text)
        text += ":"
    }

    /// Quotes a string, escaping what RFC 8259 section 7 requires.
    static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
