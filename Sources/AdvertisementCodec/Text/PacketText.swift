// SPDX-License-Identifier: GPL-2.0-or-later

/// Packets as other tools print them, read a line at a time: what `decode` takes besides one
/// packet of hex per line.
///
/// - btmon's text: advertising reports rebuilt from the bytes btmon prints (Flags, a company's
///   and a service's `Data:`, 16-bit service UUIDs), with address and RSSI; its iBeacon fields
///   are an error.
/// - hcidump `-R` (a packet starts at a `>` or `<` line; indented lines continue it) and
///   `-X -R` (the same, each line an offset, hex and ASCII). hcidump's decoded text (without
///   `-R`) holds no packet bytes and is reported as such.
/// - Hex dumps with offsets, one packet per dump starting at offset 0: `xxd`, `hexdump -C`,
///   `od -Ax -tx1`, Wireshark's "Copy as Hex Dump" and `tshark -x`. Offsets are checked
///   against the bytes read; a closing offset (hexdump, od) against the total.
/// - Android: a signed decimal list (`Arrays.toString` of a scan record: `[2, 1, 6, ...]`, or
///   `mBytes=[...]`), and `ScanRecord`'s `mManufacturerSpecificData={76=[...]}` and
///   `mServiceData={0000feaa-...=[...]}`, made into the advertising structures they came from.
/// - Apple's logs of `NSData`: `<4c000215 e2c56db5 ...>` and `{length = 25, bytes = 0x...}`;
///   the second form elides the middle of data longer than 24 bytes (` ... `), which is an
///   error that says so.
///
/// - `hcitool -i hci0 cmd 0x08 0x0008 ...` lines (`HcitoolText`): the command each sends.
///
/// A line none of these claim is handed back as `.plain`, for the caller's hex decoding.
public struct PacketTextReader: Sendable {
    /// Where a packet's text came from.
    public enum Spelling: String, Sendable {
        case hcidump, btmon, offsetDump = "offset-dump", androidList = "android-list",
             androidScanRecord = "android-scan-record", appleData = "apple-data", hcitool
    }

    public struct Packet: Hashable, Sendable {
        public var bytes: [UInt8]
        /// The line the packet started on.
        public var line: Int
        public var spelling: Spelling
        /// What was taken though it is not as the standard writes it (a data command's padding), in words.
        public var warning: String?

        public init(bytes: [UInt8], line: Int, spelling: Spelling, warning: String? = nil) {
            self.bytes = bytes
            self.line = line
            self.spelling = spelling
            self.warning = warning
        }
    }

    public enum Item: Hashable, Sendable {
        case packet(Packet)
        /// A line of plain hex (or something unrecognised): for the caller to decode.
        case plain(line: Int)
        /// A line (or the packet starting there) that cannot be read, and why.
        case failure(line: Int, message: String)
    }

    private enum Open {
        case hcidump
        /// A btmon packet: its indented lines, read when it ends.
        case btmon(lines: [Substring])
        /// An offset dump (or hcidump -X -R lines): the next offset expected.
        case dump(expectedOffset: Int, offsetWidth: Int)
    }

    private var open: Open?
    private var bytes: [UInt8] = []
    private var startLine = 0
    private var spelling = Spelling.hcidump
    private var broken: String?

    public init() {}

    /// Whether no packet spans lines now: a plain hex line may then be decoded directly.
    public var isIdle: Bool { open == nil }

    /// Whether `line` starts like plain hex, for the caller to decode it as hex first (and hand
    /// it here if that fails): its first word is hex digits (perhaps after `0x`) ending at a
    /// separator or the line's end, it is not indented (hcidump's continuations are), and it
    /// is not the first row of an offset dump (at least four zeros, then a space or `:`).
    /// Looks at the first word only, and at no more than 11 of its digits: it is checked for
    /// every line `decode` reads.
    public static func startsLikeHex(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = line.first, HexText.nibble(start) != nil else { return false }
        var end = 0
        if line.count > 1, start == UInt8(ascii: "0"), line[1] | 0x20 == UInt8(ascii: "x") { end = 2 }
        let digits = end
        var zeros = 0
        while end < line.count, let value = HexText.nibble(line[end]) {
            if value == 0 && zeros == end - digits { zeros += 1 }
            end += 1
            if end - digits == 11 { return true }  // longer than any offset: a word of hex
        }
        guard end > digits else { return false }
        guard end < line.count else { return true }
        let next = line[end]
        guard next == 0x20 || next == 0x09 || next == UInt8(ascii: ":") || next == UInt8(ascii: "-")
                || next == UInt8(ascii: ",") else { return false }
        // An offset dump's first row: a word of zeros only, then a space or `:`.
        return !(zeros >= 4 && zeros == end && (next == 0x20 || next == 0x09 || next == UInt8(ascii: ":")))
    }

