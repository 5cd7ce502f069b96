// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A beacon layout as the AltBeacon android-beacon-library writes it
/// (`BeaconParser.setBeaconLayout`): `m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25`.
///
/// Terms, separated by commas; offsets are inclusive and count from the first byte of the
/// manufacturer data's company ID (or, with `s:`, of the service data's 16-bit UUID):
/// - `m:A-B=HEX` the bytes that mark the beacon (exactly one, as wide as its offsets);
/// - `s:0-1=HEX` a 16-bit service UUID: the beacon goes out as service data of it;
/// - `i:A-B` an identifier (`l`: little endian; `v`: variable length, the layout's last field);
/// - `d:A-B` a data field, at most 8 bytes (`l`: little endian);
/// - `p:A-A` the measured power byte, `p:A-A:C` with a correction the library adds when it
///   reads (Eddystone's 0 m figure: `p:3-3:-41`), `p:-:C` a fixed measured power, none sent;
/// - `x` an extra layout (identifiers and power optional).
///
/// Stricter than the library, which searches each term for a pattern it knows and takes the
/// rest on trust: a term it does not know, a match whose hex is not as wide as its offsets, a
/// layout without `m:`, a field that ends before it starts or overlaps another, one on the
/// company ID's bytes, a power field wider than a byte, a data field wider than 8 bytes, a
/// variable identifier that is not the last field, more than `maximumTerms` terms or an offset
/// past `maximumOffset` are refused, naming the term.
public struct BeaconLayout: Hashable, Sendable, CustomStringConvertible {
    /// A field's place: inclusive offsets, its byte order, and (identifiers) whether it is sent
    /// at the length of its value, up to its width.
    public struct Field: Hashable, Sendable {
        public var start: Int
        public var end: Int
        public var littleEndian = false
        public var variableLength = false
        public var width: Int { end - start + 1 }
    }

    /// What is wrong with a layout, or with what a beacon of it is given: the term (or value) and why.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The layout as written.
    public let text: String
    public var description: String { text }
    /// `m:`: where the marking bytes are, and they.
    public let matchStart: Int
    public let match: [UInt8]
    /// `s:`: the 16-bit service UUID; nil for a manufacturer layout.
    public let serviceUUID: UInt16?
    public let identifiers: [Field]
    public let dataFields: [Field]
    /// `p:`: the power byte; nil where there is none (`p:-:C`, or an extra layout without one).
    public let power: Field?
    /// What the library adds to the power byte when it reads it (`p:3-3:-41`), or the fixed
    /// measured power (`p:-:-59`, `fixedPower`).
    public let powerCorrection: Int
    /// Whether the measured power is `powerCorrection` itself, no field sent (`p:-:C`).
    public let fixedPower: Bool
    /// `x`: an extra layout.
    public let extra: Bool

    /// The most terms a layout holds: far more than any beacon's fields.
    public static let maximumTerms = 32
    /// The last offset a field may reach: an AD structure's data holds at most 254 bytes.
    public static let maximumOffset = 253

    /// The company ID manufacturer layouts are sent with when none is given: 0xFFFF, which the
    /// Bluetooth SIG keeps for tests.
    public static let testCompanyID: UInt16 = 0xFFFF

