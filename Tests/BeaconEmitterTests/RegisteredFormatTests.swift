// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import BeaconRig
import BeaconTracking
import Foundation
import Testing

/// A made-up beacon format, defined here and nowhere in the sources: manufacturer data of
/// company 0xFFFF (the ID kept for tests) with the signature AC 3E, a 2-byte identifier, a level
/// and the measured power at 1 m.
///
/// ```
/// 02 01 06 08 FF   Flags; manufacturer specific data, 8 bytes
/// FF FF AC 3E      company 0xFFFF, signature
/// II II LL PP      identifier (big-endian), level, measured power
/// ```
struct AcmeBeacon: RegisteredBeaconFormat {
    var identifier: UInt16
    var level: UInt8
    var measuredPower: Int8 = -60

    static let name = "acme"
    static let descriptionKeys = ["id", "level", "measured-power"]
    /// Its rules for `audit`: 8 bytes of manufacturer data, every 200 ms, never connectable.
    static let specification: BeaconSpecification? = BeaconSpecification(
        name: "acme", displayName: "Acme", source: "Acme beacon sheet 1", layoutWanted: "09 FF FF FF AC 3E and 4 bytes",
        connectableFails: true, interval: (ms: 200, within: 20)
    ) { structures in
        guard let maker = structures.first(where: { $0.type == .manufacturerSpecificData }) else {
            return .init(problems: ["no manufacturer specific data"])
        }
        if maker.data.count != 8 { return .init(problems: ["\(maker.data.count) bytes of manufacturer data, not 8"]) }
        return maker.data.last == 0 ? .init(warning: ("no measured power", "a measured power")) : .init()
    }

    static func decode(_ structure: ADStructure) throws(CodecError) -> AcmeBeacon? {
        let bytes = Array(structure.data)
        guard structure.type == .manufacturerSpecificData, bytes.count >= 4, bytes[0...3] == [0xFF, 0xFF, 0xAC, 0x3E] else {
            return nil
        }
        guard bytes.count == 8 else {
            throw CodecError(structure: "acme manufacturer data", offset: 0,
                             reason: .unexpectedValue(field: "length", expected: "8 bytes", found: "\(bytes.count)"))
        }
        return AcmeBeacon(identifier: UInt16(bytes[4]) << 8 | UInt16(bytes[5]), level: bytes[6],
                          measuredPower: Int8(bitPattern: bytes[7]))
    }

    init(identifier: UInt16, level: UInt8, measuredPower: Int8 = -60) {
        self.identifier = identifier
        self.level = level
        self.measuredPower = measuredPower
    }

    init(description fields: [String: String]) throws(FormatDescriptionError) {
        guard let id = fields["id"].flatMap(UInt16.init) else { throw FormatDescriptionError("id takes 0 to 65535") }
        guard let level = UInt8(fields["level"] ?? "0") else { throw FormatDescriptionError("level takes 0 to 255") }
        guard let power = Int8(fields["measured-power"] ?? "-60") else {
            throw FormatDescriptionError("measured-power takes -128 to 127")
        }
        self.init(identifier: id, level: level, measuredPower: power)
    }

    var advertisingData: AdvertisingData {
        let payload: [UInt8] = [0xFF, 0xFF, 0xAC, 0x3E, UInt8(identifier >> 8), UInt8(identifier & 0xFF), level,
                                UInt8(bitPattern: measuredPower)]
        return AdvertisingData([ADStructure(type: .flags, data: [0x06]),
                                ADStructure(type: .manufacturerSpecificData, data: payload)])
    }

    var formatName: StaticString { "acme" }
    var displayName: StaticString { "Acme" }
    var measuredPowerAt1m: Int? { Int(measuredPower) }
    var descriptionFields: [String: String] {
        ["type": "acme", "id": "\(identifier)", "level": "\(level)", "measured-power": "\(measuredPower)"]
    }

    func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.identifier("id", .integer(Int(identifier)))
        writer.integer("level", level)
        writer.integer("measuredPower", measuredPower, unit: "dBm")
    }
}

/// The bytes an Acme beacon `id=7, level=3` sends, written out by hand from the layout above.
let acmeData: [UInt8] = [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFF, 0xFF, 0xAC, 0x3E, 0x00, 0x07, 0x03, 0xC4]

/// A format registered in one line, with no source file edited: decoded, built from a
/// description, printed, tracked and audited (and advertised and heard on the virtual radio:
/// `RegisteredFormatRootcanalTests`).
@Suite struct RegisteredFormatTests {
    init() throws { try BeaconFormats.register(AcmeBeacon.self) }

