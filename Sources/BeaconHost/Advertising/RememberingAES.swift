// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Synchronization

/// AES-128 (`BoringAES`) that remembers its last answers: a motion that computes with AES asks
/// the same block again and again (Eddystone-EID's temporary key, one block per 65,536 s, is
/// asked at every identifier), and the specification recommends keeping it.
package final class RememberingAES: AESBlockEncrypting {
    private let aes = BoringAES()
    /// Answers by key and block; at most `mostKept`, then forgotten all at once.
    private let kept = Mutex<[[UInt8]: [UInt8]]>([:])
    package static let mostKept = 64

    package init() {}

    package func encrypt(block: [UInt8], key: [UInt8]) -> [UInt8] {
        let question = key + block
        if let answer = kept.withLock({ $0[question] }) { return answer }
        let answer = aes.encrypt(block: block, key: key)
        kept.withLock { answers in
            if answers.count >= Self.mostKept { answers.removeAll() }
            answers[question] = answer
        }
        return answer
    }
}
