// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Crypto
import _CryptoExtras

/// AES-128 on one block, from swift-crypto (BoringSSL's implementation): what the codec's
/// Eddystone-EID computation is given to encrypt with.
package struct BoringAES: AESBlockEncrypting {
    public init() {}

    /// `block` encrypted with `key`; both 16 bytes (the codec's EID types check them first).
    public func encrypt(block: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = block
        // Only a key or block of the wrong size throws, which the callers rule out; an empty
        // answer would then give an identifier nobody resolves, never a crash.
        guard (try? AES.permute(&output, key: SymmetricKey(data: key))) != nil else { return [] }
        return output
    }
}
