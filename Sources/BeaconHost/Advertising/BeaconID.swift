// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A beacon's id: given once, in the order the beacons were given (the first 1), each added
/// one the next number, never reused while the run lasts. The library, the control socket,
/// scenarios and the output all name a beacon by it.
public struct BeaconID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: Int

    public init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    public init(integerLiteral value: Int) {
        self.rawValue = value
    }

    /// The id after this one.
    public var next: BeaconID { BeaconID(rawValue + 1) }

    public var description: String { "\(rawValue)" }

    public static func < (lhs: BeaconID, rhs: BeaconID) -> Bool { lhs.rawValue < rhs.rawValue }
}
