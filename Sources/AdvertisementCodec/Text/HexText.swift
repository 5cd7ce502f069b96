// SPDX-License-Identifier: GPL-2.0-or-later

/// Hex text as people paste it: `0201061AFF`, `02 01 06`, `02:01:06`, `0x02 0x01`, `0x020106`,
/// upper or lower case. A leading `>` or `<` (hcidump's direction marker) is ignored.
public enum HexText {
    /// Parses hex text into bytes.
    ///
    /// Bytes are separated by nothing, or by spaces, tabs, `:`, `-` or `,`; each group may carry
    /// a `0x` prefix and must hold an even number of digits.
    /// - Throws: `CodecError` whose offset is the character offset of the offending character.
    public static func parse(_ text: some StringProtocol) throws(CodecError) -> [UInt8] {
        var string = String(text)
        var bytes: [UInt8] = []
        var failure: CodecError? = nil
        string.withUTF8 { utf8 in
            do throws(CodecError) { try parse(utf8: utf8, into: &bytes) } catch { failure = error }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Parses hex text given as UTF-8, appending the bytes to `bytes` (which a caller decoding
    /// many lines reuses, so a line costs no allocation).
    /// - Throws: `CodecError` whose offset is the byte offset in `text` of the offending character.
    public static func parse(utf8 text: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) throws(CodecError) {
        let initialCount = bytes.count
        let most = mostBytes(inUTF8Count: text.count)
        bytes.append(contentsOf: repeatElement(0, count: most))
        var filled = 0
        var failure: CodecError? = nil
        bytes.withUnsafeMutableBufferPointer { all in
            do throws(CodecError) {
                filled = try parse(utf8: text, into: UnsafeMutableBufferPointer(rebasing: all[initialCount...]))
            } catch {
                failure = error
            }
        }
        bytes.removeLast(most - filled)
        if let failure { throw failure }
    }

    /// The most bytes hex text of `count` UTF-8 bytes can hold: the room
    /// `parse(utf8:into:)` needs.
    @inlinable
    public static func mostBytes(inUTF8Count count: Int) -> Int {
        count / 2
    }

    /// Parses hex text given as UTF-8 into `out`, which must have room for
    /// `mostBytes(inUTF8Count: text.count)` bytes, and returns how many it wrote (for callers
    /// that keep their own storage: nothing is allocated or checked per byte).
    /// - Throws: `CodecError` whose offset is the byte offset in `text` of the offending character.
    public static func parse(utf8 text: UnsafeBufferPointer<UInt8>,
                             into out: UnsafeMutableBufferPointer<UInt8>) throws(CodecError) -> Int {
        precondition(out.count >= mostBytes(inUTF8Count: text.count), "HexText.parse: no room for the bytes")
        // The usual line is contiguous digits: take them two at a time while they last, then
        // go on with the general state machine (in the state these digits leave it).
        // A table rather than comparisons: random hex mixes digits and letters, which branches
        // cannot predict; the one branch here (a non-digit) almost never turns.
        var start = 0
        var written = 0
        nibbleTable.withUnsafeBufferPointer { table in
            while start + 1 < text.count {
                let high = table[Int(text[start])], low = table[Int(text[start + 1])]
                if (high | low) > 0x0F { break }
                out[written] = high << 4 | low
                written += 1
                start += 2
            }
        }
        var pendingHigh: UInt8? = nil
        var pendingOffset = 0
        var digitsInGroup = start
        var sawDirection = false
        for column in start..<text.count {
            let char = text[column]
            if let nibble = nibble(char) {
                if let high = pendingHigh {
                    out[written] = high << 4 | nibble
                    written += 1
                    pendingHigh = nil
                } else {
                    pendingHigh = nibble
                    pendingOffset = column
                }
                digitsInGroup += 1
                continue
            }
            switch char {
            case UInt8(ascii: "x"), UInt8(ascii: "X"):
                // A `0x` prefix: only directly after a lone `0` that starts a group.
                guard digitsInGroup == 1, pendingHigh == 0 else { throw invalid(char, at: column) }
                pendingHigh = nil
                digitsInGroup = 0
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ":"), UInt8(ascii: "-"),
                 UInt8(ascii: ","), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                guard pendingHigh == nil else { throw oddDigits(at: pendingOffset) }
                digitsInGroup = 0
            case UInt8(ascii: ">"), UInt8(ascii: "<"):
                guard written == 0, pendingHigh == nil, !sawDirection else { throw invalid(char, at: column) }
                sawDirection = true
            default:
                throw invalid(char, at: column)
            }
        }
        guard pendingHigh == nil else { throw oddDigits(at: pendingOffset) }
        guard written > 0 else {
            throw CodecError(structure: "hex text", offset: 0,
                             reason: .unrecognized(expected: "at least one byte of hex"))
        }
        return written
    }

    /// Parses annotated hex: several lines, each possibly ending in a `//` comment (the way
    /// fixtures and btmon-style notes are written).
    /// - Throws: `CodecError` whose offset counts characters of the comment-free text.
    public static func parse(annotated text: some StringProtocol) throws(CodecError) -> [UInt8] {
        let stripped = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            String(line.firstRange(of: "//").map { line[..<$0.lowerBound] } ?? line)
        }.joined(separator: " ")
        return try parse(stripped)
    }

    /// Formats bytes as upper-case hex, `separator` between bytes.
    public static func format(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * (2 + separator.utf8.count))
        append(bytes, separator: separator, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends what `format` returns, as UTF-8, to `out` (for writers that build bytes, not strings).
    @inlinable
    public static func append(_ bytes: some Sequence<UInt8>, separator: String = "", to out: inout [UInt8]) {
        var first = true
        for byte in bytes {
            if !first { out.append(contentsOf: separator.utf8) }
            first = false
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0F))
        }
    }

    /// The upper-case hex digit of a value 0...15.
    @inlinable
    public static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") - 10 + value
    }

    /// The value of each byte as a hex digit, 0xFF for anything else.
    static let nibbleTable: [UInt8] = (0...255).map { nibble(UInt8($0)) ?? 0xFF }

    @inline(__always)
    static func nibble(_ char: UInt8) -> UInt8? {
        let digit = char &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        let letter = (char | 0x20) &- UInt8(ascii: "a")  // 0x20 makes A-F a-f (and nothing else a-f)
        return letter < 6 ? letter &+ 10 : nil
    }

    private static func invalid(_ char: UInt8, at column: Int) -> CodecError {
        CodecError(structure: "hex text", offset: column,
                   reason: .unexpectedValue(field: "character", expected: "a hex digit", found: char.quotedCharacter))
    }

    private static func oddDigits(at column: Int) -> CodecError {
        CodecError(structure: "hex text", offset: column,
                   reason: .unexpectedValue(field: "digit group", expected: "two hex digits per byte",
                                            found: "an odd number of digits"))
    }
}
