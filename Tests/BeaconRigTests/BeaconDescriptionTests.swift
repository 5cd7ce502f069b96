// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// The one beacon model every way of describing a beacon fills: `--beacon KEY=VALUE,...`,
/// configuration files, scenarios and control requests (fields), and the command line's options.
@Suite struct BeaconDescriptionTests {
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    /// A beacon's own bytes, written out here from the layouts (not from the code under test).
    @Test func aSpecificationBuildsTheBeaconByteForByte() throws {
        let beacon = try BeaconDescription(specification: "uuid=\(Self.uuid),major=101,minor=2").beacon()
        #expect(HexText.format(beacon.advertisingData.bytes)
                == "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
        let url = try BeaconDescription(specification: "url=https://example.com,measured-power=-59").beacon()
        // Eddystone-URL: TX power at 0 m is -59 + 41 = -18 (0xEE); scheme 0x03 "https://", ".com" 0x07.
        #expect(HexText.format(url.advertisingData.bytes) == "0201060303AAFE0E16AAFE10EE036578616D706C6507")
    }

    /// Every format's fields build the same beacon again: what a live update starts from.
    @Test(arguments: [
        "uuid=\(uuid),major=101,minor=2,measured-power=-65",
        "type=altbeacon,uuid=\(uuid),major=1,minor=2,company-id=0x0059",
        "type=eddystone-uid,namespace=00112233445566778899,instance=AABBCCDDEEFF",
        "url=https://www.example.com/x",
        "type=eddystone-tlm,battery=3000,temperature=21.5,pdu-count=7,uptime=12.3",
        "type=eddystone-eid,identity-key=000102030405060708090A0B0C0D0E0F,rotation-exponent=15,clock=4294967295",
        "ad=0201060AFF5900B0EA0102030405,scan-response=0409414243",
        "name=Lobby sign,flags=none,manufacturer-data=0x0059:0102",
    ])
    func fieldsOfABeaconBuildItAgain(specification: String) throws {
        let beacon = try BeaconDescription(specification: specification).beacon()
        let again = try BeaconDescription(fields: BeaconDescription.fields(of: beacon)).beacon()
        #expect(again == beacon)
        #expect(again.advertisingData.bytes == beacon.advertisingData.bytes)
    }

