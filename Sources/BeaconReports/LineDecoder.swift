// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes inputs one at a time, collecting beacons and failures in buffers of its own for
/// `LineDecoders` to write; a line's bytes, its packet and its output reuse the same storage.
struct LineDecoder: ~Copyable {
    let json: Bool
    private(set) var attempted = 0
    private(set) var failed = 0
    private(set) var found = 0
    /// Bytes of the line being decoded: only ever grows, the packet is a prefix of it.
    private var packet: [UInt8] = []
    var output = ByteBuffer(capacity: 1 << 16)
    var errors = ByteBuffer(capacity: 1 << 12)

    init(json: Bool) {
        self.json = json
    }

    /// Set by a worker that met a line that is not hex (its chunk is read again in order).
    var stopped = false
    /// `--expect`: every beacon is checked, named by the input it came from.
    var expectation: Expectation?
    /// Prints advertising data without a beacon (nil: it is an error).
    var advertisements: AdvertisementFormatter?
    /// An app's layouts (`decode --layout`), by name: every advertising data is read with them
    /// too, and the first that reads it is printed beside the built-in beacons.
    var layouts: [(name: String, layout: BeaconLayout)] = []
    /// Beacons written since the last advertising data was handed over (with layouts, each is
    /// handed over after its beacons).
    private var beaconsInData = 0
    private var place: (label: StaticString, number: Int) = ("line", 0)
    /// The beacons of the input being decoded, checked once all of it decoded (a failed
    /// input prints nothing, and is not checked either).
    private var unchecked: [BeaconSighting] = []

    private mutating func checkDecoded(_ succeeded: Bool) {
        guard let expectation, !unchecked.isEmpty else { return }
        if succeeded {
            for sighting in unchecked { expectation.check(sighting, place: "\(place.label) \(place.number)") }
        }
        unchecked.removeAll(keepingCapacity: true)
    }

    /// Where the buffers and counts stand, to go back to.
    struct Mark {
        var output: Int, errors: Int, attempted: Int, failed: Int, found: Int
    }

    var mark: Mark { Mark(output: output.count, errors: errors.count, attempted: attempted, failed: failed, found: found) }

    /// Forgets what was decoded since `mark`.
    mutating func rewind(to mark: Mark) {
        stopped = false
        output.removeLast(from: mark.output)
        errors.removeLast(from: mark.errors)
        attempted = mark.attempted
        failed = mark.failed
        found = mark.found
    }

