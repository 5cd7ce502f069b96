// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Eddystone-EID identifiers as the beacon's time counter moves (Google's eid-computation.md):
/// the frame for a later counter, with the temporary key cached per 65,536 s as the
/// specification recommends (one AES block per new identifier, two per new temporary key).
package struct IdentifierClock {
    private let aes = BoringAES()
    private struct KeyPeriod: Hashable {
        var identityKey: [UInt8]
        var period: UInt32
    }
    /// Temporary keys by identity key and the counter's top 16 bits; at most a few entries.
    private var temporaryKeys: [KeyPeriod: [UInt8]] = [:]
    private static let mostKeys = 64

    package init() {}

    /// The frame a beacon with `frame`'s identity sends at `counter`.
    package mutating func frame(_ frame: EddystoneEID, at counter: UInt32) -> EddystoneEID {
        guard let identity = frame.source?.identity else { return frame }
        let period = KeyPeriod(identityKey: identity.identityKey, period: counter >> 16)
        let temporaryKey: [UInt8]
        if let cached = temporaryKeys[period] {
            temporaryKey = cached
        } else {
            temporaryKey = identity.temporaryKey(counter: counter, aes: aes)
            if temporaryKeys.count >= Self.mostKeys { temporaryKeys.removeAll() }
            temporaryKeys[period] = temporaryKey
        }
        return EddystoneEID(txPowerAt0m: frame.txPowerAt0m,
                            source: EddystoneEIDSource(identity: identity, counter: counter),
                            eid: identity.ephemeralIdentifier(counter: counter, temporaryKey: temporaryKey, aes: aes))
    }
}