    /// A beacon of its own extended PDUs may carry the data they hold, whichever way its keys
    /// come (`--beacon`, a crowd, the control socket's and a scenario's fields): its parameters
    /// say so, as the advertisers read them (its own `pdu` first, then the run's `--extended-pdu`,
    /// or its own Coded PHY); its data fields gain no key for it. Without them, data over 31
    /// bytes is refused, saying both ways to allow it.
    @Test func aBeaconOfItsOwnExtendedPDUsTakesTheirData() throws {
        let long = "name=x,manufacturer-data=0x0059:" + String(repeating: "AB", count: 35)
        let (beacon, parameters) = try BeaconDescription.beaconAndParameters(specification: long + ",pdu=extended")
        // Flags (02 01 06), the name (02 09 78), the manufacturer data (26 FF 59 00, 35 bytes).
        #expect(beacon.advertisingData.bytes.count == 3 + 3 + 4 + 35 && parameters.pdu == .extended)
        #expect(try BeaconDescription.beaconsAndParameters(specification: long + ",pdu=extended").count == 1)
        #expect(try BeaconDescription.beaconAndParameters(specification: long + ",phy=coded").beacon == beacon)
        let (fields, own) = try BeaconDescription.parameters(in: ["name": "x", "manufacturer-data": "0x0059:" + String(repeating: "AB", count: 35),
                                                                 "pdu": "extended"])
        #expect(fields.keys.sorted() == ["manufacturer-data", "name"])
        #expect(try BeaconDescription.beacon(fromFields: fields, parameters: own) == beacon)
        #expect {
            try BeaconDescription.beacon(fromFields: fields)
        } throws: { "\($0)".contains("at most 31 bytes; --extended-pdu, or pdu=extended for the beacon alone, allows more") }
        #expect {
            try BeaconDescription.beaconAndParameters(specification: long)
        } throws: { "\($0)".contains("at most 31 bytes; --extended-pdu, or pdu=extended for the beacon alone, allows more") }
        // The run's extended PDUs (`extended-pdu=true`) carry it, but not to a beacon of legacy PDUs of its own.
        #expect(try BeaconDescription.beaconAndParameters(specification: long + ",extended-pdu=true").beacon == beacon)
        #expect {
            try BeaconDescription.beaconAndParameters(specification: long + ",extended-pdu=true,pdu=legacy")
        } throws: { "\($0)".hasSuffix("(its pdu=legacy carries at most 31 bytes)") }
    }

    /// A file's beacons read their own PDUs the same way: a scenario's (its update steps checked
    /// with the beacon's parameters) and a configuration's, a crowd's members too.
    @Test func aFilesBeaconOfItsOwnExtendedPDUsTakesTheirData() throws {
        let data = "0x0059:" + String(repeating: "AB", count: 35)
        let parser = ScenarioParser(file: "rig.yaml")
        let scenario = try parser.parse("""
            beacons:
              long: {name: x, manufacturer-data: "\(data)", pdu: extended}
            steps:
              - advertise: long
              - update: {beacon: long, name: y}
            """)
        let long = try #require(scenario.beacon(named: "long"))
        let length: Int = 3 + 3 + 4 + 35
        #expect(long.beacon.advertisingData.bytes.count == length)
        #expect(long.fields["extended-pdu"] == nil)
        #expect {
            try parser.parse("""
                beacons:
                  long: {name: x, manufacturer-data: "\(data)", pdu: extended}
                steps:
                  - advertise: long
                  - update: {beacon: long, pdu: legacy}
                """)
        } throws: { "\($0)".contains("update of 'long'") && "\($0)".hasSuffix("(its pdu=legacy carries at most 31 bytes)") }
        let entries = try parser.beaconEntries("""
            beacons:
              - {uuid: \(Self.uuid), major: 1, minor: 1-2, manufacturer-data: "\(data)", pdu: extended}
            """)
        #expect(entries.map(\.parameters.pdu) == [.extended, .extended])
        #expect(entries.map(\.beacon.advertisingData.bytes.count) == [30 + 39, 30 + 39], "an iBeacon's 30 bytes, the data's 39")
        #expect {
            try parser.beaconEntries("beacons:\n  - {name: x, manufacturer-data: \"\(data)\"}\n")
        } throws: { "\($0)".contains("pdu=extended for the beacon alone, allows more") }
    }

    /// Keys in any spelling, and JSON's or YAML's whole numbers written with a fraction.
    @Test func keysInAnySpellingAndWholeNumbersWithAFraction() throws {
        let spellings = ["measured-power", "measuredPower", "measured_power"].map { key in
            try? BeaconDescription(fields: ["uuid": Self.uuid, "major": "1", "minor": "2.0", key: "-70"]).beacon()
        }
        #expect(spellings.allSatisfy { $0 != nil && $0 == spellings[0] })
        guard case let .iBeacon(beacon)? = spellings[0] else { Issue.record("not an iBeacon"); return }
        #expect(beacon.measuredPower == -70 && beacon.minor == 2)
    }

    @Test(arguments: [
        ("uuid=\(uuid),major=1,minor=seven", "minor must be a number from 0 to 65535, got 'seven'"),
        ("uuid=\(uuid),major=1,minor=2.5", "minor must be a whole number from 0 to 65535, got '2.5'"),
        ("uuid=\(uuid),major=1,minor=70000", "--minor must be from 0 to 65535, got 70000"),
        ("uuid=\(uuid),major=1,colour=red", "unknown key 'colour': a beacon takes type, format, uuid"),
        // Its own parameters are among the keys it takes, and the nearest key is named.
        ("uuid=\(uuid),major=1,intervall=200", "unknown key 'intervall' (did you mean 'interval'?): a beacon takes type,"),
        ("uuid=\(uuid),major=1,colour=red", "extended-pdu, interval, tx-power, address, rotate-address, phy, connectable"),
        ("type=beacon,uuid=\(uuid)", "type must be ibeacon, altbeacon, eddystone-uid, eddystone-url, eddystone-tlm, eddystone-eid"),
        ("major=1,minor=2", "missing --uuid (32 hex digits, dashes optional; or random)"),
        ("ad=0201060AFF5900B0EA0102030405,minor=2", "--ad is the whole advertising data"),
        ("type=eddystone-uid,namespace=0011,instance=AABBCCDDEEFF", "--namespace must be 10 bytes (20 hex digits), got 2 bytes"),
        ("url=https://example.com,major=3", "major does not apply to an eddystone-url beacon: it takes url, measured-power"),
        ("type=eddystone-uid,url=https://example.com", "url does not apply to an eddystone-uid beacon (it takes namespace, instance, "
         + "measured-power): it describes eddystone-url, so give type=eddystone-url with it"),
        // Telemetry states no power: a measured power given for it is a mistake, said so.
        ("type=eddystone-tlm,battery=3000,measured-power=-59",
         "measured-power does not apply to an eddystone-tlm beacon: it takes battery, temperature, pdu-count, uptime"),
        ("uuid=\(uuid),major=1,minor=2,extended-pdu=maybe", "extended-pdu must be true or false, got 'maybe'"),
        ("uuid=\(uuid),major", "expected KEY=VALUE pairs separated by commas, got 'major'"),
        // A key written in the wrong place (':' for '='): the item is named, its hex digits are not.
        ("type=eddystone-eid,identity-key:000102030405060708090A0B0C0D0E0F",
         "expected KEY=VALUE pairs separated by commas, got 'identity-key:<32 hex digits, not shown>'"),
        // A bad key is described by its length or its bad character's place, never shown.
        ("type=eddystone-eid,identity-key=0011", "--identity-key has 4 hex digits (the key was not shown): a key is 32 hex digits"),
        ("type=eddystone-eid,identity-key=00112233445566778899AABBCCDDEEFG",
         "--identity-key: character 32 is not a hex digit (the key was not shown)"),
        ("type=eddystone-eid", "missing --identity-key-file (a file holding the key, 32 hex digits, that only its owner can read)"),
        ("type=eddystone-eid,identity-key=000102030405060708090A0B0C0D0E0F,identity-key-file=k",
         "--identity-key and --identity-key-file both give the key: give one (the file)"),
        ("type=eddystone-eid,identity-key=000102030405060708090A0B0C0D0E0F,rotation-exponent=16",
         "--rotation-exponent must be from 0 to 15, got 16"),
        ("type=eddystone-eid,identity-key=000102030405060708090A0B0C0D0E0F,clock=4294967296",
         "--clock must be from 0 to 4294967295 (seconds), got 4294967296"),
        ("uuid=\(uuid),major=1,minor=2,identity-key=000102030405060708090A0B0C0D0E0F",
         "identity-key does not apply to an ibeacon beacon (it takes uuid, major, minor, measured-power): it describes "
         + "eddystone-eid, so give type=eddystone-eid (--eddystone-eid) with it"),
    ])
    func aMistakeSaysWhatIsWrong(specification: String, message: String) {
        do {
            let beacon = try BeaconDescription(specification: specification).beacon()
            Issue.record("built \(beacon)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    /// An Eddystone-EID beacon's frame for the counter given, with the identifier OpenSSL gives
    /// for it (`EddystoneEIDComputationTests`' row: K 10, counter 1,000,000), written out here.
    @Test func anEIDBeaconIsTheFrameForItsClock() throws {
        let beacon = try BeaconDescription(specification: "type=eddystone-eid,identity-key=000102030405060708090A0B0C0D0E0F,"
                                           + "clock=1000000,measured-power=-60").beacon()
        // 0x30, TX power at 0 m -60 + 41 = -19 (0xED), the 8-byte identifier.
        #expect(HexText.format(beacon.advertisingData.bytes) == "0201060303AAFE0D16AAFE30ED47E10FA56389D60E")
        #expect(BeaconDescription.fields(of: beacon)["rotationExponent"] == "10", "K is 10 unless given")
    }

    @Test func anEmptyDescriptionIsEmptyAndAnyFieldIsNot() throws {
        #expect(BeaconDescription().isEmpty)
        #expect(try !BeaconDescription(specification: "flags=06").isEmpty)
        #expect(try !BeaconDescription(specification: "minor=1").isEmpty)
    }

    /// A beacon's own parameters: read apart from its data, for `advertise`'s beacons (`--beacon`,
    /// a configuration file, a control request) as for a scenario's.
    @Test func aBeaconsOwnParametersAreReadApartFromItsData() throws {
        let (fields, parameters) = try BeaconDescription.parameters(in: ["uuid": "39ED98FF-2900-441A-802F-9C398FC199D2",
                                                                          "Interval": "152.5", "tx_power": "-20.0"])
        #expect(fields == ["uuid": "39ED98FF-2900-441A-802F-9C398FC199D2"])
        #expect(parameters == BeaconParameters(intervalUnits: 244, txPower: -20))
        #expect(try BeaconDescription.parameters(in: ["address": "Static"]).parameters.address == .generatedStaticRandom)
        #expect(try BeaconDescription.parameters(in: ["address": "c0:11:22:33:44:55"]).parameters.address
                == .random(try BluetoothAddress(parsing: "C0:11:22:33:44:55")))
        #expect(try BeaconDescription.parameters(in: ["rotateAddress": "15"]).parameters
                == BeaconParameters(address: .generatedNonResolvable, addressRotation: 15))
        #expect(try BeaconDescription.parameters(in: ["rotate-address": "60", "address": "static"]).parameters
                == BeaconParameters(address: .generatedStaticRandom, addressRotation: 60))
        #expect(try BeaconDescription.parameters(in: ["phy": "Coded", "connectable": "true"]).parameters
                == BeaconParameters(phy: .coded, connectable: true))
        #expect(try BeaconDescription.parameters(in: ["PHY": "1m", "connectable": "false"]).parameters
                == BeaconParameters(phy: .le1M, connectable: false))
        for bad in [["interval": "19"], ["interval": "fast"], ["txPower": "21"], ["txPower": "-3.5"], ["address": "nope"],
                    ["rotateAddress": "0"], ["rotateAddress": "10", "address": "C0:11:22:33:44:55"], ["phy": "2m"],
                    ["connectable": "maybe"], ["pdu": "coded"], ["pdu": "legacy", "phy": "coded"]] {
            #expect(throws: BeaconDescription.Invalid.self, "\(bad)") { try BeaconDescription.parameters(in: bad) }
        }
        #expect {
            try BeaconDescription(specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,interval=200")
        } throws: { "\($0)".contains("interval is one of a beacon's own parameters (interval, txPower, address, rotateAddress, phy, connectable, pdu, channelMap), not part of its data") }
        #expect(try BeaconDescription.parameters(in: ["pdu": "Extended"]).parameters == BeaconParameters(pdu: .extended))
        let described = try BeaconDescription.beaconAndParameters(
            specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,interval=200,major=1,tx-power=-8,minor=2")
        #expect(described.parameters == BeaconParameters(intervalUnits: 320, txPower: -8))
        #expect(described.beacon == .iBeacon(IBeacon(proximityUUID: UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!,
                                                     major: 1, minor: 2)))
        #expect(try BeaconDescription.beaconAndParameters(specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2")
                    .parameters == .run)
        #expect(try BeaconDescription.beaconAndParameters(
            specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2,rotate-address=10,address=static").parameters
            == BeaconParameters(address: .generatedStaticRandom, addressRotation: 10))
        #expect(throws: BeaconDescription.Invalid.self) {
            try BeaconDescription.beaconAndParameters(specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,interval=5")
        }
        #expect(try BeaconDescription.beaconAndParameters(
            specification: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2,phy=coded,connectable=true").parameters
            == BeaconParameters(phy: .coded, connectable: true))
    }
}
