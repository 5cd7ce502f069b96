// SPDX-License-Identifier: GPL-2.0-or-later

/// Eddystone-EID (frame type 0x30): an ephemeral identifier that a resolver holding the
/// beacon's identity key maps back to the beacon, and anyone else sees change at random.
///
/// ```
/// 30           frame type
/// tt           TX power at 0 m, Int8 dBm
/// ee * 8       the ephemeral identifier
/// ```
/// "The length of this frame is fixed and shall be truncated after the EID bytes."
public struct EddystoneEID: Hashable, Sendable {
    static let frameType: UInt8 = 0x30

    /// Calibrated TX power at 0 m in dBm.
    public var txPowerAt0m: Int8
    /// The 8-byte ephemeral identifier.
    public var eid: [UInt8]
    /// What the identifier was computed from, for a beacon this host sends (it computes the
    /// next one from it); nil for a frame decoded from the air. Never in the frame's bytes.
    public var source: EddystoneEIDSource?

    /// - Throws: `CodecError` unless `eid` has 8 bytes.
    public init(txPowerAt0m: Int8, eid: [UInt8]) throws(CodecError) {
        guard eid.count == 8 else {
            throw CodecError(structure: "Eddystone-EID", offset: 2, reason: .unexpectedValue(
                field: "EID", expected: "8 bytes", found: "\(eid.count) bytes"))
        }
        self.txPowerAt0m = txPowerAt0m
        self.eid = eid
    }

    /// The frame a beacon with `identity` sends when its time counter reads `counter`.
    public init(txPowerAt0m: Int8, identity: EddystoneEIDIdentity, counter: UInt32, aes: some AESBlockEncrypting) {
        self.init(txPowerAt0m: txPowerAt0m, source: EddystoneEIDSource(identity: identity, counter: counter),
                  eid: identity.ephemeralIdentifier(counter: counter, aes: aes))
    }

    /// The frame for `source` with its identifier computed already (a cached temporary key).
    public init(txPowerAt0m: Int8, source: EddystoneEIDSource, eid: [UInt8]) {
        self.txPowerAt0m = txPowerAt0m
        self.eid = eid
        self.source = source
    }

    init(parsingAfterFrameType reader: inout ByteReader) throws(CodecError) {
        txPowerAt0m = try reader.int8("TX power at 0 m")
        eid = Array(try reader.bytes(8, "EID"))
        try reader.expectEnd()
    }

    /// The frame bytes, frame type first.
    public var bytes: [UInt8] {
        [Self.frameType, UInt8(bitPattern: txPowerAt0m)] + eid
    }
}

/// A sent EID frame's origin: the beacon's identity and the time counter its identifier is for.
public struct EddystoneEIDSource: Hashable, Sendable {
    public var identity: EddystoneEIDIdentity
    /// The beacon's time counter, in seconds, when the frame was computed.
    public var counter: UInt32

    public init(identity: EddystoneEIDIdentity, counter: UInt32) {
        self.identity = identity
        self.counter = counter
    }

    /// Seconds from `counter` until the identifier changes; nil when it never does again (the
    /// counter's last period).
    public var secondsToNextRotation: UInt32? {
        identity.nextRotation(after: counter).map { $0 - counter }
    }
}

/// AES-128 on one 16-byte block, as the EID computation needs it. The codec has no
/// cryptography of its own: the host supplies a maintained implementation.
public protocol AESBlockEncrypting: Sendable {
    /// `block` (16 bytes) encrypted with `key` (16 bytes).
    func encrypt(block: [UInt8], key: [UInt8]) -> [UInt8]
}

/// What an Eddystone-EID beacon keeps to compute its identifiers (Google's eid-computation.md):
/// a 128-bit identity key shared with its resolver and the rotation period exponent K, the
/// identifier changing every 2^K seconds of the beacon's own 32-bit time counter.
public struct EddystoneEIDIdentity: Hashable, Sendable {
    /// The AES-128 identity key: 16 bytes.
    public var identityKey: [UInt8]
    /// K, 0 to 15: a new identifier every 2^K seconds.
    public var rotationExponent: UInt8