    @Test func itIsDecodedFromAdvertisingData() throws {
        let beacons = try Beacon.beacons(in: AdvertisingData(parsing: acmeData))
        #expect(beacons == [.registered(RegisteredBeacon(AcmeBeacon(identifier: 7, level: 3)))])
        // Its signature with a wrong layout is an error at its place, as the codec's own formats'.
        let short = Array(acmeData.prefix(3)) + [0x08, 0xFF, 0xFF, 0xFF, 0xAC, 0x3E, 0x00, 0x07, 0x03]
        #expect(throws: CodecError.self) { try Beacon.beacons(in: AdvertisingData(parsing: short)) }
        // The codec's own formats still come first: an iBeacon is an iBeacon.
        let iBeacon = try Beacon.beacons(in: AdvertisingData(parsing: referenceAdvertisingData))
        guard case .iBeacon? = iBeacon.first else { Issue.record("\(iBeacon)"); return }
    }

    @Test func aDescriptionBuildsItAndItIsEncodedByteForByte() throws {
        let beacon = try BeaconDescription(specification: "type=acme,id=7,level=3,measured-power=-60").beacon()
        #expect(beacon.advertisingData.bytes == acmeData)
        // From its own fields again (what a live update starts from), and refused with what it takes.
        #expect(try BeaconDescription(fields: BeaconDescription.fields(of: beacon)).beacon() == beacon)
        #expect(throws: BeaconDescription.Invalid.self) { try BeaconDescription(specification: "type=acme,level=3").beacon() }
        do {
            _ = try BeaconDescription(specification: "type=acme,id=7,namespace=00112233445566778899").beacon()
            Issue.record("a key of another format was taken")
        } catch {
            #expect(error.message.contains("namespace does not apply to an acme beacon"), "\(error)")
        }
        do {
            _ = try BeaconDescription(specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2,level=3").beacon()
            Issue.record("its key was taken by an iBeacon")
        } catch {
            #expect(error.message.contains("it describes acme, so give type=acme with it"), "\(error)")
        }
        do {
            _ = try BeaconDescription(specification: "type=acmee,id=7").beacon()
            Issue.record("an unknown type was taken")
        } catch {
            #expect(error.message.contains(", acme (or give url="), "the message lists it: \(error)")
        }
    }

    @Test func itIsPrintedAsItsFormatWritesIt() throws {
        let sighting = BeaconSighting(beacon: try Beacon.beacons(in: AdvertisingData(parsing: acmeData))[0],
                                      address: try BluetoothAddress(parsing: "DA:4C:10:DE:17:01"), addressType: .randomDevice, rssi: -61)
        #expect(SightingFormatter.text(sighting).hasPrefix("Acme id=7 level=3 measuredPower=-60dBm"), "\(SightingFormatter.text(sighting))")
        let json = SightingFormatter.json(sighting)
        #expect(json.contains(#""type":"acme""#) && json.contains(#""id":7"#) && json.contains(#""level":3"#), "\(json)")
        #expect(sighting.beacon.format.identity == "acme id=7")
        #expect(sighting.beacon.measuredPower == -60)
    }

    @Test func theTrackerKeepsItByItsIdentifiers() throws {
        var tracker = BeaconTracker()
        for (index, address) in ["DA:4C:10:DE:17:01", "DA:4C:10:DE:17:02"].enumerated() {
            for level: UInt8 in [3, 4] {
                let beacon = Beacon.registered(RegisteredBeacon(AcmeBeacon(identifier: 7, level: level)))
                _ = tracker.observe(BeaconSighting(beacon: beacon, address: try BluetoothAddress(parsing: address),
                                                   addressType: .randomDevice, rssi: -60), at: Double(index))
            }
        }
        let other = Beacon.registered(RegisteredBeacon(AcmeBeacon(identifier: 8, level: 3)))
        _ = tracker.observe(BeaconSighting(beacon: other, address: nil, addressType: nil, rssi: -70), at: 2)
        // One beacon per identifier, whatever its level and sender: id 7 and id 8.
        #expect(tracker.entries.count == 2, "\(tracker.entries.keys)")
        #expect(tracker.entries[.fields("acme", [.integer(7)])]?.reports == 4)
        // A region asks its format for identifiers: it declares none, so only "any" matches it.
        #expect(BeaconRegion(uuid: nil).matches(other))
        #expect(!BeaconRegion(uuid: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")).matches(other))
    }

    @Test func anAuditHoldsItToItsOwnRules() throws {
        func audit(_ data: [UInt8], every seconds: Double, kind: AdvertisingPDUKind = .legacy) throws -> AuditResult {
            var audit = AdvertiserAudit()
            let address = try BluetoothAddress(parsing: "DA:4C:10:DE:17:01")
            for index in 0..<40 {
                audit.add(ScanReport(address: address, addressType: .randomDevice, rssi: -60, data: data, kind: kind),
                          at: Double(index) * seconds)
            }
            return audit.result()
        }
        func verdicts(_ result: AuditResult) -> [String: AuditRule.Verdict] {
            Dictionary(uniqueKeysWithValues: result.rules.map { ($0.name, $0.verdict) })
        }
        let proper = try audit(acmeData, every: 0.2)
        #expect(proper.beacon == .registered(RegisteredBeacon(AcmeBeacon(identifier: 7, level: 3))))
        #expect(proper.profile?.name == "acme" && proper.reports == 40)
        #expect(verdicts(proper).values.allSatisfy { $0 == .pass }, "\(proper.rules)")
        // Its interval (200 ms), its connectable rule (a failure, as it states) and its layout's warning.
        #expect(verdicts(try audit(acmeData, every: 0.1))["interval"] == .fail)
        #expect(verdicts(try audit(acmeData, every: 0.2, kind: [.legacy, .connectable]))["non-connectable"] == .fail)
        let silent = try audit(Array(acmeData.dropLast()) + [0], every: 0.2)
        #expect(verdicts(silent)["layout"] == .warn && silent.rules.contains { $0.seen == "no measured power" })
        // `--profile acme` and `--list-rules` find it among the codec's own.
        #expect(AuditProfile(named: "ACME")?.source == "Acme beacon sheet 1")
        #expect(AuditRuleInfo.all.first { $0.name == "interval" }?.checks.contains("Acme 200 ms within 20 ms") == true)
        #expect(AuditRuleInfo.all.first { $0.name == "non-connectable" }?.verdicts.contains("a connectable iBeacon, Acme") == true)
    }

    @Test func scanShowsItByItsName() throws {
        let filter = try #require(ScanFilter.Format(named: "acme"))
        #expect(filter.shows("acme") && !filter.shows("ibeacon") && ScanFilter.Format.choices.contains("acme"))
        #expect(ScanFilter.Format(named: "acm") == nil)
        // A family is every name before a dash: "eddystone" shows each frame, and only those.
        let family = try #require(ScanFilter.Format(named: "eddystone"))
        #expect(family.shows("eddystone-uid") && family.shows("eddystone-eid") && !family.shows("acme"))
    }

    @Test func aNameIsRegisteredOnce() throws {
        struct Impostor: RegisteredBeaconFormat {
            static let name = "acme"
            static let descriptionKeys: [String] = []
            static func decode(_ structure: ADStructure) throws(CodecError) -> Impostor? { nil }
            init(description fields: [String: String]) throws(FormatDescriptionError) {}
            var advertisingData: AdvertisingData { AdvertisingData() }
            var formatName: StaticString { "acme" }
            var displayName: StaticString { "Acme" }
            var measuredPowerAt1m: Int? { nil }
            var descriptionFields: [String: String] { [:] }
            func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {}
        }
        #expect(throws: BeaconFormats.RegistrationError.self) { try BeaconFormats.register(Impostor.self) }
        try BeaconFormats.register(AcmeBeacon.self)  // the same type again: nothing changes
        #expect(BeaconFormats.registered.map(\.name).filter { $0 == "acme" }.count == 1)
    }
}

extension Rig {
/// The made-up format on the virtual radio: advertised through the library, heard by a second
/// device and decoded there as itself.
@Suite struct RegisteredFormatRootcanalTests {
    let port = rigPort ?? 0

    @Test func itIsAdvertisedAndHeard() async throws {
        try BeaconFormats.register(AcmeBeacon.self)
        let beacon = try BeaconDescription(specification: "type=acme,id=7,level=3").beacon()
        let configuration = BeaconAdvertisement.Configuration(device: .tcp(host: "127.0.0.1", port: port),
                                                              options: AdvertisingOptions(beacons: [beacon]))
        let scanner = try TestScanner(port: port)
        let broadcast = try await BeaconBroadcast.start(configuration)
        let heard = try scanner.collect(timeout: .seconds(5)) { reports in reports.filter { $0.data == acmeData }.count >= 10 }
        try await broadcast.stop()
        let acme = heard.filter { $0.data == acmeData }
        #expect(acme.count >= 10, "\(heard.map { HexText.format($0.data) })")
        var audit = AdvertiserAudit()
        var tracker = BeaconTracker()
        for (index, report) in acme.enumerated() {
            audit.add(report, at: Double(index))
            for sighting in try report.sightings() { _ = tracker.observe(sighting, at: Double(index)) }
        }
        #expect(audit.result().beacon == beacon)
        #expect(tracker.entries.count == 1 && tracker.entries.first?.value.sighting.beacon == beacon)
    }
}
}
