// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One fuzz target per parser. Each parses arbitrary bytes; where a parse succeeds it checks
/// that encoding gives the input back, and traps if not (a finding, not a user-facing path).
enum FuzzTarget: String, CaseIterable {
    case advertisingData = "advertising-data"
    case beaconPayload = "beacon-payload"
    case hciEvent = "hci-event"
    case hciCommand = "hci-command"
    case h4Stream = "h4-stream"
    case hexText = "hex-text"
    case packet
    case btsnoop
    case mgmt
    case packetText = "packet-text"
    case pcap
    /// A controller's byte stream into the host's sessions (`SessionFuzzing`).
    case advertiseSession = "advertise-session"
    case scanSession = "scan-session"
    /// The text people and programs hand the tool (`TextFuzzing`).
    case scenario
    case json
    case controlRequest = "control-request"
    case record
    /// YAML of anchors and aliases grown to the 1 MiB a file may hold (`TextFuzzing.yamlAliases`).
    case yamlAliases = "yaml-aliases"
    /// A capture surveyed and planned for replay (`TextFuzzing.captureReplay`).
    case captureReplay = "capture-replay"
    /// The metrics endpoint's request head (`TextFuzzing.metricsHead`).
    case metricsHead = "metrics-head"
    /// A phone's log line matched and shown in a report; its text read as a pattern (`TextFuzzing.phoneLine`).
    case phoneLine = "phone-line"

    /// What a target makes once, before the first input: the phone patterns compiled and run
    /// (the regular expression library keeps what it builds then for good, which the fuzzer
    /// would otherwise take for a leak of the first input's).
    func prepare() {
        if self == .phoneLine { TextFuzzing.phoneLine(Array("BEACON-EMIT enter region=store".utf8)) }
    }

