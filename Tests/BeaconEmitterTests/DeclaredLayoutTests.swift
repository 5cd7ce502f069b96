// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import BeaconRig
import BeaconTracking
import Foundation
import Testing

/// A layout declared at run time (`BeaconFormats.register(layout:named:)`, what a file's
/// `layouts:` and `--layout NAME=LAYOUT` do) is a format like the codec's own: a description
/// names it, the printers write it, the tracker keeps it, an audit measures it, and its fields
/// build it again. The bytes are computed here by hand from the layout's terms.
@Suite struct DeclaredLayoutTests {
    /// A name of this suite's own: the registry is the process's, and other suites declare theirs.
    static let name = "declared-acme"
    static let text = "m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12"
    /// Flags; manufacturer data of 0xFFFF (FF FF), the match 7A, id1 01020304, id2 258 little
    /// endian (02 01), power -70 (BA), data 4660 little endian (34 12) and 5.
    static let bytes: [UInt8] = [0x02, 0x01, 0x06, 0x0E, 0xFF, 0xFF, 0xFF, 0x7A, 0x01, 0x02, 0x03, 0x04, 0x02, 0x01, 0xBA,
                                 0x34, 0x12, 0x05]

    init() throws { try BeaconFormats.register(layout: try BeaconLayout(parsing: Self.text), named: Self.name) }

    @Test func aDescriptionNamesItAndItsFieldsBuildItAgain() throws {
        let beacon = try BeaconDescription(specification: "layout=\(Self.name),ids=0x01020304 258,data=4660 5,measured-power=-70")
            .beacon()
        #expect(beacon.advertisingData.bytes == Self.bytes, "\(HexText.format(beacon.advertisingData.bytes))")
        // The registry lists it beside the codec's own, and an undeclared name is refused naming the declared ones.
        #expect(BeaconFormats.layoutNames.contains(Self.name) && BeaconFormats.ownNames.contains("layout"))
        do {
            _ = try BeaconDescription(specification: "layout=undeclared-one,ids=1 2,data=1 2,measured-power=-70").beacon()
            Issue.record("an undeclared layout was taken")
        } catch {
            #expect(error.message.contains("no layout is declared as 'undeclared-one'") && error.message.contains(Self.name),
                    "\(error)")
        }
        // What a live update and a box start from: its fields, which name the layout with its text.
        let fields = beacon.format.descriptionFields
        #expect(fields["layout"] == "\(Self.name)=\(Self.text)" && fields["ids"] == "0x01020304 258", "\(fields)")
        #expect(try BeaconDescription(fields: fields).beacon() == beacon)
        // The library's reading of the bytes sent: the identifiers, data and power given.
        let reading = try #require(BeaconLayout(parsing: Self.text).reading(AdvertisingData(parsing: Self.bytes)))
        #expect(reading.identifiers == [[1, 2, 3, 4], [0x01, 0x02]] && reading.data == [4660, 5] && reading.measuredPower == -70)
    }

    @Test func thePrintersWriteItUnderItsName() throws {
        let layout = try BeaconLayout(parsing: Self.text)
        let heard = try #require(LayoutBeacon(name: Self.name, layout: layout, heard: try AdvertisingData(parsing: Self.bytes)))
        let sighting = BeaconSighting(beacon: .registered(RegisteredBeacon(heard)), address: try BluetoothAddress(parsing: "DA:4C:10:DE:17:01"),
                                      addressType: .randomDevice, rssi: -61)
        #expect(SightingFormatter.text(sighting) == "layout \(Self.name): ids=0x01020304,258 dataFields=4660,5 measuredPower=-70dBm "
                + "company=0xFFFF address=DA:4C:10:DE:17:01 (random) rssi=-61dBm", "\(SightingFormatter.text(sighting))")
        #expect(SightingFormatter.json(sighting) == #"{"type":"layout","layout":"declared-acme","ids":["0x01020304","258"],"#
                + #""dataFields":[4660,5],"measuredPower":-70,"companyId":"0xFFFF","address":"DA:4C:10:DE:17:01","#
                + #""addressType":"random","rssi":-61}"#, "\(SightingFormatter.json(sighting))")
        #expect(sighting.beacon.format.identity == "layout layout=\(Self.name) ids=0x01020304,258")
        #expect(sighting.beacon.measuredPower == -70)
    }

    @Test func theTrackerKeepsItByItsLayoutAndIdentifiers() throws {
        let layout = try BeaconLayout(parsing: Self.text)
        var tracker = BeaconTracker()
        func beacon(_ id: String, power: Int, name: String = Self.name) throws -> Beacon {
            .registered(RegisteredBeacon(try LayoutBeacon(name: name, layout: layout, identifiers: [id, "258"], data: ["1", "2"],
                                                          measuredPower: power)))
        }
        for (index, address) in ["DA:4C:10:DE:17:01", "DA:4C:10:DE:17:02"].enumerated() {
            _ = tracker.observe(BeaconSighting(beacon: try beacon("0x01020304", power: -70), address: try BluetoothAddress(parsing: address),
                                               addressType: .randomDevice, rssi: -60), at: Double(index))
        }
        _ = tracker.observe(BeaconSighting(beacon: try beacon("0x01020305", power: -70), address: nil, addressType: nil, rssi: -60), at: 2)
        // The same identifiers under another layout's name are another beacon.
        _ = tracker.observe(BeaconSighting(beacon: try beacon("0x01020304", power: -70, name: "other"), address: nil, addressType: nil,
                                           rssi: -60), at: 3)
        #expect(tracker.entries.count == 3, "\(tracker.entries.keys)")
        #expect(tracker.entries[.fields("layout", [.text(Self.name), .strings(["0x01020304", "258"])])]?.reports == 2)
    }

    @Test func anAuditMeasuresItsAdvertiser() throws {
        var audit = AdvertiserAudit()
        let address = try BluetoothAddress(parsing: "DA:4C:10:DE:17:01")
        for index in 0..<40 {
            audit.add(ScanReport(address: address, addressType: .randomDevice, rssi: -60, data: Self.bytes, kind: .legacy),
                      at: Double(index) * 0.1)
        }
        let region = try BeaconLayout.Region(name: Self.name, layout: BeaconLayout(parsing: Self.text), identifiers: ["0x01020304"])
        #expect(AuditChoice(layout: region).chooses(try AdvertisingData(parsing: Self.bytes)))
        let result = audit.result()
        #expect(result.reports == 40 && result.profile == nil, "\(result)")
    }
}
