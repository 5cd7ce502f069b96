// SPDX-License-Identifier: GPL-2.0-or-later

/// Consumes an `ArraySlice<UInt8>` front to back, naming each field it reads so that a short
/// input produces an error that says which field was cut off and where.
///
/// Indices always come from `startIndex`, never from zero: offsets in errors are positions in
/// the caller's buffer.
struct ByteReader {
    /// The whole input and the index of the next byte: reading moves an index, never a slice,
    /// so a field costs a bounds check and no reference counting.
    private let bytes: ArraySlice<UInt8>
    /// Index of the next byte to be read.
    private(set) var offset: Int
    let structure: String

    init(_ bytes: ArraySlice<UInt8>, structure: String) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.structure = structure
    }

    var isAtEnd: Bool { offset == bytes.endIndex }
    /// How many bytes are left.
    var count: Int { bytes.endIndex - offset }
    /// Everything the reader was given.
    var input: ArraySlice<UInt8> { bytes }
    /// The bytes not read yet.
    var remaining: ArraySlice<UInt8> { bytes[offset...] }

    func error(_ reason: CodecError.Reason, at offset: Int? = nil) -> CodecError {
        CodecError(structure: structure, offset: offset ?? self.offset, reason: reason)
    }

    func unexpected(_ field: String, expected: String, found: String, at offset: Int) -> CodecError {
        error(.unexpectedValue(field: field, expected: expected, found: found), at: offset)
    }

    /// Takes the next `count` bytes. The field name is built only for an error (callers interpolate it).
    @inline(__always)
    mutating func bytes(_ count: Int, _ field: @autoclosure () -> String) throws(CodecError) -> ArraySlice<UInt8> {
        guard count >= 0, self.count >= count else {
            throw error(.truncated(field: field(), needed: count, available: self.count))
        }
        let start = offset
        offset += count
        return bytes[start..<offset]
    }

    /// Takes everything that is left.
    @inline(__always)
    mutating func rest() -> ArraySlice<UInt8> {
        let start = offset
        offset = bytes.endIndex
        return bytes[start...]
    }

    @inline(__always)
    mutating func uint8(_ field: String) throws(CodecError) -> UInt8 {
        guard offset < bytes.endIndex else {
            throw error(.truncated(field: field, needed: 1, available: 0))
        }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    mutating func int8(_ field: String) throws(CodecError) -> Int8 {
        Int8(bitPattern: try uint8(field))
    }

    @inline(__always)
    mutating func uint16LE(_ field: String) throws(CodecError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(2, field, bigEndian: false))
    }

    @inline(__always)
    mutating func uint16BE(_ field: String) throws(CodecError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(2, field, bigEndian: true))
    }

    mutating func uint24LE(_ field: String) throws(CodecError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(3, field, bigEndian: false))
    }

    mutating func uint32LE(_ field: String) throws(CodecError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(4, field, bigEndian: false))
    }

    mutating func uint32BE(_ field: String) throws(CodecError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(4, field, bigEndian: true))
    }

    mutating func uint64LE(_ field: String) throws(CodecError) -> UInt64 {
        try unsigned(8, field, bigEndian: false)
    }

    mutating func address(_ field: String) throws(CodecError) -> BluetoothAddress {
        // Read as a 48-bit little-endian number: the generic collection initializer costs
        // several times more, once per report.
        BluetoothAddress(try unsigned(6, field, bigEndian: false))
    }

    @inline(__always)
    private mutating func unsigned(_ width: Int, _ field: String, bigEndian: Bool) throws(CodecError) -> UInt64 {
        guard count >= width else {
            throw error(.truncated(field: field, needed: width, available: count))
        }
        var value: UInt64 = 0
        for index in 0..<width {
            let byte = UInt64(bytes[bigEndian ? offset + index : offset + width - 1 - index])
            value = value << 8 | byte
        }
        offset += width
        return value
    }

    /// Throws unless every byte has been consumed.
    @inline(__always)
    func expectEnd() throws(CodecError) {
        guard isAtEnd else { throw error(.trailingBytes(count: count)) }
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
