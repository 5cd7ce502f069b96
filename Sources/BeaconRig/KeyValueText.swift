// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation

/// `KEY=VALUE,KEY=VALUE`: how beacon fields are written on a command line (`--beacon`,
/// `--interleave-tlm`) and in control requests. Keys and values are trimmed of spaces.
public enum KeyValueText {
    /// The item that is not `KEY=VALUE` (no `=`, or an empty key), as messages may show it:
    /// as written, but any run of 8 or more hex digits (a key written `identity-key:...`, a
    /// secret in the wrong place) replaced by how many digits it had.
    public struct Malformed: Error {
        public var item: String

        init(written: Substring) {
            item = Self.maskingHexRuns(written)
        }

        static func maskingHexRuns(_ text: Substring) -> String {
            var out = "", run = ""
            func flush() {
                out += run.count >= 8 ? "<\(run.count) hex digits, not shown>" : run
                run = ""
            }
            for character in text {
                if character.isHexDigit { run.append(character) } else { flush(); out.append(character) }
            }
            flush()
            return out
        }
    }

    /// The pairs, in order.
    public static func pairs(_ text: String) throws(Malformed) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { throw Malformed(written: item) }
            pairs.append((parts[0], parts[1]))
        }
        return pairs
    }
}
