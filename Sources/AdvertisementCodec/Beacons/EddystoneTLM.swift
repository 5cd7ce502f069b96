// SPDX-License-Identifier: GPL-2.0-or-later

/// Eddystone-TLM (frame type 0x20), unencrypted version 0x00: the beacon's telemetry.
///
/// ```
/// 20           frame type
/// 00           version
/// bb bb        battery voltage, mV, big-endian (0 = not reported)
/// tt tt        temperature, signed 8.8 fixed point, big-endian (0x8000 = not supported)
/// aa * 4       advertising PDUs sent since power-up, big-endian
/// ss * 4       time since power-up in 0.1 s, big-endian
/// ```
public struct EddystoneTLM: Hashable, Sendable {
    static let frameType: UInt8 = 0x20
    static let unencryptedVersion: UInt8 = 0x00
    /// The raw temperature meaning "not supported".
    public static let temperatureNotSupported: Int16 = -0x8000

    public var batteryMillivolts: UInt16
    /// Temperature in 1/256 °C (8.8 fixed point); `temperatureNotSupported` when absent.
    public var rawTemperature: Int16
    public var advertisingPDUCount: UInt32
    /// Time since power-up in tenths of a second.
    public var uptimeDeciseconds: UInt32

    public init(batteryMillivolts: UInt16, rawTemperature: Int16 = temperatureNotSupported,
                advertisingPDUCount: UInt32, uptimeDeciseconds: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.rawTemperature = rawTemperature
        self.advertisingPDUCount = advertisingPDUCount
        self.uptimeDeciseconds = uptimeDeciseconds
    }

    /// The temperature in °C, or nil when the beacon does not report it.
    public var temperature: Double? {
        rawTemperature == Self.temperatureNotSupported ? nil : Double(rawTemperature) / 256
    }

    /// Parses the fields after the version byte (0x00, read by `EddystoneFrame`).
    init(parsingAfterVersion reader: inout ByteReader) throws(CodecError) {
        batteryMillivolts = try reader.uint16BE("battery voltage")
        rawTemperature = Int16(bitPattern: try reader.uint16BE("temperature"))
        advertisingPDUCount = try reader.uint32BE("advertising PDU count")
        uptimeDeciseconds = try reader.uint32BE("time since power-up")
        try reader.expectEnd()
    }

    /// The frame bytes, frame type first.
    public var bytes: [UInt8] {
        var out: [UInt8] = [Self.frameType, Self.unencryptedVersion]
        out.appendBE(batteryMillivolts)
        out.appendBE(UInt16(bitPattern: rawTemperature))
        out.appendBE(advertisingPDUCount)
        out.appendBE(uptimeDeciseconds)
        return out
    }
}

/// Eddystone-TLM version 0x01, encrypted (eTLM): the same telemetry, encrypted with the
/// beacon's identity key, which only its owner can read; decoded as what it carries.
///
/// ```
/// 20           frame type
/// 01           version
/// ee * 12      the encrypted telemetry (what version 0x00 carries after its version byte)
/// ss ss        salt
/// mm mm        message integrity check
/// ```
public struct EddystoneEncryptedTLM: Hashable, Sendable {
    static let version: UInt8 = 0x01
    /// The length of the encrypted telemetry.
    public static let encryptedLength = 12

    /// `encryptedLength` bytes.
    public var encryptedTelemetry: [UInt8]
    /// 2 bytes.
    public var salt: [UInt8]
    /// 2 bytes.
    public var integrityCheck: [UInt8]

    init(parsingAfterVersion reader: inout ByteReader) throws(CodecError) {
        encryptedTelemetry = Array(try reader.bytes(Self.encryptedLength, "encrypted telemetry"))
        salt = Array(try reader.bytes(2, "salt"))
        integrityCheck = Array(try reader.bytes(2, "message integrity check"))
        try reader.expectEnd()
    }

    /// The frame bytes, frame type first.
    public var bytes: [UInt8] {
        [EddystoneTLM.frameType, Self.version] + encryptedTelemetry + salt + integrityCheck
    }
}

extension EddystoneTLM: BeaconFormat {
    public var contentMoves: Bool { true }

    public var formatName: StaticString { "eddystone-tlm" }
    public var displayName: StaticString { "Eddystone-TLM" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("version", .integer(0), text: .omitted)
        writer.field("batteryMillivolts", .integer(Int(batteryMillivolts)), text: .named("battery", unit: "mV"))
        if let temperature {
            writer.field("temperature", .decimal(String(temperature)), text: .unit("C"))
        } else {
            writer.field("temperature", .null, text: .token("temperature=unsupported"))
        }
        writer.integer("advertisingPduCount", advertisingPDUCount)
        writer.field("uptimeSeconds", .tenths(UInt64(uptimeDeciseconds)), text: .named("uptime", unit: "s"))
    }

    public var measuredPowerAt1m: Int? { nil }

    public var descriptionFields: [String: String] {
        var fields = ["type": "eddystone-tlm", "battery": "\(batteryMillivolts)", "pduCount": "\(advertisingPDUCount)",
                      "uptime": BeaconFieldValue.tenths(UInt64(uptimeDeciseconds)).text]
        if let temperature { fields["temperature"] = "\(temperature)" }
        return fields
    }
}

extension EddystoneEncryptedTLM: BeaconFormat {
    public var contentMoves: Bool { true }

    public var formatName: StaticString { "eddystone-tlm" }
    public var displayName: StaticString { "Eddystone-TLM" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("version", .integer(1), text: .token("version=1 (encrypted)"))
        writer.field("encryptedTelemetry", .hex(encryptedTelemetry))
        writer.field("salt", .hex(salt))
        writer.field("integrityCheck", .hex(integrityCheck))
    }

    public var measuredPowerAt1m: Int? { nil }
    /// This host does not encrypt telemetry: nothing to describe.
    public var descriptionFields: [String: String] { [:] }
}

extension EddystoneTLM {
    /// The Eddystone specification's layout for the TLM frame, whose counters move.
    public static let specification = EddystoneFrame.specification(name: "eddystone-tlm", displayName: "Eddystone-TLM",
                                                                   frame: frameType, dataMayChange: true)
}

extension EddystoneTLM {
    /// Whether TLM frames go out interleaved with this beacon's (`--interleave-tlm`): Eddystone's
    /// identifying frames, UID and URL, whose receivers expect telemetry beside them.
    public static func accompanies(_ beacon: Beacon) -> Bool {
        switch beacon {
        case .eddystone(.uid), .eddystone(.url): true
        case .eddystone(.tlm), .eddystone(.encryptedTLM), .eddystone(.eid), .eddystone(.other): false
        case .iBeacon, .altBeacon, .custom, .registered: false
        }
    }
}
