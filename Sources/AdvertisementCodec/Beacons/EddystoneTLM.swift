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

    public var motion: (any ContentMotion)? { self }

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

extension EddystoneTLM: DescribedBeaconFormat {
    public static let name = "eddystone-tlm"
    public static let descriptionKeys = ["battery", "temperature", "pdu-count", "uptime"]
    public static let numberRanges = ["battery": "0 to 65535 (mV)", "temperature": "-127.99 to 127.99 (degrees C)",
                                      "pdu-count": "0 to 4294967295", "uptime": "0 to 429496729.5 (seconds)"]
    public static let summary = "Eddystone-TLM telemetry: --battery, --temperature, --pdu-count, --uptime."

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        var rawTemperature = temperatureNotSupported
        if let temperature = try fields.number("temperature", numberRanges["temperature"] ?? "") {
            // 8.8 fixed point; -128.0 (0x8000) is reserved for "not supported".
            let raw = (temperature * 256).rounded()
            guard raw.isFinite, raw > -32768, raw <= 32767 else {
                throw FormatDescriptionError("--temperature must be from -127.99 to 127.99 degrees C, got \(temperature)")
            }
            rawTemperature = Int16(raw)
        }
        var uptimeTenths = 0
        if let uptime = try fields.number("uptime", numberRanges["uptime"] ?? "") {
            let tenths = (uptime * 10).rounded()
            guard tenths.isFinite, tenths >= 0, tenths <= Double(UInt32.max) else {
                throw FormatDescriptionError("--uptime must be from 0 to 429496729.5 seconds, got \(uptime)")
            }
            uptimeTenths = Int(tenths)
        }
        return .eddystone(.tlm(EddystoneTLM(
            batteryMillivolts: UInt16(try fields.integer("battery", 0...65535, default: 0)), rawTemperature: rawTemperature,
            advertisingPDUCount: UInt32(try fields.integer("pdu-count", 0...Int(UInt32.max), default: 0)),
            uptimeDeciseconds: UInt32(uptimeTenths))))
    }
}

/// Counters that move while the beacon advertises, as the TLM frame defines them: ADV_CNT counts
/// the advertising PDUs sent since power-up, SEC_CNT the time since power-up in 0.1 s. Both
/// start from the values given and wrap at 2^32 as the 32-bit fields do.
extension EddystoneTLM: ContentMotion {
    /// PDUs per advertising event: one on each of the three primary channels (37, 38, 39).
    public static let pdusPerEvent: UInt64 = 3

    public var motionName: String { "telemetry" }
    public var pace: MotionPace { .steady }
    public var renewsAddress: Bool { false }
    public var stateText: String? { nil }

    /// The frame with `seconds` more of uptime and the PDUs sent in them at `intervalUnits`
    /// (0.625 ms units).
    public func advanced(by seconds: Double, intervalUnits: UInt32) -> EddystoneTLM {
        var moved = self
        let tenths = UInt64(max(0, (seconds * 10).rounded()))
        let events = UInt64(max(0, (seconds / (Double(max(1, intervalUnits)) * 0.000625)).rounded()))
        moved.uptimeDeciseconds = UInt32(truncatingIfNeeded: UInt64(uptimeDeciseconds) &+ tenths)
        moved.advertisingPDUCount = UInt32(truncatingIfNeeded: UInt64(advertisingPDUCount) &+ events &* Self.pdusPerEvent)
        return moved
    }

    public func advanced(by seconds: Double, _ context: MotionContext) -> Beacon {
        .eddystone(.tlm(advanced(by: seconds, intervalUnits: context.intervalUnits)))
    }

    /// A TLM frame with the same battery and temperature: the counters move on the air.
    public func isMovedOn(_ heard: Beacon) -> Bool {
        guard case let .eddystone(.tlm(frame)) = heard else { return false }
        return frame.batteryMillivolts == batteryMillivolts && frame.rawTemperature == rawTemperature
    }
}
