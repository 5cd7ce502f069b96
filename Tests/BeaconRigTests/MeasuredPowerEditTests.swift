// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// `calibrate --write`: the measured power put into the matching entry of a configuration
/// file, changed where it stands or added, the rest of the text untouched.
@Suite struct MeasuredPowerEditTests {
    @Sendable static func beacon(_ fields: [String: String], _: BeaconParameters) throws -> Beacon {
        struct Refused: Error {}
        guard let uuid = fields["uuid"].flatMap(UUID.init(uuidString:)), let major = fields["major"].flatMap(UInt16.init),
              let minor = fields["minor"].flatMap(UInt16.init) else { throw Refused() }
        let power = (fields["measured-power"] ?? fields["measuredPower"]).flatMap(Int8.init) ?? -59
        return .iBeacon(IBeacon(proximityUUID: uuid, major: major, minor: minor, measuredPower: power))
    }

    let parser = ScenarioParser(file: "lab.yaml", makeBeacon: MeasuredPowerEditTests.beacon)

    func minor(_ wanted: UInt16) -> (Beacon) -> Bool {
        { if case let .iBeacon(b) = $0 { b.minor == wanted } else { false } }
    }

    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"

    @Test func aBlockEntryGetsALineUnderItsKeys() throws {
        let text = "# lab\nbeacons:\n  - uuid: \(Self.uuid)  # lobby\n    major: 1\n    minor: 2\n  - {uuid: \(Self.uuid), major: 1, minor: 3}\n"
        let edited = try parser.settingMeasuredPower(-61, in: text, where: minor(2))
        #expect(edited == "# lab\nbeacons:\n  - uuid: \(Self.uuid)  # lobby\n    major: 1\n    minor: 2\n    measured-power: -61\n"
                + "  - {uuid: \(Self.uuid), major: 1, minor: 3}\n")
    }

    /// A file with CRLF line breaks keeps them, the new line too.
    @Test func crlfLineBreaksAreKept() throws {
        let text = "beacons:\r\n  - uuid: \(Self.uuid)\r\n    major: 1\r\n    minor: 2\r\n"
        #expect(try parser.settingMeasuredPower(-61, in: text, where: minor(2))
                == "beacons:\r\n  - uuid: \(Self.uuid)\r\n    major: 1\r\n    minor: 2\r\n    measured-power: -61\r\n")
    }

    @Test func aFlowEntryGetsTheKeyBeforeItsBrace() throws {
        let text = "beacons:\n  - {uuid: \(Self.uuid), major: 1, minor: 3}  # hall\n"
        #expect(try parser.settingMeasuredPower(-58, in: text, where: minor(3))
                == "beacons:\n  - {uuid: \(Self.uuid), major: 1, minor: 3, measured-power: -58}  # hall\n")
    }

    @Test func jsonKeepsItsQuotedKeys() throws {
        let text = #"{"beacons": [{"uuid": "\#(Self.uuid)", "major": 1, "minor": 5}]}"#
        #expect(try parser.settingMeasuredPower(-70, in: text, where: minor(5))
                == #"{"beacons": [{"uuid": "\#(Self.uuid)", "major": 1, "minor": 5, "measuredPower": -70}]}"#)
    }

    @Test func anExistingValueIsReplacedWhereItStands() throws {
        let text = "beacons:\n  - uuid: \(Self.uuid)\n    major: 1\n    minor: 4\n    measured-power: -70  # old\n    # end\n"
        #expect(try parser.settingMeasuredPower(-59, in: text, where: minor(4))
                == "beacons:\n  - uuid: \(Self.uuid)\n    major: 1\n    minor: 4\n    measured-power: -59  # old\n    # end\n")
        let flow = "beacons: [{uuid: \(Self.uuid), major: 1, minor: 4, measuredPower: -7}]"
        #expect(try parser.settingMeasuredPower(-100, in: flow, where: minor(4))
                == "beacons: [{uuid: \(Self.uuid), major: 1, minor: 4, measuredPower: -100}]")
    }

    @Test func noMatchingEntryIsAnErrorAtTheList() {
        #expect {
            try parser.settingMeasuredPower(-59, in: "beacons:\n  - {uuid: \(Self.uuid), major: 1, minor: 2}\n", where: minor(9))
        } throws: { error in
            "\(error)".hasPrefix("lab.yaml:2:3: no entry describes this beacon")
        }
    }
}
