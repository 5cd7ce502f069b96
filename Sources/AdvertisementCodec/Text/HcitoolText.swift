// SPDX-License-Identifier: GPL-2.0-or-later

/// `hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 06 ...`: the line countless tutorials configure a
/// beacon with, read as the HCI command it sends, and written from one.
///
/// hcitool reads the group (OGF), the command (OCF) and each parameter byte as hex, with or
/// without `0x`; so does this. A leading `sudo`, `-i hciN` (or `-i N`) and a trailing
/// `# comment` are accepted.
public enum HcitoolText {
    static let structure = "hcitool cmd line"

    /// The command an `hcitool ... cmd OGF OCF [BYTE ...]` line sends; nil for a line that is
    /// not one (`hcitool lescan`, any other text).
    /// - Throws: `CodecError` (its offset a word's number, from 1) for an `hcitool cmd` line
    ///   whose group, command or a byte is not hex in range, or with more than 255 bytes.
    public static func command(in line: some StringProtocol) throws(CodecError) -> HCICommandPacket? {
        let text = line.prefix { $0 != "#" }
        var words: [String] = text.split(whereSeparator: { (character: Character) in character == " " || character == "\t" })
            .map { String($0) }
        if words.first == "sudo" { words.removeFirst() }
        guard let program = words.first, program == "hcitool" || program.hasSuffix("/hcitool") else { return nil }
        var index = 1
        if index < words.count, words[index] == "-i" { index += 2 }
        guard index < words.count, words[index] == "cmd" else { return nil }
        index += 1
        func value(_ position: Int, _ field: String, max: Int) throws(CodecError) -> Int {
            guard position < words.count else {
                throw CodecError(structure: structure, offset: position + 1,
                                 reason: .truncated(field: field, needed: 1, available: 0))
            }
            let word = words[position]
            let digits = word.lowercased().hasPrefix("0x") ? word.dropFirst(2) : Substring(word)
            guard !digits.isEmpty, digits.count <= 4, let parsed = Int(digits, radix: 16), parsed <= max else {
                throw CodecError(structure: structure, offset: position + 1,
                                 reason: .unexpectedValue(field: field, expected: "hex up to 0x" + String(max, radix: 16, uppercase: true),
                                                          found: "'\(word)'"))
            }
            return parsed
        }
        let group = try value(index, "OGF (the command group)", max: 0x3F)
        let command = try value(index + 1, "OCF (the command)", max: 0x3FF)
        var parameters: [UInt8] = []
        for position in (index + 2)..<max(index + 2, words.count) {
            parameters.append(UInt8(try value(position, "parameter byte \(parameters.count + 1)", max: 0xFF)))
        }
        guard parameters.count <= HCICommandPacket.maximumParameterLength else {
            throw CodecError(structure: structure, offset: index + 2 + HCICommandPacket.maximumParameterLength,
                             reason: .trailingBytes(count: parameters.count - HCICommandPacket.maximumParameterLength))
        }
        return HCICommandPacket(opcode: HCIOpcode(UInt16(group) << 10 | UInt16(command)), parameters: parameters)
    }

    /// A legacy data command (LE Set Advertising Data or LE Set Scan Response Data) with more
    /// than its 32 parameter bytes, as the most copied Raspberry Pi recipes write it: a controller
    /// reads the length byte and the 31 data bytes and ignores the rest, and so does this.
    /// Returns the command cut to its 32 bytes and how many were cut; nil for any other command,
    /// or one of 32 bytes or fewer.
    public static func paddingCut(from command: HCICommandPacket) -> (command: HCICommandPacket, ignored: Int)? {
        let length = 1 + AdvertisingData.legacyMaximumLength
        guard command.opcode == .leSetAdvertisingData || command.opcode == .leSetScanResponseData,
              command.parameters.count > length else { return nil }
        return (HCICommandPacket(opcode: command.opcode, parameters: Array(command.parameters.prefix(length))),
                command.parameters.count - length)
    }