    /// The exponents the specification allows.
    public static let rotationExponents: ClosedRange<UInt8> = 0...15

    /// - Throws: `CodecError` unless the key has 16 bytes and K is from 0 to 15.
    public init(identityKey: [UInt8], rotationExponent: UInt8 = 10) throws(CodecError) {
        guard identityKey.count == 16 else {
            throw CodecError(structure: "Eddystone-EID identity", offset: 0, reason: .unexpectedValue(
                field: "identity key", expected: "16 bytes (32 hex digits)", found: "\(identityKey.count) bytes"))
        }
        guard Self.rotationExponents.contains(rotationExponent) else {
            throw CodecError(structure: "Eddystone-EID identity", offset: 16, reason: .unexpectedValue(
                field: "rotation exponent", expected: "0 to 15", found: "\(rotationExponent)"))
        }
        self.identityKey = identityKey
        self.rotationExponent = rotationExponent
    }

    /// The time counter with its K lowest bits cleared: when the identifier for `counter` began.
    public func rotationStart(_ counter: UInt32) -> UInt32 {
        counter & ~((UInt32(1) << rotationExponent) - 1)
    }

    /// When the identifier after the one for `counter` begins; nil past the counter's end.
    public func nextRotation(after counter: UInt32) -> UInt32? {
        let (next, overflow) = rotationStart(counter).addingReportingOverflow(UInt32(1) << rotationExponent)
        return overflow ? nil : next
    }

    /// The block the identity key encrypts into the temporary key: 11 zero bytes, the salt
    /// 0xFF, 2 zero bytes, the counter's top 16 bits big-endian. It changes every 65,536 s.
    public static func temporaryKeyInput(counter: UInt32) -> [UInt8] {
        [UInt8](repeating: 0, count: 11) + [0xFF, 0x00, 0x00, UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16)]
    }

    /// The block the temporary key encrypts into the identifier: 11 zero bytes, K, the counter
    /// with its K lowest bits cleared, big-endian.
    public func identifierInput(counter: UInt32) -> [UInt8] {
        let start = rotationStart(counter)
        return [UInt8](repeating: 0, count: 11)
            + [rotationExponent, UInt8(start >> 24), UInt8(truncatingIfNeeded: start >> 16),
               UInt8(truncatingIfNeeded: start >> 8), UInt8(truncatingIfNeeded: start)]
    }

    /// The temporary key for `counter` (the same for 65,536 s: cache it).
    public func temporaryKey(counter: UInt32, aes: some AESBlockEncrypting) -> [UInt8] {
        aes.encrypt(block: Self.temporaryKeyInput(counter: counter), key: identityKey)
    }

    /// The 8-byte ephemeral identifier for `counter`: the leading 8 bytes of the identifier
    /// input encrypted with the temporary key.
    public func ephemeralIdentifier(counter: UInt32, temporaryKey: [UInt8], aes: some AESBlockEncrypting) -> [UInt8] {
        Array(aes.encrypt(block: identifierInput(counter: counter), key: temporaryKey).prefix(8))
    }

    /// The identifier for `counter`, computing the temporary key on the way.
    public func ephemeralIdentifier(counter: UInt32, aes: some AESBlockEncrypting) -> [UInt8] {
        ephemeralIdentifier(counter: counter, temporaryKey: temporaryKey(counter: counter, aes: aes), aes: aes)
    }
}

extension EddystoneEID: BeaconFormat {
    public var contentMoves: Bool { true }

    /// Its identifier's rotation, where this host computes it (a frame with an identity).
    public var motion: (any ContentMotion)? { source == nil ? nil : self }

    public var formatName: StaticString { "eddystone-eid" }
    public var displayName: StaticString { "Eddystone-EID" }

