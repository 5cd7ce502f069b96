// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A beacon format that a description builds (`type=NAME,KEY=VALUE,...`: the command line's
/// options, `--beacon`, a configuration file, a scenario, a control request): its name, the
/// keys it takes and how it builds its beacon from them. The codec's own formats and every
/// registered one (`RegisteredBeaconFormat`) are described this way; a description asks the
/// format (`BeaconFormats.named(_:)`) and names no format itself.
public protocol DescribedBeaconFormat: Sendable {
    /// Its name: `type=` in a description, its flag on the command line (`--eddystone-uid`).
    static var name: String { get }
    /// The keys its description takes besides `type`, spelled as help and messages show them
    /// (`measured-power`); any spelling of a key is read as its plain one (`measuredPower`).
    static var descriptionKeys: [String] { get }
    /// What each key that takes a number takes, by the key as `descriptionKeys` spells it
    /// (`"major": "0 to 65535"`): messages and a scenario's number fields say it.
    static var numberRanges: [String: String] { get }
    /// One line for help beside its flag: what it is and the options it takes.
    static var summary: String { get }
    /// The key whose value alone describes it, so that no `type=` is needed (Eddystone-URL's
    /// `url`); nil for none.
    static var selectingKey: String? { get }
    /// The keys a running beacon's update may not change, and why; nil: an update may change any.
    static var fixedWhileRunning: (keys: [String], why: String)? { get }
    /// Its beacon, from the description's fields (each of `descriptionKeys` given, by its key
    /// as spelled there).
    /// - Throws: `FormatDescriptionError` naming the key and what it takes.
    static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon
}

extension DescribedBeaconFormat {
    public static var numberRanges: [String: String] { [:] }
    public static var summary: String { "A \(name) beacon: " + descriptionKeys.map { "--\($0)" }.joined(separator: ", ") + "." }
    public static var selectingKey: String? { nil }
    public static var fixedWhileRunning: (keys: [String], why: String)? { nil }
}

/// What a format's description needs from the host that the codec does not do itself: reading
/// a secret from its file (only its owner may read it) and AES for formats that encrypt.
public struct DescriptionHost: Sendable {
    /// The secret held in the file at a path, for the key named (`identity-key-file`).
    public var readSecret: @Sendable (_ path: String, _ key: String) throws(FormatDescriptionError) -> [UInt8]
    /// The secret given as hex in a key's value (`identity-key`): never repeated in a message.
    public var parseSecret: @Sendable (_ text: String, _ key: String) throws(FormatDescriptionError) -> [UInt8]
    /// AES-128 for a format that encrypts (Eddystone-EID); nil where the host has none.
    public var aes: (any AESBlockEncrypting)?

    public init(readSecret: @escaping @Sendable (String, String) throws(FormatDescriptionError) -> [UInt8],
                parseSecret: @escaping @Sendable (String, String) throws(FormatDescriptionError) -> [UInt8],
                aes: (any AESBlockEncrypting)?) {
        self.readSecret = readSecret
        self.parseSecret = parseSecret
        self.aes = aes
    }

    /// A host that reads no secret and has no AES: formats that need them say so.
    public static let none = DescriptionHost(
        readSecret: { (_, key) throws(FormatDescriptionError) in throw FormatDescriptionError("--\(key): no secret can be read here") },
        parseSecret: { (_, key) throws(FormatDescriptionError) in throw FormatDescriptionError("--\(key): no secret can be read here") },
        aes: nil)
}

/// A description's fields for one format: the values given for its keys, read with the
/// messages every format shares (naming the option, `--major`, and what it takes).
public struct DescribedFields: Sendable {
    /// Each value given, by the key as the format spells it.
    public let values: [String: String]
    /// What the host does for the format (secrets, AES).
    public let host: DescriptionHost

    public init(_ values: [String: String], host: DescriptionHost = .none) {
        self.values = values
        self.host = host
    }

    public subscript(key: String) -> String? { values[key] }

    /// A whole number within `range`, or `fallback` when none is given.
    /// - Throws: naming `--key`, the range and its unit, for anything else.
    public func integer(_ key: String, _ range: ClosedRange<Int>, unit: String = "",
                        default fallback: Int) throws(FormatDescriptionError) -> Int {
        try optionalInteger(key, range, unit: unit) ?? fallback
    }

    /// A whole number within `range`, or nil when none is given.
    public func optionalInteger(_ key: String, _ range: ClosedRange<Int>, unit: String = "") throws(FormatDescriptionError) -> Int? {
        guard let text = values[key] else { return nil }
        let value: Int
        if let integer = Int(text) {
            value = integer
        } else {
            let range = "from \(range.lowerBound) to \(range.upperBound)\(unit), got '\(text)'"
            guard let number = Double(text), number.isFinite else { throw FormatDescriptionError("--\(key) must be a number \(range)") }
            // YAML and JSON write whole numbers as 7.0 now and then.
            guard number == number.rounded(), abs(number) < 1e15 else {
                throw FormatDescriptionError("--\(key) must be a whole number \(range)")
            }
            value = Int(number)
        }
        guard range.contains(value) else {
            throw FormatDescriptionError("--\(key) must be from \(range.lowerBound) to \(range.upperBound)\(unit), got \(value)")
        }
        return value
    }

