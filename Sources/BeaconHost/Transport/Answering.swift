// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What an event means to the command waiting for its answer.
package enum Answering<Answer> {
    /// The answer: the exchange is over.
    case answer(Answer)
    /// Accepted for now (a Command Status saying the command goes ahead): wait on.
    case accepted
    /// Not about this command: passed over (`CommandWire.passOver`).
    case other
}
