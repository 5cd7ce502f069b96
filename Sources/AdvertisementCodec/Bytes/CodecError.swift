// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a sequence of bytes (or hex text) could not be decoded, and exactly where.
///
/// `offset` is an index into the collection handed to the parser: for an `Array` or a slice
/// taken from one, that is the byte offset from the start of the original input, so an error
/// found deep inside an advertising report still points at the right byte of the event.
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong at `offset`.
    public enum Reason: Hashable, Sendable {
        /// The input ended while `field` still needed `needed` bytes; only `available` were left.
        case truncated(field: String, needed: Int, available: Int)
        /// `field` held `found` where the format requires `expected`.
        case unexpectedValue(field: String, expected: String, found: String)
        /// The structure was complete but `count` bytes followed it.
        case trailingBytes(count: Int)
        /// The input was well formed but not something this parser recognises.
        case unrecognized(expected: String)
    }

    /// The structure being parsed, as the specification names it ("iBeacon manufacturer data").
    public var structure: String
    /// Index of the first offending byte (or character, for hex text).
    public var offset: Int
    public var reason: Reason

    public init(structure: String, offset: Int, reason: Reason) {
        self.structure = structure
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        // Built as bytes and made a string once (decoding a file of bad lines writes one per line).
        var text = MessageText(reservingCapacity: structure.utf8.count + 128)
        text.append(structure)
        text.append(": byte ")
        text.append(offset)
        text.append(": ")
        appendReason(to: &text)
        return text.string
    }

    /// The reason alone, without structure and offset.
    public var reasonDescription: String {
        var text = MessageText(reservingCapacity: 128)
        appendReason(to: &text)
        return text.string
    }

    private func appendReason(to text: inout MessageText) {
        switch reason {
        case let .truncated(field, needed, available):
            text.append("truncated: ")
            text.append(field)
            text.append(" needs ")
            text.append(needed)
            text.append(needed == 1 ? " byte, only " : " bytes, only ")
            text.append(available)
            text.append(" left")
        case let .unexpectedValue(field, expected, found):
            text.append(field)
            text.append(": expected ")
            text.append(expected)
            text.append(", found ")
            text.append(found)
        case let .trailingBytes(count):
            text.append(count)
            text.append(count == 1 ? " unexpected trailing byte" : " unexpected trailing bytes")
        case let .unrecognized(expected):
            text.append("not recognised: expected ")
            text.append(expected)
        }
    }
}

extension UInt8 {
    /// `0x1A`: how the codec's error messages print a byte.
    var hexLiteral: String { "0x" + HexText.format([self]) }

    /// How error messages show a byte of text: `'g'` when printable, `0x07` otherwise.
    var quotedCharacter: String {
        (0x21...0x7E).contains(self) ? "'\(Character(Unicode.Scalar(self)))'" : hexLiteral
    }
}