    /// The warning for a command `paddingCut(from:)` cut.
    public static func paddingWarning(_ command: HCICommandPacket, ignored: Int) -> String {
        let name = command.opcode.name ?? command.opcode.description
        return "\(name) has \(command.parameters.count + ignored) parameter bytes where it takes "
            + "\(command.parameters.count): the last \(ignored) ignored, as a controller ignores them"
    }

    /// What a command that sets no advertising data sets, in words: the legacy advertising
    /// parameters (interval, PDU type, own address, channels), advertising on or off, the
    /// random address; any other command by name with its parameters.
    public static func setting(of command: HCICommandPacket) -> String {
        let parameters = command.parameters[...]
        switch command.opcode {
        case .leSetAdvertisingParameters:
            guard let set = try? LESetAdvertisingParameters(parameters: parameters) else { break }
            let owner = ["public", "random", "resolvable or public", "resolvable or random"]
            let channels = [(AdvertisingChannelMap.channel37, "37"), (.channel38, "38"), (.channel39, "39")]
                .filter { set.channelMap.contains($0.0) }.map(\.1)
            return "advertising parameters: interval \(milliseconds(set.intervalMin))-\(milliseconds(set.intervalMax)) ms, "
                + "\(set.advertisingType), own address "
                + (set.ownAddressType.rawValue < 4 ? owner[Int(set.ownAddressType.rawValue)] : "type \(set.ownAddressType.rawValue)")
                + ", channels " + (channels.isEmpty ? "none" : channels.joined(separator: " "))
        case .leSetAdvertisingEnable:
            guard let enable = try? LESetAdvertisingEnable(parameters: parameters) else { break }
            return enable.enable ? "advertising on" : "advertising off"
        case .leSetRandomAddress where parameters.count == 6:
            return "random address \(BluetoothAddress(littleEndian: parameters))"
        default:
            break
        }
        let name = command.opcode.name ?? command.opcode.description
        return parameters.isEmpty ? name : "\(name): \(HexText.format(command.parameters, separator: " "))"
    }

    /// 0.625 ms units as milliseconds, exactly: "100", "20.625".
    private static func milliseconds(_ units: UInt16) -> String {
        let microseconds = Int(units) * 625
        var text = "\(microseconds / 1000)"
        var fraction = microseconds % 1000
        guard fraction != 0 else { return text }
        var digits = 3
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        let shown = String(fraction)
        text += "." + String(repeating: "0", count: digits - shown.count) + shown
        return text
    }

    /// The `hcitool` lines that advertise `beacon` with legacy commands, as a tutorial's script
    /// would: advertising off (so that the parameters are taken), the parameters (non-connectable,
    /// or scannable with a scan response; the public address; all three channels), the data,
    /// the scan response where there is one, advertising on.
    /// - Parameter intervalUnits: the interval in 0.625 ms units (32 to 16384).
    /// - Throws: `CodecError` for data that legacy advertising cannot carry (over 31 bytes).
    public static func lines(advertising beacon: Beacon, intervalUnits: UInt16, device: String = "hci0")
        throws(CodecError) -> [String] {
        let response = beacon.scanResponseData?.bytes
        var commands = [LESetAdvertisingEnable(enable: false).packet]
        commands.append(LESetAdvertisingParameters(
            intervalMin: intervalUnits, intervalMax: intervalUnits,
            advertisingType: response == nil ? .nonConnectableUndirected : .scannableUndirected).packet)
        commands.append(try LESetAdvertisingData(data: beacon.advertisingData.bytes).packet)
        if let response { commands.append(try LESetScanResponseData(data: response).packet) }
        commands.append(LESetAdvertisingEnable(enable: true).packet)
        return commands.map { line(for: $0, device: device) }
    }

    /// The `hcitool` line that sends `command` on `device`.
    public static func line(for command: HCICommandPacket, device: String = "hci0") -> String {
        let opcode = command.opcode.rawValue
        let group = "0x" + HexText.format([UInt8(opcode >> 10)])
        let ocf = opcode & 0x3FF
        let number = "0x" + HexText.format([UInt8(ocf >> 8), UInt8(ocf & 0xFF)])
        return (["hcitool", "-i", device, "cmd", group, number] + command.parameters.map { HexText.format([$0]) })
            .joined(separator: " ")
    }
}