    /// Reads a layout, strictly.
    /// - Throws: `Invalid` naming the term and what is wrong with it.
    public init(parsing text: String) throws(Invalid) {
        self.text = text
        let terms = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
        guard !text.trimmed.isEmpty else { throw Invalid("the layout is empty") }
        guard terms.count <= Self.maximumTerms else {
            throw Invalid("the layout has \(terms.count) terms, more than the \(Self.maximumTerms) a layout may hold")
        }
        var match: (Field, [UInt8])?
        var service: (Field, UInt16)?
        var identifiers: [Field] = [], dataFields: [Field] = []
        var power: (Field?, Int, fixed: Bool)?
        var extra = false
        var placed: [(Field, String)] = []
        for term in terms {
            func fail(_ why: String) -> Invalid { Invalid("term '\(term)': \(why)") }
            guard !term.isEmpty else { throw Invalid("an empty term (two commas, or one at an end)") }
            if term == "x" {
                guard !extra else { throw fail("a second 'x'") }
                extra = true
                continue
            }
            let kind = term.prefix(2)
            let rest = String(term.dropFirst(2))
            switch kind {
            case "m:", "s:":
                let parts = rest.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw fail("takes \(kind)START-END=HEX") }
                let field = try Self.span(String(parts[0]), term)
                let hex = String(parts[1])
                guard !hex.isEmpty, hex.count % 2 == 0, hex.allSatisfy(\.isHexDigit),
                      let bytes = Self.hexBytes(hex), bytes.count == field.width else {
                    throw fail("the hex must be \(field.width * 2) hex digits, as wide as \(field.start)-\(field.end), got '\(hex)'")
                }
                if kind == "m:" {
                    guard match == nil else { throw fail("a second 'm:' (a layout matches one byte sequence)") }
                    guard bytes.count <= 8 else { throw fail("a match of more than 8 bytes (the library reads at most 8)") }
                    match = (field, bytes)
                } else {
                    guard service == nil else { throw fail("a second 's:'") }
                    guard field.start == 0, field.end == 1 else {
                        throw fail("a service UUID is 16-bit service data's first two bytes: s:0-1=HEX")
                    }
                    // As written (big endian); sent little endian, as every 16-bit UUID.
                    service = (field, UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
                }
                placed.append((field, term))
            case "i:", "d:":
                let letters = rest.drop { $0.isNumber || $0 == "-" }
                var field = try Self.span(String(rest.dropLast(letters.count)), term)
                let allowed: Set<Character> = kind == "i:" ? ["l", "b", "v"] : ["l", "b"]
                guard letters.allSatisfy(allowed.contains), Set(letters).count == letters.count,
                      !(letters.contains("l") && letters.contains("b")) else {
                    throw fail("after the offsets: " + (kind == "i:" ? "l (little endian), b (big endian) and/or v (variable length)"
                                                         : "l (little endian) or b (big endian)") + ", each once")
                }
                field.littleEndian = letters.contains("l")
                field.variableLength = letters.contains("v")
                if kind == "i:" {
                    identifiers.append(field)
                } else {
                    guard field.width <= 8 else { throw fail("a data field of \(field.width) bytes: at most 8 (a 64-bit number)") }
                    dataFields.append(field)
                }
                placed.append((field, term))
            case "p:":
                guard power == nil else { throw fail("a second 'p:'") }
                let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
                guard (1...2).contains(parts.count) else { throw fail("takes p:START-END, p:START-END:CORRECTION or p:-:POWER") }
                let correction: Int
                if parts.count == 2 {
                    guard let value = Int(parts[1]), (-127...127).contains(value) else {
                        throw fail("the correction must be a whole number of dB from -127 to 127, got '\(parts[1])'")
                    }
                    correction = value
                } else {
                    correction = 0
                }
                if parts[0] == "-" {
                    guard parts.count == 2, (-127...20).contains(correction) else {
                        throw fail("p:-:POWER fixes the measured power (dBm at 1 m, -127 to 20)")
                    }
                    power = (nil, correction, true)
                } else {
                    let field = try Self.span(String(parts[0]), term)
                    guard field.width == 1 else {
                        throw fail("a power field of \(field.width) bytes: the measured power is one signed byte")
                    }
                    power = (field, correction, false)
                    placed.append((field, term))
                }
            default:
                throw fail("not a term of a layout (m:, s:, i:, d:, p: or x)")
            }
        }
        guard let match else { throw Invalid("the layout has no 'm:' term (the bytes that mark the beacon), which the library needs") }
        if !extra {
            guard !identifiers.isEmpty else { throw Invalid("the layout has no identifier ('i:'), which a beacon layout needs (or 'x' for an extra layout)") }
            guard power != nil else { throw Invalid("the layout has no power field ('p:'), which a beacon layout needs (p:-:POWER fixes it)") }
        }
        // The company ID's bytes (or the service UUID's) belong to no other field.
        for (field, term) in placed where field.start <= 1 && term.prefix(2) != "s:" {
            throw Invalid("term '\(term)': offsets 0-1 are the " + (service == nil ? "company ID (give it with the company ID option)"
                                                                       : "service UUID ('s:0-1')") + ", no field's")
        }
        for (index, (field, term)) in placed.enumerated() {
            for (other, otherTerm) in placed[(index + 1)...] where field.start <= other.end && other.start <= field.end {
                throw Invalid("terms '\(term)' and '\(otherTerm)' overlap")
            }
        }
        let last = placed.map(\.0.end).max() ?? 1
        for field in identifiers where field.variableLength && field.end != last {
            throw Invalid("term 'i:\(field.start)-\(field.end)\(field.littleEndian ? "l" : "")v': a variable-length identifier "
                          + "must be the layout's last field (what follows it would move with its length)")
        }
        self.matchStart = match.0.start
        self.match = match.1
        self.serviceUUID = service?.1
        self.identifiers = identifiers
        self.dataFields = dataFields
        self.power = power?.0
        self.powerCorrection = power?.1 ?? 0
        self.fixedPower = power?.fixed ?? false
        self.extra = extra
    }

