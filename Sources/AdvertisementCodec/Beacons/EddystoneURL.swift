// SPDX-License-Identifier: GPL-2.0-or-later

/// Eddystone-URL (frame type 0x10): a compressed URL.
///
/// ```
/// 10           frame type
/// tt           TX power at 0 m, Int8 dBm
/// ss           scheme: 00 http://www.  01 https://www.  02 http://  03 https://
/// uu * 1...17  URL; 0x00-0x06 expand to .com/ .org/ .edu/ .net/ .info/ .biz/ .gov/
///              and 0x07-0x0D to the same without the slash
/// ```
public struct EddystoneURL: Hashable, Sendable {
    static let frameType: UInt8 = 0x10
    /// The encoded URL (after the scheme) holds at most 17 bytes so the frame fits 31 bytes.
    public static let maximumEncodedLength = 17
    // Literals, read through a pointer: writing a URL out copies their bytes (iterating a
    // String's UTF-8 a byte at a time cost several times more).
    static let schemes: [StaticString] = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions: [StaticString] = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    /// Calibrated TX power at 0 m in dBm.
    public var txPowerAt0m: Int8
    /// The scheme code, 0...3.
    public var scheme: UInt8
    /// The URL bytes after the scheme, expansion codes unexpanded.
    public var encodedURL: [UInt8]

    /// Compresses `url` into the frame's scheme code and expansion codes.
    /// - Throws: `CodecError` if the URL has no supported scheme, holds a character outside
    ///   printable ASCII, or needs more than 17 bytes.
    public init(txPowerAt0m: Int8, url: String) throws(CodecError) {
        let text = Array(url.utf8)
        // Longest scheme first: "https://www." before "https://".
        guard let (code, prefix) = Self.schemes.enumerated()
            .filter({ text.starts(with: $0.element.bytes) })
            .max(by: { $0.element.bytes.count < $1.element.bytes.count }) else {
            throw CodecError(structure: "Eddystone-URL", offset: 0, reason: .unexpectedValue(
                field: "scheme", expected: "http://, https://, http://www. or https://www.", found: "'\(url)'"))
        }
        var encoded: [UInt8] = []
        var index = prefix.bytes.count
        while index < text.count {
            let rest = text[index...]
            // Longest expansion first: ".com/" before ".com".
            if let (expansion, word) = Self.expansions.enumerated()
                .filter({ rest.starts(with: $0.element.bytes) })
                .max(by: { $0.element.bytes.count < $1.element.bytes.count }) {
                encoded.append(UInt8(expansion))
                index += word.bytes.count
                continue
            }
            let char = text[index]
            guard (0x21...0x7E).contains(char) else {
                throw CodecError(structure: "Eddystone-URL", offset: index, reason: .unexpectedValue(
                    field: "URL character", expected: "printable ASCII", found: char.hexLiteral))
            }
            encoded.append(char)
            index += 1
        }
        guard (1...Self.maximumEncodedLength).contains(encoded.count) else {
            throw CodecError(structure: "Eddystone-URL", offset: 0, reason: .unexpectedValue(
                field: "encoded URL length", expected: "1 to \(Self.maximumEncodedLength) bytes after compression",
                found: "\(encoded.count) bytes"))
        }
        self.txPowerAt0m = txPowerAt0m
        self.scheme = UInt8(code)
        self.encodedURL = encoded
    }

    init(parsingAfterFrameType reader: inout ByteReader) throws(CodecError) {
        txPowerAt0m = try reader.int8("TX power at 0 m")
        let schemeOffset = reader.offset
        scheme = try reader.uint8("URL scheme")
        guard Int(scheme) < Self.schemes.count else {
            throw reader.unexpected("URL scheme", expected: "0x00 to 0x03", found: scheme.hexLiteral, at: schemeOffset)
        }
        let urlOffset = reader.offset
        encodedURL = Array(reader.rest())
        guard encodedURL.count <= Self.maximumEncodedLength else {
            throw reader.unexpected("encoded URL length", expected: "at most \(Self.maximumEncodedLength) bytes",
                                    found: "\(encodedURL.count) bytes", at: urlOffset)
        }
    }

    /// The URL with scheme and expansions written out. Bytes the format reserves
    /// (0x0E-0x20, 0x7F-0xFF) appear percent-encoded.
    public var url: String {
        // Written as UTF-8 into one string of the most it can take (a scheme of 12, then 6 per
        // byte at most), instead of growing it a piece at a time.
        String(unsafeUninitializedCapacity: 12 + 6 * encodedURL.count) { out in
            var count = 0
            func append(_ text: StaticString) {
                for byte in text.bytes {
                    out[count] = byte
                    count += 1
                }
            }
            append(Self.schemes[Int(scheme) % Self.schemes.count])
            for byte in encodedURL {
                if Int(byte) < Self.expansions.count {
                    append(Self.expansions[Int(byte)])
                } else if (0x21...0x7E).contains(byte) {
                    out[count] = byte
                    count += 1
                } else {
                    out[count] = UInt8(ascii: "%")
                    out[count + 1] = HexText.digit(byte >> 4)
                    out[count + 2] = HexText.digit(byte & 0x0F)
                    count += 3
                }
            }
            return count
        }
    }

    /// The frame bytes, frame type first.
    public var bytes: [UInt8] {
        [Self.frameType, UInt8(bitPattern: txPowerAt0m), scheme] + encodedURL
    }
}

extension StaticString {
    /// The literal's UTF-8 (literals of the tables above: stored as text, never as one scalar).
    fileprivate var bytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: utf8Start, count: utf8CodeUnitCount)
    }
}

extension EddystoneURL: BeaconFormat {
    public var formatName: StaticString { "eddystone-url" }
    public var displayName: StaticString { "Eddystone-URL" }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.identifier("url", .text(url))
        writer.integer("txPowerAt0m", txPowerAt0m, unit: "dBm")
        writer.field("measuredPower", .integer(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m)), text: .omitted)
    }

    public var measuredPowerAt1m: Int? { EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m) }

    public var descriptionFields: [String: String] {
        ["url": url, "measuredPower": "\(EddystoneFrame.measuredPower(atZeroMetres: txPowerAt0m))"]
    }
}

extension EddystoneURL {
    /// The Eddystone specification's layout for the URL frame.
    public static let specification = EddystoneFrame.specification(name: "eddystone-url", displayName: "Eddystone-URL", frame: frameType)
}

extension EddystoneURL: DescribedBeaconFormat {
    public static let name = "eddystone-url"
    public static let descriptionKeys = ["url", "measured-power"]
    public static let numberRanges = DescribedFields.measuredPowerRange
    public static let summary = "Eddystone-URL: --eddystone-url URL (url= in a description)."
    public static let selectingKey: String? = "url"

    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        let power = try EddystoneFrame.powerAt0m(fields)
        do {
            return .eddystone(.url(try EddystoneURL(txPowerAt0m: power, url: fields["url"] ?? "")))
        } catch {
            throw FormatDescriptionError("--eddystone-url: \(error.reasonDescription)")
        }
    }
}
