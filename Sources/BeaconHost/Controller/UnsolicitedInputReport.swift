// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One report of input nobody asked for: its kind, how many of that kind so far, and the
/// latest instance described ("LE Meta event: byte 14: truncated: ...").
public struct UnsolicitedInputReport: Hashable, Sendable, CustomStringConvertible {
    public var kind: UnsolicitedInput
    public var count: Int
    public var detail: String

    public var description: String {
        "ignored \(kind) (\(count) so far); the latest: \(detail)"
    }
}
