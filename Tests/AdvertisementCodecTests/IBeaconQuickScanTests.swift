// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// The one-pass iBeacon scan is a shortcut for the general walk: wherever it answers, it must
/// answer what the walk does (and leave everything else to the walk).
@Suite struct IBeaconQuickScanTests {
    /// The general answer: the first iBeacon of well-formed data whose beacons all parse, and
    /// the advertised TX power level.
    func general(_ bytes: [UInt8]) -> (IBeacon, Int8?)? {
        guard let data = try? AdvertisingData(parsing: bytes), let beacons = try? Beacon.beacons(in: data) else { return nil }
        for case let .iBeacon(beacon) in beacons { return (beacon, data.txPowerLevel) }
        return nil
    }

    func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let (quick, quickPower) = IBeacon.quickScan(bytes[...]) else { return }
        let expected = general(bytes)
        #expect(expected?.0 == quick && expected?.1 == quickPower, "\(HexText.format(bytes, separator: " "))",
                sourceLocation: sourceLocation)
    }

    @Test func answersTheCommonCase() {
        #expect(IBeacon.quickScan(appleExampleAdvertisingData[...])?.0 == general(appleExampleAdvertisingData)?.0)
        let withPower = appleExampleAdvertisingData + [0x02, 0x0A, 0xF4]
        #expect(IBeacon.quickScan(withPower[...])?.txPowerLevel == -12)
        check(withPower)
    }

    @Test func agreesWithTheGeneralWalkOnEveryOneByteChange() {
        let inputs = [appleExampleAdvertisingData, appleExampleAdvertisingData + [0x02, 0x0A, 0xF4],
                      [0x02, 0x0A, 0x05] + appleExampleAdvertisingData + [0x00, 0x00]]
        var answered = 0
        for input in inputs {
            for index in input.indices {
                for value: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x0A, 0x15, 0x16, 0x19, 0x1A, 0x1B, 0x4C, 0xAA, 0xAC, 0xBE,
                                     0xFE, 0xFF, input[index] &+ 1] {
                    var changed = input
                    changed[index] = value
                    check(changed)
                    if IBeacon.quickScan(changed[...]) != nil { answered += 1 }
                }
                check(Array(input[..<index]))
            }
        }
        #expect(answered > 100, "the shortcut answers most changes to bytes it does not read as structure")
    }

    @Test func leavesOtherBeaconSignaturesToTheGeneralWalk() {
        let malformedAltBeacon: [UInt8] = [0x05, 0xFF, 0x18, 0x01, 0xBE, 0xAC]
        let malformedEddystone: [UInt8] = [0x04, 0x16, 0xAA, 0xFE, 0x10]
        for extra in [malformedAltBeacon, malformedEddystone] {
            #expect(IBeacon.quickScan((appleExampleAdvertisingData + extra)[...]) == nil)
            #expect(throws: CodecError.self) { try IBeacon(parsingAdvertisingData: (appleExampleAdvertisingData + extra)[...]) }
        }
    }
}
