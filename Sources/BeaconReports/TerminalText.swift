// SPDX-License-Identifier: GPL-2.0-or-later

/// Text from outside (a scenario's command, a phone's line, a name heard on the air) for a
/// terminal: every control character written out (`\r`, `\e`, `\u{9B}`), so that none can move
/// the cursor, erase a line (`ESC[2K`) or hide what comes before it from whoever reads it.
public enum TerminalText {
    /// `text` with each C0 and C1 control character and DEL written as an escape: `\t`, `\n`,
    /// `\r`, `\e`, and `\u{XX}` for the others (a backslash stays one: a shell's quoting reads
    /// as written).
    public static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\u{1B}": out += "\\e"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
