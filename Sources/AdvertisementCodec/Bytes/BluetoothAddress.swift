// SPDX-License-Identifier: GPL-2.0-or-later

/// A 48-bit device address (BD_ADDR). Sent least significant byte first; written most
/// significant byte first, `AA:BB:CC:DD:EE:FF`.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The address as a number: `AA:BB:CC:DD:EE:FF` is `0xAABBCCDDEEFF`.
    public var value: UInt64

    public init(_ value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Builds an address from the 6 bytes as they appear on the wire (least significant first).
    public init(littleEndian bytes: some Collection<UInt8>) {
        var value: UInt64 = 0
        for byte in bytes.prefix(6).reversed() { value = value << 8 | UInt64(byte) }
        self.init(value)
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (or `-` separated, any case).
    /// - Throws: `CodecError` naming the character that does not fit.
    public init(parsing text: some StringProtocol) throws(CodecError) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else {
            throw CodecError(structure: "Bluetooth address", offset: 0, reason: .unexpectedValue(
                field: "address", expected: "six bytes written AA:BB:CC:DD:EE:FF",
                found: "\(utf8.count) characters"))
        }
        var value: UInt64 = 0
        for (index, char) in utf8.enumerated() {
            if index % 3 == 2 {
                guard char == UInt8(ascii: ":") || char == UInt8(ascii: "-") else {
                    throw CodecError(structure: "Bluetooth address", offset: index, reason: .unexpectedValue(
                        field: "separator", expected: "':'", found: char.quotedCharacter))
                }
                continue
            }
            guard let nibble = HexText.nibble(char) else {
                throw CodecError(structure: "Bluetooth address", offset: index, reason: .unexpectedValue(
                    field: "character", expected: "a hex digit", found: char.quotedCharacter))
            }
            value = value << 4 | UInt64(nibble)
        }
        self.init(value)
    }

    /// The 6 bytes as sent on the wire, least significant first.
    public var littleEndianBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(value, width: 6)
        return bytes
    }

    /// A static random address has its two most significant bits set (Core Vol 6 Part B 1.3.2.1).
    public var isStaticRandom: Bool { value >> 46 == 0b11 }

    public var description: String {
        HexText.format(littleEndianBytes.reversed(), separator: ":")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.value < rhs.value }
}

/// The type of a device address as advertising reports carry it.
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let publicDevice = AddressType(rawValue: 0x00)
    public static let randomDevice = AddressType(rawValue: 0x01)
    public static let publicIdentity = AddressType(rawValue: 0x02)
    public static let randomIdentity = AddressType(rawValue: 0x03)
    /// Extended reports only: anonymous advertisement, no address.
    public static let anonymous = AddressType(rawValue: 0xFF)

    public var description: String {
        switch self {
        case .publicDevice: "public"
        case .randomDevice: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        default: "unknown-\(rawValue.hexLiteral)"
        }
    }
}