    /// Whether `line` is an attempt at hex (so a fault in it is worth reporting): at least four
    /// in five of its visible characters are what plain hex holds. Log text is not.
    public static func looksLikeHex(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var visible = 0
        var plain = 0
        for character in line where character != 0x20 && character != 0x09 {
            visible += 1
            if isPlainCharacter(character) || character | 0x20 == UInt8(ascii: "x") { plain += 1 }
        }
        return visible > 0 && plain * 5 >= visible * 4
    }

    /// Reads one line (without its newline), numbered `number`; returns what it completed.
    public mutating func add(_ line: String, number: Int) -> [Item] {
        var items: [Item] = []
        let indented = line.first == " " || line.first == "\t"
        let text = Substring(line).drop { $0 == " " || $0 == "\t" }

        switch open {
        case .hcidump where indented:
            if let row = Self.dumpRow(text) {
                continueDump(row, number: number)
            } else if let more = Self.hexBytes(text) {
                bytes += more
            } else {
                broken = broken ?? "line \(number): neither hex nor an offset row inside an hcidump packet"
            }
            return items
        case let .btmon(lines) where indented:
            open = .btmon(lines: lines + [text])
            return items
        case let .dump(expected, width) where !indented || spelling == .hcidump:
            if text == "*" {
                broken = broken ?? "line \(number): repeated rows left out (\"*\"): dump with hexdump -v, or xxd"
                return items
            }
            if let row = Self.dumpRow(text), row.offsetWidth == width || spelling == .hcidump, row.offset != 0 {
                if row.bytes.isEmpty, row.offset == expected {  // a closing offset: the total
                    items += close()
                    return items
                }
                continueDump(row, number: number)
                return items
            }
        default:
            break
        }
        items += close()

        if text.isEmpty || text.first == "#" { return items + [.plain(line: number)] }
        if Self.isBtmonHeader(text) {
            begin(.btmon, number: number)
            open = .btmon(lines: [])
            return items
        }
        // hcidump's packets start "< " or "> "; a bare `<4c000215 ...>` is Apple's NSData.
        if let marker = text.first, marker == ">" || marker == "<", text.dropFirst().first.map({ $0 == " " }) ?? true {
            items += startHcidump(text.dropFirst().drop { $0 == " " }, number: number)
            return items
        }
        if text.hasPrefix("HCI sniffer") || text.hasPrefix("btsnoop version:") || text.hasPrefix("device: hci") {
            return items  // hcidump's banner
        }
        if let row = Self.dumpRow(text), row.offset == 0, !row.bytes.isEmpty, row.offsetWidth >= 4 {
            begin(.offsetDump, number: number)
            open = .dump(expectedOffset: 0, offsetWidth: row.offsetWidth)
            continueDump(row, number: number)
            return items
        }
        if let item = Self.android(text, number: number) ?? Self.apple(text, number: number)
            ?? Self.hcitool(text, number: number) {
            return items + [item]
        }
        return items + [.plain(line: number)]
    }

    /// An `hcitool ... cmd OGF OCF ...` line (`HcitoolText`): the command as an H4 packet.
    private static func hcitool(_ text: Substring, number: Int) -> Item? {
        guard text.hasPrefix("hcitool") || text.hasPrefix("sudo ") || text.contains("/hcitool ") else { return nil }
        do {
            guard let command = try HcitoolText.command(in: text) else { return nil }
            if let (cut, ignored) = HcitoolText.paddingCut(from: command) {
                return .packet(Packet(bytes: cut.h4Bytes, line: number, spelling: .hcitool,
                                      warning: "line \(number): " + HcitoolText.paddingWarning(cut, ignored: ignored)))
            }
            return .packet(Packet(bytes: command.h4Bytes, line: number, spelling: .hcitool))
        } catch {
            return .failure(line: number, message: "line \(number): hcitool cmd, word \(error.offset): \(error.reasonDescription)")
        }
    }

