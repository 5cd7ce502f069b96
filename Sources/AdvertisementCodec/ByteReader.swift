// SPDX-License-Identifier: GPL-2.0-or-later

/// Consumes an `ArraySlice<UInt8>` front to back, naming each field it reads so that a short
/// input produces an error that says which field was cut off and where.
///
/// Indices always come from `startIndex`, never from zero: offsets in errors are positions in
/// the caller's buffer.
struct ByteReader {
    private(set) var remaining: ArraySlice<UInt8>
    let structure: String

    init(_ bytes: ArraySlice<UInt8>, structure: String) {
        self.remaining = bytes
        self.structure = structure
    }

    /// Index of the next byte to be read.
    var offset: Int { remaining.startIndex }
    var isAtEnd: Bool { remaining.isEmpty }

    func error(_ reason: CodecError.Reason, at offset: Int? = nil) -> CodecError {
        CodecError(structure: structure, offset: offset ?? self.offset, reason: reason)
    }

    func unexpected(_ field: String, expected: String, found: String, at offset: Int) -> CodecError {
        error(.unexpectedValue(field: field, expected: expected, found: found), at: offset)
    }

    /// Takes the next `count` bytes.
    /// The field name is built only for an error (callers interpolate it).
    mutating func bytes(_ count: Int, _ field: @autoclosure () -> String) throws(CodecError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining.count >= count else {
            throw error(.truncated(field: field(), needed: count, available: remaining.count))
        }
        let start = remaining.startIndex
        let end = start + count
        defer { remaining = remaining[end...] }
        return remaining[start..<end]
    }

    /// Takes everything that is left.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { remaining = remaining[remaining.endIndex...] }
        return remaining
    }

    mutating func uint8(_ field: String) throws(CodecError) -> UInt8 {
        guard let byte = remaining.first else {
            throw error(.truncated(field: field, needed: 1, available: 0))
        }
        remaining = remaining.dropFirst()
        return byte
    }

    mutating func int8(_ field: String) throws(CodecError) -> Int8 {
        Int8(bitPattern: try uint8(field))
    }

    mutating func uint16LE(_ field: String) throws(CodecError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(2, field, bigEndian: false))
    }

    mutating func uint16BE(_ field: String) throws(CodecError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(2, field, bigEndian: true))
    }

    mutating func uint24LE(_ field: String) throws(CodecError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(3, field, bigEndian: false))
    }

    mutating func uint32BE(_ field: String) throws(CodecError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(4, field, bigEndian: true))
    }

    mutating func uint64LE(_ field: String) throws(CodecError) -> UInt64 {
        try unsigned(8, field, bigEndian: false)
    }

    mutating func address(_ field: String) throws(CodecError) -> BluetoothAddress {
        BluetoothAddress(littleEndian: try bytes(6, field))
    }

    private mutating func unsigned(_ width: Int, _ field: String, bigEndian: Bool) throws(CodecError) -> UInt64 {
        let raw = try bytes(width, field)
        var value: UInt64 = 0
        if bigEndian {
            for byte in raw { value = value << 8 | UInt64(byte) }
        } else {
            for byte in raw.reversed() { value = value << 8 | UInt64(byte) }
        }
        return value
    }

    /// Throws unless every byte has been consumed.
    func expectEnd() throws(CodecError) {
        guard remaining.isEmpty else { throw error(.trailingBytes(count: remaining.count)) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T, width: Int = MemoryLayout<T>.size) {
        for shift in 0..<width { append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }

    mutating func appendBE<T: FixedWidthInteger>(_ value: T, width: Int = MemoryLayout<T>.size) {
        for shift in (0..<width).reversed() { append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }
}