/// What a script of `hcitool cmd` lines sets up for legacy advertising, taken in order (a later
/// command replaces what an earlier one set): the data, the scan response, the parameters, the
/// random address, and whether it ends with advertising on. Lines that are not `hcitool cmd`
/// (`hciconfig hci0 up`, comments) are passed over; commands that are not about advertising
/// are listed in `others`.
public struct HcitoolScript: Hashable, Sendable {
    public var data: AdvertisingData?
    public var scanResponse: AdvertisingData?
    public var parameters: LESetAdvertisingParameters?
    public var randomAddress: BluetoothAddress?
    /// The last LE Set Advertising Enable: true on, false off, nil none.
    public var enabled: Bool?
    /// Other commands, in words (`HcitoolText.setting(of:)`), with their lines.
    public var others: [Other] = []
    /// What was taken as a controller takes it though it is not as the standard writes it
    /// (a data command's padding past its 32 bytes), each naming its line.
    public var warnings: [String] = []

    public struct Other: Hashable, Sendable {
        public var line: Int
        public var setting: String
    }

    /// Reads a script.
    /// - Throws: `CodecError` for a malformed `hcitool cmd` line or a command whose parameters do
    ///   not parse, its structure naming the line ("line 3: ...").
    public init(parsing text: String) throws(CodecError) {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let command: HCICommandPacket
            do {
                guard let read = try HcitoolText.command(in: line) else { continue }
                if let (cut, ignored) = HcitoolText.paddingCut(from: read) {
                    warnings.append("line \(number): " + HcitoolText.paddingWarning(cut, ignored: ignored))
                    command = cut
                } else {
                    command = read
                }
            } catch {
                throw CodecError(structure: "line \(number): \(error.structure)", offset: error.offset, reason: error.reason)
            }
            do {
                try take(command, line: number)
            } catch {
                throw CodecError(structure: "line \(number): \(error.structure)", offset: error.offset, reason: error.reason)
            }
        }
    }

    private mutating func take(_ command: HCICommandPacket, line: Int) throws(CodecError) {
        let parameters = command.parameters[...]
        switch command.opcode {
        case .leSetAdvertisingData:
            let length = try LESetAdvertisingData(parameters: parameters).data.count
            data = try Self.data(parameters[1..<(1 + length)], "LE Set Advertising Data")
        case .leSetScanResponseData:
            let length = try LESetScanResponseData(parameters: parameters).data.count
            scanResponse = try Self.data(parameters[1..<(1 + length)], "LE Set Scan Response Data")
        case .leSetAdvertisingParameters:
            self.parameters = try LESetAdvertisingParameters(parameters: parameters)
        case .leSetRandomAddress:
            guard parameters.count == 6 else {
                throw CodecError(structure: "LE Set Random Address", offset: parameters.count,
                                 reason: .truncated(field: "Random_Address", needed: 6, available: parameters.count))
            }
            randomAddress = BluetoothAddress(littleEndian: parameters)
        case .leSetAdvertisingEnable:
            enabled = try LESetAdvertisingEnable(parameters: parameters).enable
        default:
            others.append(Other(line: line, setting: HcitoolText.setting(of: command)))
        }
    }

    /// The command's significant bytes (its length says how many of the 31) as AD structures.
    /// An error's offset counts from the command's first parameter byte (the length), as
    /// `decode` counts for the same line.
    private static func data(_ bytes: ArraySlice<UInt8>, _ command: String) throws(CodecError) -> AdvertisingData {
        do {
            let data = try AdvertisingData(parsing: bytes)
            try data.validate(maximumLength: AdvertisingData.legacyMaximumLength)
            return data
        } catch {
            throw CodecError(structure: "\(command): \(error.structure)", offset: error.offset, reason: error.reason)
        }
    }
}
