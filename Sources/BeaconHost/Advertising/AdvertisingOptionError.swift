// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// An option value that does not describe advertising, with what is accepted.
public struct AdvertisingOptionError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    /// What cannot be and why, where the options combine into something no run can honour.
    public var refusal: Refusal?

    public init(_ description: String) {
        self.description = description
    }

    public init(_ refusal: Refusal) {
        self.description = refusal.description
        self.refusal = refusal
    }
}
