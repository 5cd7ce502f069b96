// SPDX-License-Identifier: GPL-2.0-or-later

/// One `[length][type][data]` structure of advertising data. Any type is kept as it came.
public struct ADStructure: Hashable, Sendable {
    public var type: ADType
    /// The structure's data: `length - 1` bytes after the type byte.
    public var data: ArraySlice<UInt8>

    public init(type: ADType, data: some Sequence<UInt8>) {
        self.type = type
        self.data = ArraySlice(data)
    }

    /// A structure over a slice of the input, sharing its storage.
    init(type: ADType, slice: ArraySlice<UInt8>) {
        self.type = type
        self.data = slice
    }

    /// The structure as sent: length, type, data.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Appends the structure's bytes. The caller keeps `data.count <= 254`
    /// (`AdvertisingData.validate` checks it).
    public func encode(into buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: data.count + 1))
        buffer.append(type.rawValue)
        buffer.append(contentsOf: data)
    }

    /// Manufacturer specific data split into company and the bytes after it, if this is one.
    public var manufacturerData: (company: CompanyIdentifier, payload: ArraySlice<UInt8>)? {
        guard type == .manufacturerSpecificData, data.count >= 2 else { return nil }
        let s = data.startIndex
        return (CompanyIdentifier(UInt16(data[s]) | UInt16(data[s + 1]) << 8), data[(s + 2)...])
    }

    /// The TX power level in dBm, if this is one (AD type 0x0A, one byte).
    public var txPowerLevel: Int8? {
        guard type == .txPowerLevel, data.count == 1 else { return nil }
        return Int8(bitPattern: data[data.startIndex])
    }

    /// 16-bit service data split into the UUID and the bytes after it, if this is one.
    public var serviceData16: (uuid: UInt16, payload: ArraySlice<UInt8>)? {
        guard type == .serviceData16, data.count >= 2 else { return nil }
        let s = data.startIndex
        return (UInt16(data[s]) | UInt16(data[s + 1]) << 8, data[(s + 2)...])
    }
}
