// SPDX-License-Identifier: GPL-2.0-or-later

/// An Eddystone frame: service data for the 16-bit UUID 0xFEAA, the first byte naming the frame.
///
/// ```
/// 02 01 06        Flags
/// 03 03 AA FE     Complete List of 16-bit Service UUIDs: 0xFEAA
/// LL 16 AA FE     Service Data - 16-bit UUID 0xFEAA, then the frame
/// ```
public enum EddystoneFrame: Hashable, Sendable {
    case uid(EddystoneUID)
    case url(EddystoneURL)
    case tlm(EddystoneTLM)
    /// Eddystone-TLM version 0x01: the telemetry encrypted.
    case encryptedTLM(EddystoneEncryptedTLM)
    case eid(EddystoneEID)
    /// A frame type this codec does not decode (a future one), kept whole.
    case other(frameType: UInt8, payload: [UInt8])

    /// The Eddystone service UUID, 0xFEAA.
    public static let serviceUUID: UInt16 = 0xFEAA
    /// Eddystone reports TX power at 0 m; the 1 m figure iBeacon calls measured power is 41 dB lower.
    public static let zeroToOneMetreLoss = 41

    /// The measured power at 1 m for TX power `power` at 0 m: 41 dB lower, never clamped (-90
    /// dBm at 0 m is -131 at 1 m, below what an Int8 holds).
    @inlinable
    public static func measuredPower(atZeroMetres power: Int8) -> Int { Int(power) - zeroToOneMetreLoss }

    /// The TX power at 0 m a description's `--measured-power` (at 1 m) stands for: 41 dB higher.
    static func powerAt0m(_ fields: DescribedFields) throws(FormatDescriptionError) -> Int8 {
        Int8(clamping: Int(try fields.measuredPower()) + zeroToOneMetreLoss)
    }

    /// Parses a frame: the service data after the 0xFEAA UUID.
    /// - Throws: `CodecError` naming the field that does not fit the frame type.
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "Eddystone frame")
        let frameType = try reader.uint8("frame type")
        switch frameType {
        case EddystoneUID.frameType: self = .uid(try EddystoneUID(parsingAfterFrameType: &reader))
        case EddystoneURL.frameType: self = .url(try EddystoneURL(parsingAfterFrameType: &reader))
        case EddystoneEID.frameType: self = .eid(try EddystoneEID(parsingAfterFrameType: &reader))
        case EddystoneTLM.frameType:
            let versionOffset = reader.offset
            switch try reader.uint8("TLM version") {
            case EddystoneTLM.unencryptedVersion: self = .tlm(try EddystoneTLM(parsingAfterVersion: &reader))
            case EddystoneEncryptedTLM.version: self = .encryptedTLM(try EddystoneEncryptedTLM(parsingAfterVersion: &reader))
            case let version:
                throw reader.unexpected("TLM version", expected: "0x00 (unencrypted TLM) or 0x01 (encrypted TLM)",
                                        found: version.hexLiteral, at: versionOffset)
            }
        default: self = .other(frameType: frameType, payload: Array(reader.rest()))
        }
    }

    /// The frame bytes (what follows 0xFEAA in the service data).
    public var bytes: [UInt8] {
        switch self {
        case let .uid(frame): frame.bytes
        case let .url(frame): frame.bytes
        case let .tlm(frame): frame.bytes
        case let .encryptedTLM(frame): frame.bytes
        case let .eid(frame): frame.bytes
        case let .other(frameType, payload): [frameType] + payload
        }
    }

    /// Flags, the 0xFEAA service UUID list and the service data holding this frame.
    public var advertisingData: AdvertisingData {
        var serviceData: [UInt8] = []
        serviceData.appendLE(Self.serviceUUID)
        serviceData.append(contentsOf: bytes)
        var uuidList: [UInt8] = []
        uuidList.appendLE(Self.serviceUUID)
        return AdvertisingData([
            ADStructure(type: .flags, data: [ADFlags.beacon.rawValue]),
            ADStructure(type: .completeServiceUUIDs16, data: uuidList),
            ADStructure(type: .serviceData16, data: serviceData),
        ])
    }
}

extension EddystoneFrame {
    /// The Eddystone specification's layout for the frame of type `frame`: 0xFEAA listed in the
    /// complete 16-bit service UUIDs, then its service data starting with that frame type.
    static func specification(name: String, displayName: String, frame: UInt8, dataMayChange: Bool = false) -> BeaconSpecification {
        let type = HexText.format([frame])
        return BeaconSpecification(
            name: name, displayName: displayName, source: "Eddystone protocol specification (google/eddystone)",
            layoutWanted: "03 03 AA FE (0xFEAA in the complete 16-bit service UUIDs), then service data for 0xFEAA, frame 0x" + type,
            dataMayChange: dataMayChange
        ) { structures in
            var problems: [String] = []
            if !structures.contains(where: { $0.type == .completeServiceUUIDs16 && Array($0.data.prefix(2)) == [0xAA, 0xFE] }) {
                problems.append("0xFEAA is not in a complete list of 16-bit service UUIDs")
            }
            if let service = structures.lazy.compactMap(\.serviceData16).first(where: { $0.uuid == serviceUUID }) {
                if service.payload.first != frame {
                    problems.append("frame 0x\(HexText.format(service.payload.prefix(1))), not 0x\(type)")
                }
            } else {
                problems.append("no service data for 0xFEAA")
            }
            return .init(problems: problems)
        }
    }
}
