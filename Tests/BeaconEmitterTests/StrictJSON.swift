// SPDX-License-Identifier: GPL-2.0-or-later

/// A JSON reader stricter than the usual ones: a key written twice in one object is an error
/// (Python's and jq's readers keep the last, silently losing the first). It reads what the
/// tool writes: objects, arrays, strings, numbers, true, false, null.
enum StrictJSON {
    struct Fault: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads one JSON text; every object in it must have each key once.
    /// - Returns: the keys of each object, outermost first, for tests that look further.
    @discardableResult
    static func check(_ text: String) throws -> [[String]] {
        var reader = Reader(bytes: Array(text.utf8))
        var objects: [[String]] = []
        reader.skipSpace()
        try reader.value(&objects)
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw reader.fault("text after the value") }
        return objects
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        func fault(_ what: String) -> Fault {
            Fault(description: "byte \(index): \(what) in \(String(decoding: bytes, as: UTF8.self))")
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            guard index < bytes.count, bytes[index] == byte else { throw fault("expected '\(Character(Unicode.Scalar(byte)))'") }
            index += 1
        }

        mutating func value(_ objects: inout [[String]]) throws {
            guard index < bytes.count else { throw fault("a value expected") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var keys: [String] = []
                let slot = objects.count
                objects.append([])
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return }
                while true {
                    skipSpace()
                    let key = try string()
                    if keys.contains(key) { throw fault("the key \"\(key)\" a second time") }
                    keys.append(key)
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    try value(&objects)
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    objects[slot] = keys
                    return
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return }
                while true {
                    skipSpace()
                    try value(&objects)
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "]"))
                    return
                }
            case UInt8(ascii: "\""):
                _ = try string()
            default:
                for word in ["true", "false", "null"] where bytes[index...].starts(with: word.utf8) {
                    index += word.utf8.count
                    return
                }
                let start = index
                while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
                guard index > start, Double(String(decoding: bytes[start..<index], as: UTF8.self)) != nil else {
                    throw fault("not a value")
                }
            }
        }

        mutating func string() throws -> String {
            try expect(UInt8(ascii: "\""))
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw fault("an escape cut short") }
                    let escaped = bytes[index]
                    index += escaped == UInt8(ascii: "u") ? 5 : 1
                    out.append(escaped)
                case 0..<0x20:
                    throw fault("a control character in a string")
                default:
                    out.append(byte)
                }
            }
            throw fault("a string not closed")
        }
    }
}