    func run(_ bytes: [UInt8]) {
        switch self {
        case .advertiseSession: SessionFuzzing.advertise(bytes)
        case .scanSession: SessionFuzzing.scan(bytes)
        case .scenario: TextFuzzing.scenario(bytes)
        case .json: TextFuzzing.json(bytes)
        case .controlRequest: TextFuzzing.controlRequest(bytes)
        case .record: TextFuzzing.record(bytes)
        case .yamlAliases: TextFuzzing.yamlAliases(bytes)
        case .captureReplay: TextFuzzing.captureReplay(bytes)
        case .metricsHead: TextFuzzing.metricsHead(bytes)
        case .phoneLine: TextFuzzing.phoneLine(bytes)
        case .advertisingData:
            if let data = try? AdvertisingData(parsing: bytes) {
                require(data.bytes == bytes, "advertising data round trip")
                _ = (data.flags, data.localName, data.txPowerLevel, data.serviceUUIDs16, data.serviceUUIDs128,
                     data.serviceData16.count, data.manufacturerData.count)
                _ = try? Beacon.beacons(in: data)
            }
        case .beaconPayload:
            if let beacon = try? IBeacon(parsingManufacturerData: bytes[...]) {
                require(beacon.manufacturerData == bytes, "iBeacon round trip")
            }
            if let beacon = try? AltBeacon(parsingManufacturerData: bytes[...]) {
                require(beacon.manufacturerData == bytes, "AltBeacon round trip")
            }
            if let frame = try? EddystoneFrame(parsing: bytes[...]) {
                require(frame.bytes == bytes, "Eddystone round trip")
                if case let .url(url) = frame { _ = url.url }
            }
            _ = try? Beacon.beacon(inManufacturerData: bytes[...])
        case .hciEvent:
            if let event = try? HCIEvent(parsing: bytes) {
                require(event.bytes == bytes, "HCI event round trip")
            }
        case .hciCommand:
            if let packet = try? HCICommandPacket(parsing: bytes[...]) {
                require(packet.bytes == bytes, "HCI command packet round trip")
                if let reencode = commandParsers[packet.opcode], let (parameters, stable) = try? reencode(packet) {
                    require(stable, "typed command parse of its own encoding \(packet.opcode)")
                    // Legacy data commands may carry non-zero padding that the typed form drops.
                    if !paddedCommands.contains(packet.opcode) {
                        require(parameters == packet.parameters, "typed command round trip \(packet.opcode)")
                    }
                }
            }
        case .h4Stream:
            // The first byte picks the chunk size, so packets arrive split in many ways.
            guard let first = bytes.first else { return }
            let chunk = Int(first % 16) + 1
            let stream = Array(bytes.dropFirst())
            var decoder = H4StreamDecoder()
            var reassembled: [UInt8] = []
            var offset = 0
            streaming: while offset < stream.count {
                decoder.append(stream[offset..<min(offset + chunk, stream.count)])
                offset += chunk
                while true {
                    guard let packet = try? decoder.next() else { break streaming }
                    reassembled += packet.bytes
                    _ = try? packet.event()
                }
            }
            require(stream.starts(with: reassembled), "H4 packets are the stream's prefix")
        case .hexText:
            let text = String(decoding: bytes, as: UTF8.self)
            if let parsed = try? HexText.parse(text) {
                require((try? HexText.parse(HexText.format(parsed, separator: " "))) == parsed, "hex round trip")
            }
            _ = try? UUID(beaconText: text)
            _ = try? BluetoothAddress(parsing: text)
        case .packet:
            if let packet = try? PacketDecoder.decode(bytes) {
                _ = try? packet.requireBeacons()
            }
            // Advertising data without a beacon, every structure read as decode prints it.
            _ = try? PacketDecoder.decode(bytes[...], each: { _ in }, others: { _ = ADField.fields(of: $0.data) })
        case .btsnoop:
            // Whole, then split in two: the same records either way.
            var whole = BTSnoopParser()
            whole.append(bytes)
            var first: [BTSnoopParser.Record] = []
            while let record = try? whole.next() { first.append(record) }
            var split = BTSnoopParser()
            var second: [BTSnoopParser.Record] = []
            let cut = bytes.count / 2
            split.append(bytes[..<cut])
            while let record = try? split.next() { second.append(record) }
            split.append(bytes[cut...])
            while let record = try? split.next() { second.append(record) }
            require(second.starts(with: first) || first.starts(with: second), "btsnoop records independent of chunking")
        case .mgmt:
            // One packet as the management socket delivers it: as an event, and as a command.
            guard let packet = try? MgmtPacket(parsing: bytes) else { return }
            require(packet.bytes == bytes, "management packet round trip")
            if let event = try? MgmtEvent(packet: packet) {
                require(event.packet(index: packet.index) == packet, "management event round trip")
            }
            if let reencode = mgmtParsers[packet.code], let stable = try? reencode(packet) {
                require(stable, "typed management command round trip 0x\(String(packet.code, radix: 16))")
            }
            for parse in mgmtReturnParsers { _ = try? parse(packet.parameters[...]) }
            // The same framing on the monitor channel (the takeover watch reads it).
            _ = try? MonitorMessage(packet: packet)
        case .pcap:
            // A pcap or pcapng capture: no crash; the packets do not depend on how the bytes
            // arrive; whatever reads, reads again the same.
            func packets(chunk: Int) -> [[UInt8]] {
                var parser = PcapParser()
                var packet = BTSnoopParser.PacketView(timestamp: 0, type: .event, body: [])
                var found: [[UInt8]] = []
                var start = 0
                while start < bytes.count {
                    parser.append(bytes[start..<min(bytes.count, start + chunk)])
                    start += chunk
                    while (try? parser.nextPacket(into: &packet)) == true { found.append(Array(packet.body)) }
                }
                _ = try? parser.finish()
                return found
            }
            let whole = packets(chunk: max(1, bytes.count))
            let split = packets(chunk: 7)
            require(whole.starts(with: split) || split.starts(with: whole), "pcap packets independent of chunking")
        case .packetText:
            // Lines of other tools' text: any bytes, no crash; a packet is never empty and never
            // starts on a line after the input's last; the same lines read again give the same.
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            func read() -> [PacketTextReader.Item] {
                var reader = PacketTextReader()
                var items: [PacketTextReader.Item] = []
                for (index, line) in lines.enumerated() {
                    var text = String(line)
                    _ = text.withUTF8 { (PacketTextReader.startsLikeHex($0), PacketTextReader.looksLikeHex($0)) }
                    items += reader.add(text, number: index + 1)
                }
                return items + reader.finish()
            }
            let items = read()
            for case let .packet(packet) in items {
                require(!packet.bytes.isEmpty && packet.line >= 1 && packet.line <= lines.count, "packet text: a packet in range")
            }
            require(read() == items, "packet text: reading is repeatable")
        }
    }

    private func require(_ condition: Bool, _ property: @autoclosure () -> String) {
        if !condition {
            print("fuzz property violated: \(property())")
            abort()
        }
    }
}

/// Parses a command with its typed parser and re-encodes it; `stable` says whether parsing
/// the re-encoding gives the same command.
private func reencode<C: HCICommand>(_ type: C.Type)
    -> @Sendable (HCICommandPacket) throws -> (parameters: [UInt8], stable: Bool) {
    { packet in
        let command = try C(packet: packet)
        let encoded = command.packet
        return (encoded.parameters, (try? C(packet: encoded)) == command)
    }
}

