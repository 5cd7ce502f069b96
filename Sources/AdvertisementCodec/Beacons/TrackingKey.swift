// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A beacon's identifiers packed for a tracker that hashes one per report (`Beacon.trackingKey`):
/// a tag of its format and the identifiers as three words (a UUID in two, 16-bit IDs in the
/// third), or as text (a URL). Two beacons with equal keys are the same beacon. Only formats
/// whose identifiers pack so have one; the tracker keeps any other by what its format states.
public struct TrackingKey: Hashable, Sendable, CustomStringConvertible {
    /// The format's name (not compared: `tag` stands for it).
    public let name: StaticString
    private let tag: UInt8
    private let first: UInt64
    private let second: UInt64
    private let third: UInt64
    private let text: String?

    /// A key of words: `tag` unique to the format among those that give keys.
    init(_ name: StaticString, tag: UInt8, _ first: UInt64, _ second: UInt64, _ third: UInt64 = 0, text: String? = nil) {
        self.name = name
        self.tag = tag
        self.first = first
        self.second = second
        self.third = third
        self.text = text
    }

    /// A key of a UUID and up to 64 bits more.
    init(_ name: StaticString, tag: UInt8, uuid: UUID, _ rest: UInt64) {
        let (first, second) = withUnsafeBytes(of: uuid.uuid) { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        self.init(name, tag: tag, first, second, rest)
    }

    /// A key of up to 16 bytes in two parts (an Eddystone-UID's namespace and instance), their
    /// lengths in the third word.
    init(_ name: StaticString, tag: UInt8, _ head: [UInt8], _ tail: [UInt8]) {
        var words: (UInt64, UInt64) = (0, 0)
        var position = 0
        for byte in head.prefix(16) {
            Self.put(byte, at: position, in: &words)
            position += 1
        }
        for byte in tail.prefix(16 - position) {
            Self.put(byte, at: position, in: &words)
            position += 1
        }
        self.init(name, tag: tag, words.0, words.1, UInt64(head.count) << 16 | UInt64(tail.count),
                  text: head.count + tail.count > 16 ? HexText.format(head + tail) : nil)
    }

    private static func put(_ byte: UInt8, at position: Int, in words: inout (UInt64, UInt64)) {
        if position < 8 { words.0 |= UInt64(byte) << (8 * position) } else { words.1 |= UInt64(byte) << (8 * (position - 8)) }
    }

    public static func == (lhs: TrackingKey, rhs: TrackingKey) -> Bool {
        lhs.tag == rhs.tag && lhs.first == rhs.first && lhs.second == rhs.second && lhs.third == rhs.third && lhs.text == rhs.text
    }

    /// Fed to the hasher a word at a time (a tracker hashes once per report).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(tag) << 56 ^ third)
        hasher.combine(first)
        hasher.combine(second)
        if let text { hasher.combine(text) }
    }

    /// Its format's name and identifiers in hex (or its text): what orders beacons that tie.
    public var description: String {
        "\(name) " + (text ?? [first, second, third].map { String($0, radix: 16) }.joined(separator: " "))
    }
}

extension Beacon {
    /// Its identifiers packed for a tracker (`TrackingKey`), where its format packs them: iBeacon,
    /// AltBeacon, Eddystone-UID and -URL; nil for any other (telemetry, EID, a frame the codec
    /// does not decode, a registered format, custom data).
    public var trackingKey: TrackingKey? {
        switch self {
        case let .iBeacon(beacon): TrackingKey("ibeacon", tag: 0, uuid: beacon.proximityUUID,
                                               UInt64(beacon.major) << 16 | UInt64(beacon.minor))
        case let .altBeacon(beacon): TrackingKey("altbeacon", tag: 1, uuid: beacon.id1, UInt64(beacon.id2) << 16 | UInt64(beacon.id3))
        case let .eddystone(.uid(frame)): TrackingKey("eddystone-uid", tag: 2, frame.namespace, frame.instance)
        case let .eddystone(.url(frame)): TrackingKey("eddystone-url", tag: 3, 0, 0, text: frame.url)
        case .eddystone(.tlm), .eddystone(.encryptedTLM), .eddystone(.eid), .eddystone(.other), .custom, .registered: nil
        }
    }
}