    /// A 16-bit identifier (`--major`), which must be given.
    public func required16(_ key: String) throws(FormatDescriptionError) -> UInt16 {
        guard let value = try optionalInteger(key, 0...65535) else { throw FormatDescriptionError("missing --\(key) (0 to 65535)") }
        return UInt16(value)
    }

    /// A number (`--temperature`), or nil when none is given; the format checks its range
    /// (`nan` and `inf` are numbers here, and out of every range).
    /// - Throws: naming `--key` and `range` (its text) for anything but a number.
    public func number(_ key: String, _ range: String) throws(FormatDescriptionError) -> Double? {
        guard let text = values[key] else { return nil }
        guard let number = Double(text) else {
            throw FormatDescriptionError("--\(key) must be a number from \(range), got '\(text)'")
        }
        return number
    }

    /// A UUID, which must be given; `random`: a new one (version 4).
    public func uuid(_ key: String) throws(FormatDescriptionError) -> UUID {
        guard let text = values[key] else { throw FormatDescriptionError("missing --\(key) (32 hex digits, dashes optional; or random)") }
        if text.lowercased() == "random" { return UUID() }
        do {
            return try UUID(beaconText: text)
        } catch {
            throw FormatDescriptionError("--\(key) '\(text)': \(error.reasonDescription)")
        }
    }

    /// `count` bytes given as hex digits, which must be given.
    public func bytes(_ key: String, count: Int) throws(FormatDescriptionError) -> [UInt8] {
        try Self.bytes(values[key], "--\(key)", count: count)
    }

    /// `count` bytes given as hex digits in option `name` (`--namespace`).
    public static func bytes(_ text: String?, _ name: String, count: Int) throws(FormatDescriptionError) -> [UInt8] {
        guard let text else { throw FormatDescriptionError("missing \(name) (\(count * 2) hex digits)") }
        let bytes: [UInt8]
        do {
            bytes = try HexText.parse(text)
        } catch {
            throw FormatDescriptionError("\(name) takes \(count * 2) hex digits (\(count) bytes): '\(text)': \(error.reasonDescription)")
        }
        guard bytes.count == count else {
            throw FormatDescriptionError("\(name) must be \(count) bytes (\(count * 2) hex digits), got \(bytes.count) bytes")
        }
        return bytes
    }

    /// A company identifier, decimal or 0x hex, or nil when none is given.
    public func company(_ key: String) throws(FormatDescriptionError) -> CompanyIdentifier? {
        try values[key].map { (text) throws(FormatDescriptionError) in try Self.company(text, "--\(key)") }
    }

    /// A company identifier given in option `name` (`--company-id`, `--manufacturer-data`),
    /// decimal or 0x hex.
    public static func company(_ text: String, _ name: String) throws(FormatDescriptionError) -> CompanyIdentifier {
        let hex = text.lowercased().hasPrefix("0x")
        guard let value = hex ? Int(text.dropFirst(2), radix: 16) : Int(text), (0...0xFFFF).contains(value) else {
            throw FormatDescriptionError("\(name): the company ID must be from 0x0000 to 0xFFFF (decimal or 0x hex), got '\(text)'")
        }
        return CompanyIdentifier(UInt16(value))
    }

    /// What `--measured-power` takes, as `numberRanges` say it.
    public static let measuredPowerRange = ["measured-power": "-128 to 127 (dBm)"]

    /// The measured power at 1 m (`--measured-power`, -128 to 127 dBm, -59 when none is given).
    public func measuredPower() throws(FormatDescriptionError) -> Int8 {
        Int8(try integer("measured-power", -128...127, unit: " dBm", default: Int(IBeacon.defaultMeasuredPower)))
    }

    /// A secret given in its file (`fileKey`, read by the host: only its owner may read it) or,
    /// less safely, as hex in `key`; exactly one of them. Never repeated in a message.
    public func secret(_ key: String, file fileKey: String) throws(FormatDescriptionError) -> [UInt8] {
        switch (values[key], values[fileKey]) {
        case (nil, nil):
            throw FormatDescriptionError("missing --\(fileKey) (a file holding the key, 32 hex digits, that only its owner can read)")
        case (.some, .some):
            throw FormatDescriptionError("--\(key) and --\(fileKey) both give the key: give one (the file)")
        case let (text?, nil):
            return try host.parseSecret(text, key)
        case let (nil, path?):
            return try host.readSecret(path, fileKey)
        }
    }
}
