// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Testing

/// The Eddystone-EID computation (Google's eid-computation.md) with the product's AES, against
/// values computed apart from this code: each row's temporary key and identifier come from
/// OpenSSL 3.0's command line, following the specification's two tables by hand:
///
///     tk=$(printf '%s' 0000000000000000000000FF0000TTTT | xxd -r -p | openssl enc -aes-128-ecb -K IDENTITYKEY -nopad | xxd -p)
///     printf '%s' 0000000000000000000000KKCCCCCCCC | xxd -r -p | openssl enc -aes-128-ecb -K $tk -nopad | xxd -p | cut -c1-16
///
/// (TTTT: the counter's top 16 bits; KK: K; CCCCCCCC: the counter with its K lowest bits cleared.)
@Suite struct EddystoneEIDComputationTests {
    struct Row: Sendable, CustomStringConvertible {
        var key: String, exponent: UInt8, counter: UInt32, temporaryKey: String, eid: String
        var description: String { "K=\(exponent) counter=\(counter)" }
    }

    static let rows: [Row] = [
        Row(key: "553C66DA1485E9F78849DE00F2CB178E", exponent: 12, counter: 0,
            temporaryKey: "91E3E18B5DBF638E6B3F6C9E1E676026", eid: "326624EE16C9CC77"),
        // The last second of the first period, and the first of the next: a new identifier.
        Row(key: "553C66DA1485E9F78849DE00F2CB178E", exponent: 12, counter: 4095,
            temporaryKey: "91E3E18B5DBF638E6B3F6C9E1E676026", eid: "326624EE16C9CC77"),
        Row(key: "553C66DA1485E9F78849DE00F2CB178E", exponent: 12, counter: 4096,
            temporaryKey: "91E3E18B5DBF638E6B3F6C9E1E676026", eid: "8F56056BCE87688D"),
        // The temporary key rolls over at 65,536 s.
        Row(key: "553C66DA1485E9F78849DE00F2CB178E", exponent: 0, counter: 65535,
            temporaryKey: "91E3E18B5DBF638E6B3F6C9E1E676026", eid: "79565EFF225E382A"),
        Row(key: "553C66DA1485E9F78849DE00F2CB178E", exponent: 0, counter: 65536,
            temporaryKey: "7B468013021D70D845B60000CC8421DA", eid: "D4F5DAD1102CE436"),
        Row(key: "000102030405060708090A0B0C0D0E0F", exponent: 10, counter: 1_000_000,
            temporaryKey: "3976743133EDDA6CDBEB331815F5A1BC", eid: "47E10FA56389D60E"),
        // The counter's last second, K 15: the period that began at 2^32 - 2^15.
        Row(key: "000102030405060708090A0B0C0D0E0F", exponent: 15, counter: 4_294_967_295,
            temporaryKey: "26BD22233AAC409684F72DD489D1222D", eid: "2B0A5389EFAD8131"),
        Row(key: "000102030405060708090A0B0C0D0E0F", exponent: 15, counter: 4_294_934_528,
            temporaryKey: "26BD22233AAC409684F72DD489D1222D", eid: "2B0A5389EFAD8131"),
    ]

    @Test(arguments: rows)
    func theIdentifierIsTheSpecifications(_ row: Row) throws {
        let identity = try EddystoneEIDIdentity(identityKey: hex(row.key), rotationExponent: row.exponent)
        let temporaryKey = identity.temporaryKey(counter: row.counter, aes: BoringAES())
        #expect(temporaryKey == hex(row.temporaryKey))
        #expect(identity.ephemeralIdentifier(counter: row.counter, aes: BoringAES()) == hex(row.eid))
        #expect(identity.ephemeralIdentifier(counter: row.counter, temporaryKey: temporaryKey, aes: BoringAES()) == hex(row.eid))
    }

    /// FIPS-197's example (appendix C.1): the block function itself.
    @Test func theBlockFunctionIsAES128() {
        #expect(BoringAES().encrypt(block: hex("00112233445566778899AABBCCDDEEFF"), key: hex("000102030405060708090A0B0C0D0E0F"))
                == hex("69C4E0D86A7B0430D8CDB78070B4C55A"))
        #expect(BoringAES().encrypt(block: [1, 2, 3], key: hex("000102030405060708090A0B0C0D0E0F")).isEmpty,
                "a block of the wrong size gives nothing, never a crash")
    }
}