    /// Ends the input: what is still open is complete (or incomplete, and said so).
    public mutating func finish() -> [Item] { close() }

    // MARK: - hcidump and offset dumps

    private mutating func begin(_ kind: Spelling, number: Int) {
        spelling = kind
        startLine = number
        bytes.removeAll(keepingCapacity: true)
        broken = nil
    }

    private mutating func startHcidump(_ rest: Substring, number: Int) -> [Item] {
        begin(.hcidump, number: number)
        if let row = Self.dumpRow(rest), row.offset == 0, !row.bytes.isEmpty {
            open = .dump(expectedOffset: 0, offsetWidth: row.offsetWidth)
            continueDump(row, number: number)
            return []
        }
        if let first = Self.hexBytes(rest) {
            open = .hcidump
            bytes = first
            return []
        }
        return [.failure(line: number, message: "line \(number): hcidump's decoded text holds no packet bytes: "
                         + "run hcidump with -R (or -X -R)")]
    }

    private mutating func continueDump(_ row: DumpRow, number: Int) {
        guard case let .dump(expected, width)? = open else {
            open = .dump(expectedOffset: row.offset + row.bytes.count, offsetWidth: row.offsetWidth)
            bytes += row.bytes
            return
        }
        if row.offset != expected {
            broken = broken ?? "line \(number): offset \(row.offset) where \(expected) was expected "
                + "(the dump's rows and offsets disagree)"
        }
        bytes += row.bytes
        open = .dump(expectedOffset: expected + row.bytes.count, offsetWidth: width)
    }

    private mutating func close() -> [Item] {
        guard let closing = open else { return [] }
        open = nil
        if case let .btmon(lines) = closing { return Self.btmonReports(lines, line: startLine) }
        if let broken { return [.failure(line: startLine, message: broken)] }
        guard !bytes.isEmpty else { return [.failure(line: startLine, message: "line \(startLine): a packet without bytes")] }
        return [.packet(Packet(bytes: bytes, line: startLine, spelling: spelling))]
    }

    // MARK: - btmon

    /// btmon's packet line: a direction mark, `HCI Event:` or `HCI Command:`, and its frame
    /// number (`#14`), which hcidump's decoded text has not.
    static func isBtmonHeader(_ text: Substring) -> Bool {
        guard let mark = text.first, ">< @=".contains(mark),
              text.contains("HCI Event:") || text.contains("HCI Command:") else { return false }
        return text.split(separator: " ").contains { $0.first == "#" && $0.count > 1 && $0.dropFirst().allSatisfy(\.isNumber) }
    }

