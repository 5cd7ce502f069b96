// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a beacon format declares about itself, so that the rest of the code asks the format
/// instead of switching over the kinds of beacon: its name, its fields as JSON and text show
/// them (and which of them identify it), the measured power ranging reads, the identifiers
/// regions match, and its fields in a beacon description's keys.
///
/// Each format's type conforms in its own file; `Beacon.format` is the one place that maps a
/// beacon to its format (docs/architecture.md: where a new format goes).
public protocol BeaconFormat: Sendable {
    /// Its name in JSON (`"type"`), in descriptions (`type=`) and in reports: `ibeacon`.
    var formatName: StaticString { get }
    /// Its name at the start of a text line: `iBeacon`.
    var displayName: StaticString { get }
    /// Writes its fields, in the order JSON and text show them.
    func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable)
    /// The calibrated RSSI at 1 m, the figure ranging uses; nil where it states none.
    var measuredPowerAt1m: Int? { get }
    /// The beacon by its identifiers alone (what stays when its address rotates): its name and
    /// the fields written as identifying it (`ibeacon uuid=... major=1 minor=2`).
    var identity: String { get }
    /// The identifiers a region (`--uuid`, `--major`, `--minor`) matches; nil for a format
    /// without them (a region that names one then never matches it).
    var regionIdentifiers: (uuid: UUID, major: UInt16, minor: UInt16)? { get }
    /// Whether what it sends changes while it advertises (Eddystone-TLM's counters, EID's
    /// identifier): a watcher then takes any frame of its format as the beacon.
    var contentMoves: Bool { get }
    /// How its content moves by itself while this host advertises it (`ContentMotion`); nil
    /// (the default) for content that stays, and for a frame heard that this host cannot move.
    var motion: (any ContentMotion)? { get }
    /// Its fields in a beacon description's keys (`type`, `uuid`, ...), from which a
    /// description builds the same beacon again; empty for a beacon that cannot be described
    /// (a frame decoded from the air that this host cannot make).
    var descriptionFields: [String: String] { get }
}

extension BeaconFormat {
    public var identity: String {
        var writer = IdentityWriter()
        writeFields(to: &writer)
        return ([formatName.description] + writer.tokens).joined(separator: " ")
    }

    public var regionIdentifiers: (uuid: UUID, major: UInt16, minor: UInt16)? { nil }

    public var contentMoves: Bool { false }

    public var motion: (any ContentMotion)? { nil }

    /// The values of the fields that identify it, in order; empty when none do (then only
    /// the sender tells two apart).
    public var identifiers: [BeaconFieldValue] {
        var writer = IdentityWriter()
        writeFields(to: &writer)
        return writer.values
    }
}

/// A field's value, as JSON writes it.
public enum BeaconFieldValue: Hashable, Sendable {
    case integer(Int)
    case uuid(UUID)
    case hex([UInt8])
    case text(String)
    /// A number written as given (`21.5`).
    case decimal(String)
    /// Tenths, written as an exact decimal (`1234.5`).
    case tenths(UInt64)
    /// A list of texts (a layout's identifiers), comma-separated in text.
    case strings([String])
    /// A list of numbers (a layout's data fields), comma-separated in text.
    case unsignedIntegers([UInt64])
    case null

    /// How text shows the value.
    public var text: String {
        switch self {
        case let .integer(value): "\(value)"
        case let .uuid(uuid): uuid.uuidString
        case let .hex(bytes): HexText.format(bytes)
        case let .text(text), let .decimal(text): text
        case let .tenths(tenths): "\(tenths / 10).\(tenths % 10)"
        case let .strings(texts): texts.joined(separator: ",")
        case let .unsignedIntegers(values): values.map(String.init).joined(separator: ",")
        case .null: "null"
        }
    }
}

/// How text shows a field.
public enum BeaconFieldText: Sendable {
    /// `key=value` and the unit (`measuredPower=-59dBm`).
    case unit(StaticString)
    /// Another name, and the unit (`battery=3000mV` for `batteryMillivolts`).
    case named(StaticString, unit: StaticString)
    /// This token instead (`temperature=unsupported`).
    case token(String)
    /// Not at all (JSON only).
    case omitted

    public static var plain: BeaconFieldText { .unit("") }
}

/// Where a format writes its fields: JSON and text printers, the identity.
public protocol BeaconFieldWriter: ~Copyable {
    /// The format, before its fields: its name (JSON's `type`) and its name in text.
    mutating func begin(_ formatName: StaticString, display: StaticString)
    /// One field: `key` and `value` in JSON, `text` in text; `identifies`: it is one of the
    /// beacon's identifiers.
    mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText, identifies: Bool)
}

