// SPDX-License-Identifier: GPL-2.0-or-later

/// The CRC-24 that ends every link-layer PDU (Core Specification, Vol 6, Part B, 3.1.1): the
/// polynomial x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1 over the PDU's header and payload,
/// bits taken least significant first, the register preset with 0x555555 on the advertising
/// channels. An air sniffer's capture (link types 251 and 256) keeps the three CRC bytes as they
/// came off the air, so a PDU a bit error damaged can be told from a real one.
public enum LinkLayerCRC {
    /// The advertising channels' CRC initial value.
    public static let advertisingInitial: UInt32 = 0x555555

    /// The CRC of `pdu` (header and payload) as a capture stores it: three bytes, the first
    /// sent first, read little-endian.
    public static func crc(_ pdu: some Sequence<UInt8>, initial: UInt32 = advertisingInitial) -> UInt32 {
        // The register bit-reversed, so that it shifts right as the bits arrive.
        var state = reversed24(initial)
        for byte in pdu {
            var bits = byte
            for _ in 0..<8 {
                let feedback = (state ^ UInt32(bits)) & 1
                state >>= 1
                bits >>= 1
                if feedback != 0 { state ^= 0xDA6000 }  // the polynomial, reversed
            }
        }
        return state
    }

    /// Whether the three bytes after `pdu` are its CRC.
    public static func matches(pdu: some Sequence<UInt8>, crcBytes: some Collection<UInt8>) -> Bool {
        guard crcBytes.count == 3 else { return false }
        let bytes = Array(crcBytes)
        return crc(pdu) == UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16
    }

    static func reversed24(_ value: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for bit in 0..<24 where value & (1 << bit) != 0 { result |= 1 << (23 - bit) }
        return result
    }
}