    /// Decodes one line of hex (UTF-8); `label` and `number` ("line 12") name it in an error message.
    /// - Parameter onlyHex: a line that is not hex is left alone (for the text reader): false.
    @discardableResult
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, label: StaticString, number: Int,
                         onlyHex: Bool = false) -> Bool {
        guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
              line[first] != UInt8(ascii: "#") else { return true }
        let room = HexText.mostBytes(inUTF8Count: line.count)
        if packet.count < room { packet += repeatElement(0, count: room - packet.count) }
        let length: Int
        do throws(CodecError) {
            length = try packet.withUnsafeMutableBufferPointer { bytes throws(CodecError) in
                try HexText.parse(utf8: line, into: UnsafeMutableBufferPointer(rebasing: bytes[..<room]))
            }
        } catch {
            if onlyHex { return false }
            attempted += 1
            report(error, label: label, number: number)
            return true
        }
        attempted += 1
        place = (label, number)
        let mark = output.count
        do throws(CodecError) {
            let summary = try decode(packet[..<length])
            try summary.requireBeacons()
            found += summary.beaconCount
            checkDecoded(true)
        } catch {
            output.removeLast(from: mark)  // nothing printed for a line that failed part way
            checkDecoded(false)
            report(error, label: label, number: number)
        }
        return true
    }

    private mutating func report(_ error: CodecError, label: StaticString, number: Int) {
        failed += 1
        errors.append("beacon-emit: ")
        errors.append(label)
        errors.append(UInt8(ascii: " "))
        errors.appendDecimal(number)
        errors.append(": ")
        errors.append(utf8: error.description)
        errors.append(UInt8(ascii: "\n"))
    }

    /// Decodes a packet read from another tool's text. A packet of hcidump's that carries no
    /// advertising data (a command, its answer) is passed over: returns false.
    mutating func decode(packet: PacketTextReader.Packet, label: StaticString) -> Bool {
        let mark = output.count
        place = (label, packet.line)
        if let warning = packet.warning { warn(warning) }
        if packet.spelling == .hcitool, let command = try? HCICommandPacket(parsing: packet.bytes.dropFirst()),
           !PacketDecoder.dataCommands.contains(command.opcode) {
            write(setting: command, line: packet.line)
            attempted += 1
            return true
        }
        do throws(CodecError) {
            let summary: PacketSummary
            if packet.spelling == .hcitool, let command = try? HCICommandPacket(parsing: packet.bytes.dropFirst()) {
                // Offsets from the first parameter byte, as `--hcitool-file` counts them.
                summary = try decode(command)
            } else {
                summary = try decode(packet.bytes[...])
            }
            if packet.spelling == .hcidump && summary.beaconCount == 0 && summary.otherCount == 0 { return false }
            try summary.requireBeacons()
            found += summary.beaconCount
            checkDecoded(true)
        } catch {
            output.removeLast(from: mark)
            checkDecoded(false)
            if packet.spelling == .hcidump, case .unrecognized = error.reason, error.offset == 0 { return false }
            fail("\(label) \(packet.line) (\(packet.spelling.rawValue)): \(error)")
        }
        attempted += 1
        return true
    }

    /// Decodes one packet, writing its beacons, and its advertising data without a beacon where
    /// `advertisements` is set.
    /// - Throws: `CodecError` when it does not decode.
    private mutating func decode(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> PacketSummary {
        if !layouts.isEmpty {
            beaconsInData = 0
            return try PacketDecoder.decode(bytes, each: { write($0); beaconsInData += 1 }, always: true,
                                            others: { writeEach($0) })
        }
        guard advertisements != nil else { return try PacketDecoder.decode(bytes) { write($0) } }
        return try PacketDecoder.decode(bytes, each: { write($0) }, others: { write($0) })
    }

    /// One advertising data, with layouts: the first layout's beacon in it, then (where it held
    /// neither a beacon nor a layout's) the data itself.
    private mutating func writeEach(_ sighting: AdvertisementSighting) {
        defer { beaconsInData = 0 }
        if write(layout: LayoutBeacon.first(of: layouts, in: sighting.data)?.beacon, address: sighting.address,
                 addressType: sighting.addressType, rssi: sighting.rssi) {
            return
        }
        if beaconsInData == 0 { write(sighting) }
    }

    /// Decodes one data command's parameters (an `hcitool cmd` line's), offsets from its first parameter byte.
    private mutating func decode(_ command: HCICommandPacket) throws(CodecError) -> PacketSummary {
        let structure = command.opcode.name ?? command.opcode.description
        do {
            if !layouts.isEmpty {
                beaconsInData = 0
                return try PacketDecoder.decode(parameters: command.parameters, of: command.opcode,
                                                each: { write($0); beaconsInData += 1 }, always: true, others: { writeEach($0) })
            }
            guard advertisements != nil else {
                return try PacketDecoder.decode(parameters: command.parameters, of: command.opcode) { write($0) }
            }
            return try PacketDecoder.decode(parameters: command.parameters, of: command.opcode, each: { write($0) },
                                            others: { write($0) })
        } catch {
            throw CodecError(structure: "\(structure): \(error.structure)", offset: error.offset, reason: error.reason)
        }
    }

    /// Writes the beacons of a capture's report (numbered from 1 in the capture).
    mutating func decode(sightings: ArraySlice<BeaconSighting>, report: Int) {
        attempted += 1
        place = ("report", report)
        for sighting in sightings { write(sighting) }
        found += sightings.count
        checkDecoded(true)
    }

    /// A capture's report read with the app's layouts: the first layout's beacon in its data,
    /// written; false where none reads it (or there are no layouts).
    mutating func decodeLayouts(in data: ArraySlice<UInt8>, address: BluetoothAddress, addressType: AddressType,
                                rssi: Int8?) -> Bool {
        write(layout: LayoutBeacon.first(of: layouts, inData: data), address: address, addressType: addressType, rssi: rssi)
    }

    /// A layout's beacon found in a report's data, written and counted; false for none.
    private mutating func write(layout beacon: Beacon?, address: BluetoothAddress?, addressType: AddressType?,
                                rssi: Int8?) -> Bool {
        guard let beacon else { return false }
        write(layout: BeaconSighting(beacon: beacon, address: address, addressType: addressType, rssi: rssi))
        found += 1
        return true
    }

    /// Reports what was taken though it is not as the standard writes it; not a failure.
    mutating func warn(_ message: String) {
        errors.append("beacon-emit: warning: ")
        errors.append(utf8: message)
        errors.append(UInt8(ascii: "\n"))
    }

    /// Reports a failure already put into words; `counting` an input of its own.
    /// A failure: counted, and said unless `message` is nil (said already, for a line before).
    mutating func fail(_ message: String?, counting: Bool = false) {
        if counting { attempted += 1 }
        failed += 1
        guard let message else { return }
        errors.append("beacon-emit: ")
        errors.append(utf8: message)
        errors.append(UInt8(ascii: "\n"))
    }

    /// What an `hcitool cmd` line that sets no data sets (`HcitoolText.setting(of:)`): a line of
    /// its own, not a beacon (and not checked by `--expect`).
    private mutating func write(setting command: HCICommandPacket, line: Int) {
        let text = HcitoolText.setting(of: command)
        if json {
            var object = JSONObject(continuing: &output)
            object.add("type", "command")
            object.add("line", line)
            object.add("command", command.opcode.name ?? command.opcode.description)
            object.add("setting", text)
            object.finish(into: &output)
        } else {
            output.append(utf8: "hcitool line \(line): \(text)")
        }
        output.append(UInt8(ascii: "\n"))
    }

    private mutating func write(_ sighting: AdvertisementSighting) {
        guard let advertisements else { return }
        if json {
            var object = JSONObject(continuing: &output)
            advertisements.add(sighting, to: &object)
            object.finish(into: &output)
        } else {
            output.append(utf8: advertisements.text(sighting))
        }
        output.append(UInt8(ascii: "\n"))
    }

    /// A layout's beacon: printed as any beacon is, never checked by `--expect` (which names
    /// the built-in formats' keys).
    private mutating func write(layout sighting: BeaconSighting) {
        if json {
            var object = JSONObject(continuing: &output)
            SightingFormatter.add(sighting, to: &object)
            object.finish(into: &output)
        } else {
            output.append(utf8: SightingFormatter.text(sighting))
        }
        output.append(UInt8(ascii: "\n"))
    }

    private mutating func write(_ sighting: BeaconSighting) {
        if expectation != nil { unchecked.append(sighting) }
        if json {
            var object = JSONObject(continuing: &output)
            SightingFormatter.add(sighting, to: &object)
            object.finish(into: &output)
            output.append(UInt8(ascii: "\n"))
        } else {
            output.append(utf8: SightingFormatter.text(sighting))
            output.append(UInt8(ascii: "\n"))
        }
    }
}