extension BeaconFieldWriter where Self: ~Copyable {
    public mutating func begin(_ formatName: StaticString, display: StaticString) {}

    public mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText = .plain) {
        field(key, value, text: text, identifies: false)
    }

    /// A field that identifies the beacon (shown as `key=value` in its identity).
    public mutating func identifier(_ key: StaticString, _ value: BeaconFieldValue) {
        field(key, value, text: .plain, identifies: true)
    }

    public mutating func integer(_ key: StaticString, _ value: some BinaryInteger, unit: StaticString = "") {
        field(key, .integer(Int(value)), text: .unit(unit), identifies: false)
    }
}

/// The text tokens of a beacon's fields: `uuid=... major=1 measuredPower=-59dBm`.
public struct TextFieldWriter: BeaconFieldWriter {
    public private(set) var tokens: [String] = []

    public init() {}

    public mutating func begin(_ formatName: StaticString, display: StaticString) {
        tokens.append(display.description)
    }

    public mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText, identifies: Bool) {
        switch text {
        case let .unit(unit): tokens.append("\(key)=\(value.text)\(unit)")
        case let .named(name, unit): tokens.append("\(name)=\(value.text)\(unit)")
        case let .token(token): tokens.append(token)
        case .omitted: break
        }
    }
}

/// The identifying fields only: their tokens and values.
struct IdentityWriter: BeaconFieldWriter {
    var tokens: [String] = []
    var values: [BeaconFieldValue] = []

    mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText, identifies: Bool) {
        guard identifies else { return }
        tokens.append("\(key)=\(value.text)")
        values.append(value)
    }
}

/// An Eddystone frame of a type this codec does not decode, kept whole.
public struct EddystoneUnknownFrame: BeaconFormat {
    public var frameType: UInt8
    public var payload: [UInt8]

    @inlinable
    public init(frameType: UInt8, payload: [UInt8]) {
        self.frameType = frameType
        self.payload = payload
    }

    public var formatName: StaticString { "eddystone" }
    public var displayName: StaticString { "Eddystone" }
    public var measuredPowerAt1m: Int? { nil }
    public var identity: String { "eddystone frame 0x\(HexText.format([frameType]))" }
    public var descriptionFields: [String: String] { [:] }

    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("frameType", .integer(Int(frameType)), text: .token("frameType=\(HexText.format([frameType]))"))
        writer.field("frameData", .hex(payload))
    }
}

extension Beacon {
    /// Writes its format's name and fields (`BeaconFormat.writeFields`), as JSON and text
    /// print them: the formats' own code, specialized for the writer (a printer's hot path).
    @inlinable
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        switch self {
        case let .iBeacon(beacon): Self.write(beacon, to: &writer)
        case let .altBeacon(beacon): Self.write(beacon, to: &writer)
        case let .eddystone(.uid(frame)): Self.write(frame, to: &writer)
        case let .eddystone(.url(frame)): Self.write(frame, to: &writer)
        case let .eddystone(.tlm(frame)): Self.write(frame, to: &writer)
        case let .eddystone(.encryptedTLM(frame)): Self.write(frame, to: &writer)
        case let .eddystone(.eid(frame)): Self.write(frame, to: &writer)
        case let .eddystone(.other(frameType, payload)):
            Self.write(EddystoneUnknownFrame(frameType: frameType, payload: payload), to: &writer)
        case let .custom(custom): Self.write(custom, to: &writer)
        case let .registered(beacon): Self.write(beacon.value, to: &writer)
        }
    }

    @inlinable
    static func write(_ format: some BeaconFormat, to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.begin(format.formatName, display: format.displayName)
        format.writeFields(to: &writer)
    }

    /// What its format declares (the one place a beacon's kind is mapped to its format).
    public var format: any BeaconFormat {
        switch self {
        case let .iBeacon(beacon): beacon
        case let .altBeacon(beacon): beacon
        case let .eddystone(.uid(frame)): frame
        case let .eddystone(.url(frame)): frame
        case let .eddystone(.tlm(frame)): frame
        case let .eddystone(.encryptedTLM(frame)): frame
        case let .eddystone(.eid(frame)): frame
        case let .eddystone(.other(frameType, payload)): EddystoneUnknownFrame(frameType: frameType, payload: payload)
        case let .custom(custom): custom
        case let .registered(beacon): beacon.value
        }
    }
}
