// SPDX-License-Identifier: GPL-2.0-or-later

/// Eddystone-UID (frame type 0x00): a 10-byte namespace and a 6-byte instance.
///
/// ```
/// 00           frame type
/// tt           TX power at 0 m, Int8 dBm
/// nn * 10      namespace
/// ii * 6       instance
/// 00 00        reserved (some senders omit them)
/// ```
public struct EddystoneUID: Hashable, Sendable {
    static let frameType: UInt8 = 0x00

    /// Calibrated TX power at 0 m in dBm.
    public var txPowerAt0m: Int8
    /// 10 bytes.
    public var namespace: [UInt8]
    /// 6 bytes.
    public var instance: [UInt8]
    /// The two reserved bytes, or nil when the sender left them out.
    public var reserved: UInt16?

    /// - Throws: `CodecError` unless `namespace` has 10 bytes and `instance` 6.
    public init(txPowerAt0m: Int8, namespace: [UInt8], instance: [UInt8], reserved: UInt16? = 0) throws(CodecError) {
        guard namespace.count == 10 else {
            throw CodecError(structure: "Eddystone-UID", offset: 2, reason: .unexpectedValue(
                field: "namespace", expected: "10 bytes", found: "\(namespace.count) bytes"))
        }
        guard instance.count == 6 else {
            throw CodecError(structure: "Eddystone-UID", offset: 12, reason: .unexpectedValue(
                field: "instance", expected: "6 bytes", found: "\(instance.count) bytes"))
        }
        self.txPowerAt0m = txPowerAt0m
        self.namespace = namespace
        self.instance = instance
        self.reserved = reserved
    }

    init(parsingAfterFrameType reader: inout ByteReader) throws(CodecError) {
        txPowerAt0m = try reader.int8("TX power at 0 m")
        namespace = Array(try reader.bytes(10, "namespace"))
        instance = Array(try reader.bytes(6, "instance"))
        reserved = reader.isAtEnd ? nil : try reader.uint16BE("reserved")
        try reader.expectEnd()
    }

    /// The frame bytes, frame type first.
    public var bytes: [UInt8] {
        var out: [UInt8] = [Self.frameType, UInt8(bitPattern: txPowerAt0m)]
        out.append(contentsOf: namespace)
        out.append(contentsOf: instance)
        if let reserved { out.appendBE(reserved) }
        return out
    }
}

extension EddystoneUID: BeaconFormat {
    public var formatName: StaticString { "eddystone-uid" }
    public var displayName: StaticString { "Eddystone-UID" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.identifier("namespace", .hex(namespace))
        writer.identifier("instance", .hex(instance))
        writer.integer("txPowerAt0m", txPowerAt0m, unit: "dBm")
        writer.field("measuredPower", .integer(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m)), text: .omitted)
    }

    public var measuredPowerAt1m: Int? { EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m) }

    public var descriptionFields: [String: String] {
        ["type": "eddystone-uid", "namespace": HexText.format(namespace), "instance": HexText.format(instance),
         "measuredPower": "\(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m))"]
    }
}

extension EddystoneUID {
    /// The Eddystone specification's layout for the UID frame.
    public static let specification = EddystoneFrame.specification(name: "eddystone-uid", displayName: "Eddystone-UID", frame: frameType)
}

extension EddystoneUID: DescribedBeaconFormat {
    public static let name = "eddystone-uid"
    public static let descriptionKeys = ["namespace", "instance", "measured-power"]
    public static let numberRanges = DescribedFields.measuredPowerRange
    public static let summary = "Eddystone-UID: --namespace, --instance."

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        let power = try EddystoneFrame.powerAt0m(fields)
        let namespace = try fields.bytes("namespace", count: 10)
        let instance = try fields.bytes("instance", count: 6)
        do {
            return .eddystone(.uid(try EddystoneUID(txPowerAt0m: power, namespace: namespace, instance: instance)))
        } catch {
            throw FormatDescriptionError(error.reasonDescription)
        }
    }
}
