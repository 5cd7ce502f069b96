// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A region as Core Location defines one: a UUID, optionally a major, optionally a minor.
/// iBeacons match on proximity UUID, major, minor; AltBeacons on id1, id2, id3.
public struct BeaconRegion: Sendable, Hashable, CustomStringConvertible {
    public var uuid: UUID?
    public var major: UInt16?
    public var minor: UInt16?

    /// - Precondition on use: a minor only with a major, a major only with a UUID (checked by the CLI).
    public init(uuid: UUID?, major: UInt16? = nil, minor: UInt16? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public func matches(_ beacon: Beacon) -> Bool {
        if case let .custom(custom) = beacon { return ((try? Beacon.beacons(in: custom.data)) ?? []).contains(where: matches) }
        // The identifiers its format says a region matches (iBeacon's, AltBeacon's); none: only "any".
        guard let identity = beacon.format.regionIdentifiers else { return uuid == nil && major == nil && minor == nil }
        if let uuid, uuid != identity.0 { return false }
        if let major, major != identity.1 { return false }
        if let minor, minor != identity.2 { return false }
        return true
    }

    public var description: String {
        var parts = [uuid?.uuidString ?? "any UUID"]
        if let major { parts.append("major \(major)") }
        if let minor { parts.append("minor \(minor)") }
        return parts.joined(separator: ", ")
    }
}
