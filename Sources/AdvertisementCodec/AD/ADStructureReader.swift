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
            var field = MessageText(reservingCapacity: 64)
            field.append(type.description)
            field.append(" (length ")
            field.append(Int(length))
            field.append(" at byte ")
            field.append(lengthOffset)
            field.append(")")
            throw reader.error(.truncated(field: field.string, needed: Int(length) - 1, available: reader.count))
        }
        return ADStructure(type: type, slice: try reader.bytes(Int(length) - 1, "AD data"))
    }

    /// Walks all of `bytes` (checking that every structure fits) and returns the advertised
    /// TX power level (AD type 0x0A, one byte), if any.
    static func txPowerLevel(in bytes: ArraySlice<UInt8>) throws(CodecError) -> Int8? {
        // Lengths alone, through a pointer: no structure is built. Data that does not fit is
        // walked again by `next()`, which throws the error it finds.
        let walked: (fits: Bool, level: Int8?) = bytes.withUnsafeBufferPointer { data in
            var index = 0
            var level: Int8? = nil
            while index < data.count {
                let length = Int(data[index])
                if length == 0 { break }  // padding to the end
                guard index + length < data.count else { return (false, nil) }
                if level == nil, length == 2, data[index + 1] == ADType.txPowerLevel.rawValue {
                    level = Int8(bitPattern: data[index + 2])
                }
                index += 1 + length
            }
            return (true, level)
        }
        if walked.fits { return walked.level }
        var structures = ADStructureReader(bytes)
        while try structures.next() != nil {}
        return nil  // not reached: data that does not fit throws above
    }
}