    /// No identifier: the EID changes every 2^K seconds and identifies nothing for long.
    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("eid", .hex(eid))
        writer.integer("txPowerAt0m", txPowerAt0m, unit: "dBm")
        writer.field("measuredPower", .integer(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m)), text: .omitted)
    }

    public var measuredPowerAt1m: Int? { EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m) }

    /// With its identity key where this host sends it (what a box builds it from); a frame
    /// decoded from the air has none, and cannot be described.
    public var descriptionFields: [String: String] {
        guard let source else { return [:] }
        return ["type": "eddystone-eid", "identityKey": HexText.format(source.identity.identityKey),
                "rotationExponent": "\(source.identity.rotationExponent)", "clock": "\(source.counter)",
                "measuredPower": "\(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m))"]
    }
}

extension EddystoneEID: DescribedBeaconFormat {
    public static let name = "eddystone-eid"
    public static let descriptionKeys = ["identity-key-file", "identity-key", "rotation-exponent", "clock", "measured-power"]
    public static let numberRanges = DescribedFields.measuredPowerRange
        .merging(["rotation-exponent": "0 to 15", "clock": "0 to 4294967295 (seconds)"]) { $1 }
    /// Its identity key (or key file), rotation exponent and clock: a client that could move the
    /// clock would read the identifiers of any time to come in the replies, without the key (an
    /// EID oracle); the counter only moves forward, with time. Whoever adds one gives its key.
    public static let fixedWhileRunning: (keys: [String], why: String)? = (
        ["identity-key", "identity-key-file", "rotation-exponent", "clock"],
        "its identifiers to come would be answered without the key")
    public static let summary = "Eddystone-EID, a new identifier every 2^K s: --identity-key-file, --rotation-exponent, --clock."

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        let power = try EddystoneFrame.powerAt0m(fields)
        let key = try fields.secret("identity-key", file: "identity-key-file")
        let exponent = try fields.integer("rotation-exponent", 0...15, default: 10)
        let counter = try fields.integer("clock", 0...Int(UInt32.max), unit: " (seconds)", default: 0)
        guard let aes = fields.host.aes else { throw FormatDescriptionError("Eddystone-EID needs AES, which this host lacks") }
        let identity: EddystoneEIDIdentity
        do {
            identity = try EddystoneEIDIdentity(identityKey: key, rotationExponent: UInt8(exponent))
        } catch {
            throw FormatDescriptionError(error.reasonDescription)
        }
        return .eddystone(.eid(EddystoneEID(txPowerAt0m: power, identity: identity, counter: UInt32(counter), aes: aes)))
    }
}

/// A new identifier every 2^K s as the beacon's time counter moves, and a new address with it
/// where the address is made up ("rotate BD_ADDR in addition to the EID").
extension EddystoneEID: ContentMotion {
    public var motionName: String { "eid" }

    public var pace: MotionPace { .stepped(seconds: source?.secondsToNextRotation.map(Double.init)) }

    public var renewsAddress: Bool { true }

    public var stateText: String? { "EID \(HexText.format(eid))" }

    /// The frame for the counter `seconds` (whole ones) on, saturating at the counter's end.
    public func advanced(by seconds: Double, _ context: MotionContext) -> Beacon {
        guard let source else { return .eddystone(.eid(self)) }
        let elapsed = seconds.isFinite ? UInt64(min(max(0, seconds.rounded(.down)), Double(UInt32.max))) : 0
        let counter = UInt32(min(UInt64(UInt32.max), UInt64(source.counter) + elapsed))
        return .eddystone(.eid(EddystoneEID(txPowerAt0m: txPowerAt0m, identity: source.identity, counter: counter,
                                            aes: context.aes)))
    }

    /// The same frame: an identifier heard is this one's only while it is the one on the air.
    public func isMovedOn(_ heard: Beacon) -> Bool { heard == .eddystone(.eid(self)) }
}