    /// A layout given with its name, `NAME=LAYOUT` (`acme=m:2-2=7a,...`), or without one: a
    /// name is what comes before the first `=` where that holds no `:` (a term's does).
    /// - Throws: `Invalid` for a name that is not a word, or the layout's own refusal.
    public static func named(_ text: String) throws(Invalid) -> (name: String?, layout: BeaconLayout) {
        if let equals = text.firstIndex(of: "="), !text[..<equals].contains(":") {
            let name = String(text[..<equals])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw Invalid("'\(name)' is no layout name: letters, digits, '-', '_' and '.'")
            }
            return (name, try BeaconLayout(parsing: String(text[text.index(after: equals)...])))
        }
        return (nil, try BeaconLayout(parsing: text))
    }

    /// Layouts given in order, each named (`layout`, or `layout1`, `layout2`, ... where several
    /// have no name of their own).
    public static func named(_ texts: [String]) throws(Invalid) -> [(name: String, layout: BeaconLayout)] {
        var named: [(name: String, layout: BeaconLayout)] = []
        for (index, text) in texts.enumerated() {
            let (name, layout) = try Self.named(text)
            named.append((name ?? (texts.count == 1 ? "layout" : "layout\(index + 1)"), layout))
        }
        return named
    }

    /// `START-END`, checked.
    private static func span(_ text: String, _ term: String) throws(Invalid) -> Field {
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int(bounds[0]), let end = Int(bounds[1]), bounds.allSatisfy({ $0.allSatisfy(\.isNumber) })
        else { throw Invalid("term '\(term)': the offsets must be START-END, whole numbers, got '\(text)'") }
        guard start <= end else { throw Invalid("term '\(term)': the field ends (\(end)) before it starts (\(start))") }
        guard end <= maximumOffset else {
            throw Invalid("term '\(term)': offset \(end) is past the \(maximumOffset) an advertising structure reaches")
        }
        return Field(start: start, end: end)
    }

    /// Hex digits already checked (an even count, digits only) as bytes.
    private static func hexBytes(_ hex: some StringProtocol) -> [UInt8]? { try? HexText.parse(hex) }

    // MARK: Values

    /// An identifier's bytes from the way the library writes it, for a field of this layout: a
    /// UUID (16 bytes), `0x` hex, or a decimal number (big endian, the field's width).
    /// - Throws: `Invalid` saying what the field takes.
    public static func identifier(_ text: String, for field: Field) throws(Invalid) -> [UInt8] {
        let widths = field.variableLength ? "at most \(field.width)" : "\(field.width)"
        let bytes: [UInt8]
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let hex = text.dropFirst(2)
            guard !hex.isEmpty, hex.count % 2 == 0, hex.allSatisfy(\.isHexDigit), let value = hexBytes(hex) else {
                throw Invalid("'\(text)': 0x and an even number of hex digits")
            }
            bytes = value
        } else if text.count == 36, let uuid = UUID(uuidString: text) {
            bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        } else if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), text == "0" || !text.hasPrefix("0"),
                  let value = UInt64(text) {
            // (A leading zero the library reads as hex: 0102 is 0x0102 there. Refused, as neither.)
            let width = min(field.width, 8)
            guard width == 8 || value < UInt64(1) << (8 * width) else {
                throw Invalid("'\(text)' does not fit the field's \(field.width) byte\(field.width == 1 ? "" : "s") (at most "
                              + "\(field.width >= 8 ? "\(UInt64.max)" : "\((UInt64(1) << (8 * field.width)) - 1)"))")
            }
            bytes = Array(repeating: 0, count: max(0, field.width - 8)) + (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        } else {
            throw Invalid("'\(text)' is no identifier: a UUID (8-4-4-4-12 hex digits), 0x and hex digits, or a decimal number "
                          + "without leading zeros")
        }
        guard field.variableLength ? (1...field.width).contains(bytes.count) : bytes.count == field.width else {
            throw Invalid("'\(text)' is \(bytes.count) byte\(bytes.count == 1 ? "" : "s"); the field takes \(widths)")
        }
        return bytes
    }

    /// A data field's value from a decimal number or `0x` hex, within the field's width.
    public static func dataValue(_ text: String, for field: Field) throws(Invalid) -> UInt64 {
        let value: UInt64?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            value = text.count > 2 && text.count <= 18 ? UInt64(text.dropFirst(2), radix: 16) : nil
        } else {
            value = text.allSatisfy(\.isASCII) ? UInt64(text) : nil
        }
        guard let value else { throw Invalid("'\(text)' is no number: decimal, or 0x and hex digits") }
        guard field.width == 8 || value < UInt64(1) << (8 * field.width) else {
            throw Invalid("'\(text)' does not fit the field's \(field.width) byte\(field.width == 1 ? "" : "s")")
        }
        return value
    }

    /// How the library prints an identifier (`Identifier.toString()`): a UUID for 16 bytes
    /// (lowercase), a decimal number for 1 or 2, `0x` and lowercase hex otherwise.
    public static func text(ofIdentifier bytes: [UInt8]) -> String {
        let hex = HexText.format(bytes).lowercased()
        switch bytes.count {
        case 16:
            return [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
                    hex.dropFirst(20)].joined(separator: "-")
        case 1, 2:
            return "\(bytes.reduce(0) { $0 << 8 | Int($1) })"
        default:
            return "0x" + hex
        }
    }

    // MARK: Encoding

    /// The advertising data of a beacon of this layout: Flags (LE General Discoverable, no
    /// BR/EDR), then manufacturer data of `companyID`, or for a service layout the service's
    /// UUID in the complete list of 16-bit UUIDs (what scanners filter on) and its service data.
    /// The power byte holds `measuredPower` less the layout's correction, so that the library,
    /// adding it back, reads `measuredPower`.
    /// - Parameters:
    ///   - identifiers: as `identifier(_:for:)` reads them, one for each `i:` in order.
    ///   - data: one value for each `d:` in order.
    /// - Throws: `Invalid` for a count that is not the layout's, or a power the byte cannot hold.
    public func advertisingData(identifiers values: [[UInt8]], data: [UInt64], measuredPower: Int?,
                                companyID: UInt16 = testCompanyID) throws(Invalid) -> AdvertisingData {
        guard values.count == identifiers.count else {
            throw Invalid("the layout has \(identifiers.count) identifier\(identifiers.count == 1 ? "" : "s"), "
                          + "\(values.count) given")
        }
        guard data.count == dataFields.count else {
            throw Invalid("the layout has \(dataFields.count) data field\(dataFields.count == 1 ? "" : "s"), \(data.count) given")
        }
        var powerByte: UInt8?
        if fixedPower {
            if let measuredPower, measuredPower != powerCorrection {
                throw Invalid("the layout fixes the measured power at \(powerCorrection) dBm (p:-:\(powerCorrection)); "
                              + "\(measuredPower) given")
            }
        } else if power != nil {
            guard let measuredPower else { throw Invalid("the layout has a power field: give the measured power (dBm at 1 m)") }
            let stored = measuredPower - powerCorrection
            guard (-128...127).contains(stored) else {
                throw Invalid("a measured power of \(measuredPower) dBm less the layout's correction (\(powerCorrection)) is "
                              + "\(stored), which a signed byte cannot hold")
            }
            powerByte = UInt8(bitPattern: Int8(stored))
        }
        var last = max(matchStart + match.count - 1, 1)
        for field in dataFields + [power].compactMap({ $0 }) { last = max(last, field.end) }
        for (field, value) in zip(identifiers, values) {
            last = max(last, field.variableLength ? field.start + value.count - 1 : field.end)
        }
        var bytes = [UInt8](repeating: 0, count: last + 1)
        let prefix = serviceUUID ?? companyID
        (bytes[0], bytes[1]) = (UInt8(prefix & 0xFF), UInt8(prefix >> 8))
        bytes.replaceSubrange(matchStart..<(matchStart + match.count), with: match)
        for (field, value) in zip(identifiers, values) {
            bytes.replaceSubrange(field.start..<(field.start + value.count), with: field.littleEndian ? value.reversed() : value)
        }
        for (field, value) in zip(dataFields, data) {
            let big = (0..<field.width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            bytes.replaceSubrange(field.start...field.end, with: field.littleEndian ? big.reversed() : big)
        }
        if let power, let powerByte { bytes[power.start] = powerByte }
        var structures = [ADStructure(type: .flags, data: [0x06])]
        if let serviceUUID {
            structures.append(ADStructure(type: .completeServiceUUIDs16, data: [UInt8(serviceUUID & 0xFF), UInt8(serviceUUID >> 8)]))
            structures.append(ADStructure(type: .serviceData16, data: bytes))
        } else {
            structures.append(ADStructure(type: .manufacturerSpecificData, data: bytes))
        }
        return AdvertisingData(structures)
    }

    // MARK: Decoding

    /// What a beacon of a layout says, as the library reads it.
    public struct Reading: Hashable, Sendable {
        /// Each identifier's bytes, in value order (a little-endian field's reversed).
        public var identifiers: [[UInt8]]
        public var data: [UInt64]
        /// The measured power at 1 m: the power byte plus the correction, or the fixed one.
        public var measuredPower: Int?
        /// The manufacturer data's company ID; nil for a service layout.
        public var companyID: UInt16?
    }

    /// The beacon of this layout in advertising data: the first manufacturer data (service data
    /// of the layout's UUID, for a service layout) whose bytes match, with every field inside
    /// it. Stricter than the library, which reads only the first such structure and pads a
    /// short one with zeros: a field past the structure's end reads nothing here (a
    /// variable-length identifier excepted, read at the length there is, one byte at least).
    public func reading(_ advertisingData: AdvertisingData) -> Reading? {
        for structure in advertisingData.structures {
            if let reading = reading(structure) { return reading }
        }
        return nil
    }

    /// Whether a beacon of this layout is in a region of it: its first identifiers are
    /// `region`'s (the library's `Region(id1, id2, id3)`: fewer identifiers, a wider region;
    /// none, every beacon of the layout).
    public static func reading(_ reading: Reading, isIn region: [[UInt8]]) -> Bool {
        region.count <= reading.identifiers.count && zip(reading.identifiers, region).allSatisfy { $0 == $1 }
    }

    /// A region of a layout, as the library's `Region(id1, id2, id3)` names one: the layout,
    /// its name, and the identifiers its beacons start with (fewer, a wider region; none, every
    /// beacon of the layout).
    public struct Region: Hashable, Sendable {
        public let name: String
        public let layout: BeaconLayout
        /// Each identifier's bytes, in value order.
        public let identifiers: [[UInt8]]

        /// From a layout as given (`NAME=LAYOUT` or the layout alone, then named `layout`) and
        /// its identifiers as the library writes them (`identifier(_:for:)`).
        /// - Throws: `Invalid` for a bad layout, more identifiers than it has, or a bad one.
        public init(layout text: String, identifiers texts: [String]) throws(Invalid) {
            let (name, layout) = try BeaconLayout.named([text])[0]
            try self.init(name: name, layout: layout, identifiers: texts)
        }

        /// A named layout's region, its identifiers as the library writes them.
        /// - Throws: `Invalid` for more identifiers than the layout has, or a bad one.
        public init(name: String, layout: BeaconLayout, identifiers texts: [String]) throws(Invalid) {
            guard texts.count <= layout.identifiers.count else {
                throw Invalid("the layout has \(layout.identifiers.count) identifiers, \(texts.count) given")
            }
            var identifiers: [[UInt8]] = []
            for (field, text) in zip(layout.identifiers, texts) {
                identifiers.append(try BeaconLayout.identifier(text, for: field))
            }
            self.name = name
            self.layout = layout
            self.identifiers = identifiers
        }

        /// The identifiers as the library prints them (`text(ofIdentifier:)`).
        public var identifierTexts: [String] { identifiers.map(BeaconLayout.text(ofIdentifier:)) }

        /// Whether advertising data holds a beacon of the region.
        public func contains(_ advertisingData: AdvertisingData) -> Bool {
            guard let reading = layout.reading(advertisingData) else { return false }
            return BeaconLayout.reading(reading, isIn: identifiers)
        }
    }

    /// The beacon of this layout in one AD structure, or nil.
    public func reading(_ structure: ADStructure) -> Reading? {
        guard structure.type == (serviceUUID == nil ? .manufacturerSpecificData : .serviceData16) else { return nil }
        let bytes = Array(structure.data)
        guard bytes.count >= 2 else { return nil }
        let prefix = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        if let serviceUUID, prefix != serviceUUID { return nil }
        guard matchStart + match.count <= bytes.count, Array(bytes[matchStart..<(matchStart + match.count)]) == match else { return nil }
        var identifiers: [[UInt8]] = []
        for field in self.identifiers {
            let end = field.variableLength ? min(field.end, bytes.count - 1) : field.end
            guard end < bytes.count, end >= field.start else { return nil }
            let value = Array(bytes[field.start...end])
            identifiers.append(field.littleEndian ? value.reversed() : value)
        }
        var data: [UInt64] = []
        for field in dataFields {
            guard field.end < bytes.count else { return nil }
            let value = Array(bytes[field.start...field.end])
            data.append((field.littleEndian ? value.reversed() : value).reduce(0) { $0 << 8 | UInt64($1) })
        }
        var measuredPower: Int?
        if fixedPower {
            measuredPower = powerCorrection
        } else if let power {
            guard power.end < bytes.count else { return nil }
            measuredPower = Int(Int8(bitPattern: bytes[power.start])) + powerCorrection
        }
        return Reading(identifiers: identifiers, data: data, measuredPower: measuredPower,
                       companyID: serviceUUID == nil ? prefix : nil)
    }
}

extension String {
    /// Without the spaces and tabs at either end.
    fileprivate var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
