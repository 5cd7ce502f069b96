// SPDX-License-Identifier: GPL-2.0-or-later

/// Walks advertising data one AD structure at a time without collecting them: the structures
/// are slices of the input, so a walk allocates nothing. `AdvertisingData(parsing:)` is this
/// walk, collected.
public struct ADStructureReader {
    private var reader: ByteReader
    /// What followed a zero length byte (the byte included), once the walk has reached it.
    public private(set) var padding: ArraySlice<UInt8> = []

    public init(_ bytes: ArraySlice<UInt8>) {
        reader = ByteReader(bytes, structure: "advertising data")
    }

    /// The next structure, or nil at the end (or at a zero length byte, which ends the data early).
    /// - Throws: `CodecError` when a structure's length runs past the end of the input.
    public mutating func next() throws(CodecError) -> ADStructure? {
        guard !reader.isAtEnd else { return nil }
        let lengthOffset = reader.offset
        let length = try reader.uint8("AD length")
        if length == 0 {
            _ = reader.rest()
            padding = reader.input[lengthOffset...]
            return nil
        }
        let type = ADType(try reader.uint8("AD type"))
        guard reader.count >= Int(length) - 1 else {
            throw reader.error(.truncated(field: "\(type) (length \(length) at byte \(lengthOffset))",
                                          needed: Int(length) - 1, available: reader.count))
        }
        return ADStructure(type: type, slice: try reader.bytes(Int(length) - 1, "AD data"))
    }

    /// Walks all of `bytes` (checking that every structure fits) and returns the advertised
    /// TX power level (AD type 0x0A), if any.
    static func txPowerLevel(in bytes: ArraySlice<UInt8>) throws(CodecError) -> Int8? {
        var structures = ADStructureReader(bytes)
        var level: Int8? = nil
        while let structure = try structures.next() {
            if level == nil { level = structure.txPowerLevel }
        }
        return level
    }
}