    /// The advertising reports of a btmon packet, rebuilt from what btmon prints as bytes:
    /// Flags, a company's `Data:`, `Service Data:` and its `Data:`, 16-bit service UUIDs, with
    /// the address and RSSI; other packets hold nothing to hand out. btmon prints an iBeacon's
    /// fields instead of its bytes (and BlueZ 5.66 prints its UUID and version byte-swapped),
    /// which is an error that says what to do instead.
    static func btmonReports(_ lines: [Substring], line: Int) -> [Item] {
        guard lines.first.map({ $0.hasPrefix("LE Advertising Report") || $0.hasPrefix("LE Extended Advertising Report") })
                == true else { return [] }
        var items: [Item] = []
        var address: [UInt8]?
        var random: UInt8 = 0
        var data: [UInt8] = []
        var rssi: UInt8 = 0x7F
        var pending: (type: UInt8, prefix: [UInt8])?
        var uuids: [UInt8] = []
        var collectingUUIDs = false
        func finishUUIDs() {
            if collectingUUIDs, !uuids.isEmpty { data += [UInt8(uuids.count + 1), 0x03] + uuids }
            collectingUUIDs = false
            uuids = []
        }
        func report() {
            finishUUIDs()
            guard let address else { return }
            let parameters: [UInt8] = [0x02, 0x01, 0x03, random] + address + [UInt8(truncatingIfNeeded: data.count)] + data + [rssi]
            items.append(.packet(Packet(bytes: [0x3E, UInt8(truncatingIfNeeded: parameters.count)] + parameters,
                                        line: line, spelling: .btmon)))
        }
        for text in lines {
            if collectingUUIDs, !text.contains(":"), let value = hexInParentheses(text), value.count == 4,
               let uuid = UInt16(value, radix: 16) {
                uuids += [UInt8(uuid & 0xFF), UInt8(uuid >> 8)]
                continue
            }
            finishUUIDs()
            if text.hasPrefix("Address type:") {
                random = text.contains("Random") ? 1 : 0
            } else if text.hasPrefix("Address:"), address == nil || data.isEmpty {
                address = (try? BluetoothAddress(parsing: text.dropFirst(8).drop { $0 == " " }.prefix(17)))?.littleEndianBytes
            } else if text.hasPrefix("Flags: 0x"), let flags = UInt8(text.dropFirst(9).prefix(2), radix: 16) {
                data += [0x02, 0x01, flags]
            } else if text.hasPrefix("Company:"), let id = decimalInParentheses(text) {
                pending = (0xFF, [UInt8(id & 0xFF), UInt8(id >> 8)])
            } else if text.hasPrefix("Service Data:"), let value = hexInParentheses(text), let uuid = UInt16(value, radix: 16) {
                pending = (0x16, [UInt8(uuid & 0xFF), UInt8(uuid >> 8)])
            } else if text.hasPrefix("16-bit Service UUIDs") {
                collectingUUIDs = true
            } else if text.hasPrefix("Type: iBeacon") {
                return [.failure(line: line, message: "line \(line): btmon prints an iBeacon's fields, not its bytes (BlueZ "
                                 + "5.66 even byte-swaps its UUID and version): record with btmon -w FILE and run "
                                 + "beacon-emit decode FILE, or use hcidump -R")]
            } else if text.hasPrefix("Data: "), let structure = pending, let bytes = try? HexText.parse(text.dropFirst(6)) {
                let body = structure.prefix + bytes
                data += [UInt8(truncatingIfNeeded: body.count + 1), structure.type] + body
                pending = nil
            } else if text.hasPrefix("RSSI:"), let value = Int(text.dropFirst(5).drop { $0 == " " }.prefix { $0 != " " }) {
                rssi = UInt8(bitPattern: Int8(clamping: value))
                report()
                address = nil
                data = []
            }
        }
        return items
    }

    /// `0xfeaa` in `Google (0xfeaa)`: the hex digits.
    private static func hexInParentheses(_ text: Substring) -> Substring? {
        guard let open = text.lastIndex(of: "("), text[open...].hasPrefix("(0x"), let close = text[open...].firstIndex(of: ")")
        else { return nil }
        return text[text.index(open, offsetBy: 3)..<close]
    }

    /// `76` in `Apple, Inc. (76)`.
    private static func decimalInParentheses(_ text: Substring) -> UInt16? {
        guard let open = text.lastIndex(of: "("), let close = text[open...].firstIndex(of: ")") else { return nil }
        return UInt16(text[text.index(after: open)..<close])
    }

    struct DumpRow {
        var offset: Int
        var offsetWidth: Int
        var bytes: [UInt8]
    }

    /// A row of an offset dump: a hex offset (optionally followed by `:`), then up to 16 bytes
    /// as two-digit groups (or xxd's four-digit ones), then perhaps an ASCII column, which
    /// starts after a gap of three or more spaces, two after xxd's groups, or at a `|`.
    static func dumpRow(_ text: Substring) -> DumpRow? {
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count, HexText.nibble(utf8[index]) != nil { index += 1 }
        let width = index
        guard width >= 4, width <= 10 else { return nil }
        var offset = 0
        for character in utf8[..<width] { offset = offset << 4 | Int(HexText.nibble(character)!) }
        if index < utf8.count, utf8[index] == UInt8(ascii: ":") { index += 1 }
        if index == utf8.count { return DumpRow(offset: offset, offsetWidth: width, bytes: []) }  // a closing offset
        guard utf8[index] == 0x20 || utf8[index] == 0x09 else { return nil }
        var bytes: [UInt8] = []
        var groupDigits: Int? = nil
        while index < utf8.count, bytes.count < 16 {
            var gap = 0
            while index < utf8.count, utf8[index] == 0x20 || utf8[index] == 0x09 { gap += 1; index += 1 }
            if index == utf8.count || utf8[index] == UInt8(ascii: "|") { break }
            if !bytes.isEmpty, gap >= 3 || (gap >= 2 && groupDigits == 4) { break }
            var end = index
            while end < utf8.count, utf8[end] != 0x20, utf8[end] != 0x09 { end += 1 }
            let digits = end - index
            // xxd's last group of an odd count is one byte.
            let lastOddGroup = groupDigits == 4 && digits == 2
            guard digits == 2 || digits == 4, groupDigits == nil || groupDigits == digits || lastOddGroup,
                  utf8[index..<end].allSatisfy({ HexText.nibble($0) != nil }) else { break }
            if !lastOddGroup { groupDigits = digits }
            var position = index
            while position < end {
                bytes.append(HexText.nibble(utf8[position])! << 4 | HexText.nibble(utf8[position + 1])!)
                position += 2
            }
            index = end
            if lastOddGroup { break }
        }
        guard !bytes.isEmpty else { return nil }
        return DumpRow(offset: offset, offsetWidth: width, bytes: bytes)
    }

