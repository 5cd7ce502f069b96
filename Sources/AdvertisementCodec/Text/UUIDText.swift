// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UUID {
    /// Parses a 128-bit UUID written with or without dashes (8-4-4-4-12), in any case.
    ///
    /// Unlike `UUID(uuidString:)`, this accepts 32 contiguous hex digits, and says what is wrong.
    /// - Throws: `CodecError` naming the offending character or the digit count found.
    public init(beaconText text: some StringProtocol) throws(CodecError) {
        let utf8 = Array(text.utf8)
        let dashed = utf8.count == 36
        if dashed {
            for position in [8, 13, 18, 23] where utf8[position] != UInt8(ascii: "-") {
                throw CodecError(structure: "UUID", offset: position, reason: .unexpectedValue(
                    field: "separator", expected: "'-' in the form 8-4-4-4-12", found: utf8[position].quotedCharacter))
            }
        }
        var bytes: [UInt8] = []
        var high: UInt8? = nil
        for (index, char) in utf8.enumerated() {
            if dashed, [8, 13, 18, 23].contains(index) { continue }
            guard let nibble = HexText.nibble(char) else {
                throw CodecError(structure: "UUID", offset: index, reason: .unexpectedValue(
                    field: "character", expected: "a hex digit", found: char.quotedCharacter))
            }
            if let h = high { bytes.append(h << 4 | nibble); high = nil } else { high = nibble }
        }
        guard bytes.count == 16, high == nil else {
            let digits = utf8.filter { HexText.nibble($0) != nil }.count
            throw CodecError(structure: "UUID", offset: 0, reason: .unexpectedValue(
                field: "length", expected: "32 hex digits (16 bytes), with or without dashes",
                found: "\(digits) hex digits" + (digits % 2 == 0 ? " (\(digits / 2) bytes)" : "")))
        }
        self.init(bytes: bytes[...])
    }

    /// Builds a UUID from 16 bytes in the order it is written as text (big-endian).
    /// Callers guarantee `bytes.count == 16`.
    init(bytes b: ArraySlice<UInt8>) {
        precondition(b.count == 16, "a UUID is 16 bytes")
        self = b.withUnsafeBytes { UUID($0.baseAddress!) }
    }

    /// Builds a UUID from the 16 bytes at `pointer` (text order), on a decoder's hot path.
    @inline(__always)
    init(_ pointer: UnsafeRawPointer) {
        // `UUID(uuid:)` is a call into Foundation with sixteen arguments, a fifth of an iBeacon
        // decode. Where UUID is stored as its sixteen bytes, copy them in as two words instead.
        if UUID.storedAsItsBytes {
            let words = (pointer.loadUnaligned(as: UInt64.self), pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            self = unsafeBitCast(words, to: UUID.self)
        } else {
            self.init(uuid: pointer.loadUnaligned(as: uuid_t.self))
        }
    }

    /// Whether a UUID's memory is its sixteen bytes in text order, as `UUID(uuid:)` stores them:
    /// sixteen bytes aligned as bytes can only be its `uuid_t`. Known when compiling, so the
    /// decoder's hot path pays nothing for asking (a value computed at run time costs a
    /// once-only check on every read). `UUIDFromBytesTests` checks the bytes themselves.
    static var storedAsItsBytes: Bool {
        MemoryLayout<UUID>.size == 16 && MemoryLayout<UUID>.alignment == 1
    }

    /// The 16 bytes in the order the UUID is written as text: the order iBeacon sends them.
    public var bigEndianBytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }
}