private let paddedCommands: Set<HCIOpcode> = [.leSetAdvertisingData, .leSetScanResponseData]

private let commandParsers: [HCIOpcode: @Sendable (HCICommandPacket) throws -> (parameters: [UInt8], stable: Bool)] = [
    Reset.opcode: reencode(Reset.self),
    SetEventMask.opcode: reencode(SetEventMask.self),
    ReadLocalVersionInformation.opcode: reencode(ReadLocalVersionInformation.self),
    ReadLocalSupportedCommands.opcode: reencode(ReadLocalSupportedCommands.self),
    ReadBDAddr.opcode: reencode(ReadBDAddr.self),
    LESetEventMask.opcode: reencode(LESetEventMask.self),
    LEReadLocalSupportedFeatures.opcode: reencode(LEReadLocalSupportedFeatures.self),
    LESetRandomAddress.opcode: reencode(LESetRandomAddress.self),
    LESetAdvertisingParameters.opcode: reencode(LESetAdvertisingParameters.self),
    LEReadAdvertisingPhysicalChannelTxPower.opcode: reencode(LEReadAdvertisingPhysicalChannelTxPower.self),
    LESetAdvertisingData.opcode: reencode(LESetAdvertisingData.self),
    LESetScanResponseData.opcode: reencode(LESetScanResponseData.self),
    LESetAdvertisingEnable.opcode: reencode(LESetAdvertisingEnable.self),
    LESetScanParameters.opcode: reencode(LESetScanParameters.self),
    LESetScanEnable.opcode: reencode(LESetScanEnable.self),
    LESetAdvertisingSetRandomAddress.opcode: reencode(LESetAdvertisingSetRandomAddress.self),
    LESetExtendedAdvertisingParameters.opcode: reencode(LESetExtendedAdvertisingParameters.self),
    LESetExtendedAdvertisingData.opcode: reencode(LESetExtendedAdvertisingData.self),
    LESetExtendedAdvertisingEnable.opcode: reencode(LESetExtendedAdvertisingEnable.self),
    LEReadMaximumAdvertisingDataLength.opcode: reencode(LEReadMaximumAdvertisingDataLength.self),
    LEReadNumberOfSupportedAdvertisingSets.opcode: reencode(LEReadNumberOfSupportedAdvertisingSets.self),
    LERemoveAdvertisingSet.opcode: reencode(LERemoveAdvertisingSet.self),
    LEClearAdvertisingSets.opcode: reencode(LEClearAdvertisingSets.self),
    LESetExtendedScanParameters.opcode: reencode(LESetExtendedScanParameters.self),
    LESetExtendedScanEnable.opcode: reencode(LESetExtendedScanEnable.self),
]

/// Parses a management command with its typed parser; true when re-encoding gives the same packet.
private func reencodeMgmt<C: MgmtCommand>(_ type: C.Type) -> @Sendable (MgmtPacket) throws -> Bool {
    { packet in try C(packet: packet).packet(index: packet.index) == packet }
}

private let mgmtParsers: [UInt16: @Sendable (MgmtPacket) throws -> Bool] = [
    ReadControllerIndexList.opcode.rawValue: reencodeMgmt(ReadControllerIndexList.self),
    ReadControllerInformation.opcode.rawValue: reencodeMgmt(ReadControllerInformation.self),
    SetPowered.opcode.rawValue: reencodeMgmt(SetPowered.self),
    SetLowEnergy.opcode.rawValue: reencodeMgmt(SetLowEnergy.self),
    ReadAdvertisingFeatures.opcode.rawValue: reencodeMgmt(ReadAdvertisingFeatures.self),
    AddAdvertising.opcode.rawValue: reencodeMgmt(AddAdvertising.self),
    RemoveAdvertising.opcode.rawValue: reencodeMgmt(RemoveAdvertising.self),
    AddExtendedAdvertisingParameters.opcode.rawValue: reencodeMgmt(AddExtendedAdvertisingParameters.self),
    AddExtendedAdvertisingData.opcode.rawValue: reencodeMgmt(AddExtendedAdvertisingData.self),
]

private let mgmtReturnParsers: [@Sendable (ArraySlice<UInt8>) throws -> Void] = [
    { _ = try ReadControllerIndexList.ReturnParameters(parsing: $0) },
    { _ = try ReadControllerInformation.ReturnParameters(parsing: $0) },
    { _ = try ReadAdvertisingFeatures.ReturnParameters(parsing: $0).lowestFreeInstance },
    { _ = try ReadAdvertisingFeatures.ReturnParameters(parsing: $0).highestFreeInstance(excluding: [1, 255]) },
    { _ = try AddExtendedAdvertisingParameters.ReturnParameters(parsing: $0) },
]