    /// Space-separated two-digit hex, as hcidump -R writes it (nil for anything else).
    static func hexBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            let utf8 = Array(token.utf8)
            guard utf8.count == 2, let high = HexText.nibble(utf8[0]), let low = HexText.nibble(utf8[1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes.isEmpty ? nil : bytes
    }

    // MARK: - Android

    /// `mBytes=[...]`, `mManufacturerSpecificData={id=[...]}` / `mServiceData={uuid=[...]}`, or
    /// a bare list of signed decimals.
    static func android(_ text: Substring, number: Int) -> Item? {
        if let range = text.firstRange(of: "mBytes=[") {
            return list(text[range.upperBound...], number: number, spelling: .androidList)
        }
        var data: [UInt8] = []
        var found = false
        if let range = text.firstRange(of: "mManufacturerSpecificData={") {
            found = true
            for (key, values) in entries(text[range.upperBound...]) {
                guard let company = UInt16(key) else { return failure(number, "company id \(key) is not a number") }
                data += [UInt8(truncatingIfNeeded: values.count + 3), 0xFF,
                         UInt8(company & 0xFF), UInt8(company >> 8)] + values
            }
        }
        if let range = text.firstRange(of: "mServiceData={") {
            found = true
            for (key, values) in entries(text[range.upperBound...]) {
                guard let uuid = shortUUID(key) else {
                    return failure(number, "service \(key) is not a 16-bit UUID on the Bluetooth base")
                }
                data += [UInt8(truncatingIfNeeded: values.count + 3), 0x16,
                         UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + values
            }
        }
        if found {
            guard !data.isEmpty else { return nil }  // empty maps (a dump with a field per line has others)
            return .packet(Packet(bytes: data, line: number, spelling: .androidScanRecord))
        }
        if let open = text.firstIndex(of: "["), let values = decimals(text[text.index(after: open)...]),
           values.count >= 2 {
            return .packet(Packet(bytes: values, line: number, spelling: .androidList))
        }
        return nil
    }

    private static func list(_ text: Substring, number: Int, spelling: Spelling) -> Item {
        guard let values = decimals(text) else {
            return failure(number, "a list of bytes as signed decimals (-128 to 255) was expected")
        }
        return .packet(Packet(bytes: values, line: number, spelling: spelling))
    }

    /// The decimals of a list up to its `]` (nil unless every item is a byte, signed or not).
    static func decimals(_ text: Substring) -> [UInt8]? {
        guard let close = text.firstIndex(of: "]") else { return nil }
        let body = text[..<close]
        if body.allSatisfy({ $0 == " " }) { return [] }
        var values: [UInt8] = []
        for item in body.split(separator: ",") {
            guard let value = Int(item.trimmingSpaces()), value >= -128, value <= 255 else { return nil }
            values.append(UInt8(truncatingIfNeeded: value))
        }
        return values
    }

    /// `key=[...]` entries up to the map's closing `}`.
    static func entries(_ text: Substring) -> [(String, [UInt8])] {
        var result: [(String, [UInt8])] = []
        var rest = text
        while let equals = rest.firstIndex(of: "="), !rest[..<equals].contains("}"),
              rest[rest.index(after: equals)...].first == "[" {
            let key = String(rest[..<equals].trimmingSpaces().drop { $0 == "," || $0 == " " })
            let listStart = rest.index(equals, offsetBy: 2)
            guard let values = decimals(rest[listStart...]), let close = rest[listStart...].firstIndex(of: "]") else { break }
            result.append((key, values))
            rest = rest[rest.index(after: close)...]
        }
        return result
    }

    /// The 16-bit UUID of `0000XXXX-0000-1000-8000-00805f9b34fb`.
    static func shortUUID(_ text: String) -> UInt16? {
        let lower = text.lowercased()
        guard lower.count == 36, lower.hasPrefix("0000"), lower.hasSuffix("-0000-1000-8000-00805f9b34fb") else { return nil }
        return UInt16(lower.dropFirst(4).prefix(4), radix: 16)
    }

    // MARK: - Apple

    /// `{length = N, bytes = 0x...}` or `<hex hex ...>`: manufacturer data, or service data
    /// where a 16-bit service UUID names it (`FEAA = <...>`, as in `kCBAdvDataServiceData`).
    static func apple(_ text: Substring, number: Int) -> Item? {
        if let range = text.firstRange(of: "bytes = 0x") {
            let body = text[range.upperBound...].prefix { $0 != "}" }
            let head = text[..<range.lowerBound]
            let length = head.firstRange(of: "length = ").flatMap { Int(head[$0.upperBound...].prefix { $0.isNumber }) }
            if body.contains("...") {
                return failure(number, "the log left out the middle of \(length.map { "these \($0)" } ?? "the") bytes "
                               + "(NSData shows only the first 16 and last 8 of longer data): log the bytes as hex instead")
            }
            guard let bytes = try? HexText.parse(body.filter { $0 != " " }) else {
                return failure(number, "hex was expected after \"bytes = 0x\"")
            }
            if let length, length != bytes.count {
                return failure(number, "the log says \(length) bytes, and shows \(bytes.count)")
            }
            let key = head.firstRange(of: "{length = ").map { head[..<$0.lowerBound] } ?? head
            return .packet(Packet(bytes: serviceData(key: key, bytes), line: number, spelling: .appleData))
        }
        var rest = text
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let body = rest[rest.index(after: open)..<close]
            let groups = body.split(separator: " ")
            if !groups.isEmpty, groups.allSatisfy({ $0.count % 2 == 0 && $0.allSatisfy(\.isHexDigit) }),
               let bytes = try? HexText.parse(groups.joined()) {
                return .packet(Packet(bytes: serviceData(key: rest[..<open], bytes), line: number, spelling: .appleData))
            }
            rest = rest[rest.index(after: close)...]
        }
        return nil
    }

    /// `bytes` as a Service Data structure when the text before them ends in a 16-bit UUID and
    /// ` = ` (`FEAA = `); otherwise as they are (manufacturer data).
    static func serviceData(key: Substring, _ bytes: [UInt8]) -> [UInt8] {
        var name = key.trimmingSpaces()
        guard name.last == "=" else { return bytes }
        name = name.dropLast().trimmingSpaces()
        let word = String(name.reversed().prefix { $0.isHexDigit }.reversed())
        guard word.count == 4, word.count == name.reversed().prefix(while: { $0 != " " && $0 != "\t" }).count,
              let uuid = UInt16(word, radix: 16) else { return bytes }
        return [UInt8(truncatingIfNeeded: bytes.count + 3), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + bytes
    }

    private static func failure(_ number: Int, _ message: String) -> Item {
        .failure(line: number, message: "line \(number): \(message)")
    }
}

/// What a plain hex line may hold besides `0x`: hex digits, the separators (space, tab, `:`,
/// `-`, `,`) and hcidump's direction marks (`<`, `>`). A bit per character, as two words: this
/// is checked for every character of every line `decode` reads.
@inline(__always)
private func isPlainCharacter(_ character: UInt8) -> Bool {
    // Characters 0-63: tab, space, `,` `-`, `0`-`9` `:`, `<`, `>`.
    let low: UInt64 = 1 << 9 | 1 << 32 | 1 << 44 | 1 << 45 | 0x3FF << 48 | 1 << 58 | 1 << 60 | 1 << 62
    // Characters 64-127: `A`-`F`, `a`-`f`.
    let high: UInt64 = 0x3F << 1 | 0x3F << 33
    switch character >> 6 {
    case 0: return (low >> UInt64(character & 63)) & 1 != 0
    case 1: return (high >> UInt64(character & 63)) & 1 != 0
    default: return false
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else { return "" }
        return self[first...last]
    }
}
