// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `encode --layout` and `decode --layout`: an app's own beacon as the android-beacon-library
/// writes its layout, in bytes computed by hand from the grammar, read back as given; each
/// refusal a usage error naming the term or option.
@Suite struct LayoutCommandTests {
    static let acme = "m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12"
    /// Flags; manufacturer data of 0xFFFF; 7A; 01020304; 258 little endian; -70; 0x1234 little endian; 5.
    static let acmeBytes = "0201060EFFFFFF7A010203040201BA341205"
    static let eddystoneUID = "s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19"

    @Test func encodeWritesTheLayoutsBytes() throws {
        let acme = try runBeaconEmit(["encode", "--layout", Self.acme, "--id", "0x01020304", "--id", "258",
                                      "--data", "0x1234", "--data", "5", "--measured-power", "-70"])
        #expect(acme.status == 0 && acme.stdout == Self.acmeBytes + "\n", "\(acme.stdout)\(acme.stderr)")
        // The library's Eddystone-UID layout: the power byte -59 less the correction -41, -18 (EE),
        // which the built-in decoder reads as Eddystone-UID's 0 m figure.
        let uid = try runBeaconEmit(["encode", "--layout", Self.eddystoneUID, "--id", "0x00112233445566778899",
                                     "--id", "0xaabbccddeeff", "--measured-power", "-59"])
        #expect(uid.stdout == "0201060303AAFE1516AAFE00EE00112233445566778899AABBCCDDEEFF\n", "\(uid.stdout)\(uid.stderr)")
        let decoded = try runBeaconEmit(["decode", uid.stdout.trimmingCharacters(in: .newlines)])
        #expect(decoded.stdout.contains("Eddystone-UID namespace=00112233445566778899 instance=AABBCCDDEEFF txPowerAt0m=-18dBm"),
                "\(decoded.stdout)")
    }

    @Test func decodeReadsWithTheLayoutBesideTheBuiltIns() throws {
        let text = try runBeaconEmit(["decode", "--layout", "acme=" + Self.acme, Self.acmeBytes])
        #expect(text.status == 0 && text.stdout == "layout acme: ids=0x01020304,258 dataFields=4660,5 measuredPower=-70dBm company=0xFFFF\n",
                "\(text.stdout)\(text.stderr)")
        let json = try runBeaconEmit(["decode", "--json", "--layout", "acme=" + Self.acme, Self.acmeBytes])
        #expect(json.stdout == #"{"type":"layout","layout":"acme","ids":["0x01020304","258"],"dataFields":[4660,5],"measuredPower":-70,"#
                + #""companyId":"0xFFFF"}"# + "\n", "\(json.stdout)")
        // AltBeacon's library layout: the built-in AltBeacon, and the layout's reading beside it;
        // the first layout that reads it wins.
        let altBeacon = "0201061BFF1801BEAC2F234454CF6D4A0FADF2F4911BA9FFA600010002C57E"
        let both = try runBeaconEmit(["decode", "--layout", "theirs=m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25",
                                      "--layout", "mine=m:2-3=beac,i:4-19,p:24-24", altBeacon])
        #expect(both.stdout == "AltBeacon company=0x0118 id1=2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6 id2=1 id3=2 measuredPower=-59dBm "
                + "reserved=126\nlayout theirs: ids=2f234454-cf6d-4a0f-adf2-f4911ba9ffa6,1,2 dataFields=126 measuredPower=-59dBm "
                + "company=0x0118\n", "\(both.stdout)")
        // Data no layout reads is printed as before.
        let other = try runBeaconEmit(["decode", "--layout", Self.acme, "0201060EFFFFFF7B010203040201BA341205"])
        #expect(!other.stdout.contains("layout") && other.status == 0, "\(other.stdout)\(other.stderr)")
    }

    /// A capture replayed through the library's iBeacon layout: after each iBeacon line, the
    /// layout's line for the same report (the reference beacon's UUID, 101, 2, -59 dBm), in text
    /// and JSON, as a live scan prints them.
    @Test func scanReplayReadsACaptureWithTheLayout() throws {
        let capture = "Tests/BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop"
        let layout = "apple=m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24"
        let text = try runBeaconEmit(["scan", "--replay", Readme.root.appendingPathComponent(capture).path, "--layout", layout])
        let lines = text.stdoutLines
        #expect(text.status == 0 && !lines.isEmpty, "\(text.stdout)\(text.stderr)")
        let ours = lines.indices.filter { lines[$0].contains("iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2") }
        #expect(!ours.isEmpty, "\(text.stdout)")
        for index in ours {
            #expect(index + 1 < lines.count && lines[index + 1].contains(
                " layout apple: ids=39ed98ff-2900-441a-802f-9c398fc199d2,101,2 measuredPower=-59dBm company=0x004C"),
                "after \(lines[index]): \(index + 1 < lines.count ? lines[index + 1] : "nothing")")
        }
        let json = try runBeaconEmit(["scan", "--json", "--replay", Readme.root.appendingPathComponent(capture).path, "--layout", layout])
        let layoutLines = json.stdoutLines.filter { $0.hasPrefix(#"{"type":"layout""#) }
        #expect(layoutLines.count == ours.count && layoutLines.allSatisfy {
            $0.contains(#""layout":"apple","ids":["39ed98ff-2900-441a-802f-9c398fc199d2","101","2"],"dataFields":[],"measuredPower":-59"#)
        }, "\(layoutLines.prefix(2))")
    }

    /// `decode --layout CAPTURE`: each report of the capture is read with the layout too, after
    /// its beacons, as `scan --replay --layout` reads it; a layout that reads no report adds nothing.
    @Test func decodeReadsACaptureWithTheLayout() throws {
        let capture = Readme.root.appendingPathComponent("Tests/BeaconEmitterTests/Fixtures/rootcanal-scan.btsnoop").path
        let plain = try runBeaconEmit(["decode", capture])
        let read = try runBeaconEmit(["decode", "--layout", "apple=m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", capture])
        let lines = read.stdoutLines
        let ours = lines.indices.filter { lines[$0].hasPrefix("iBeacon uuid=39ED98FF-2900-441A-802F-9C398FC199D2 major=101 minor=2") }
        #expect(read.status == 0 && !ours.isEmpty, "\(read.stdout)\(read.stderr)")
        for index in ours {
            #expect(index + 1 < lines.count && lines[index + 1].hasPrefix(
                "layout apple: ids=39ed98ff-2900-441a-802f-9c398fc199d2,101,2 measuredPower=-59dBm company=0x004C address="),
                "after \(lines[index]): \(index + 1 < lines.count ? lines[index + 1] : "nothing")")
        }
        #expect(lines.filter { !$0.hasPrefix("layout ") } == plain.stdoutLines, "the beacons' lines are as without the layout")
        let none = try runBeaconEmit(["decode", "--layout", Self.acme, capture])
        #expect(none.status == 0 && none.stdout == plain.stdout, "\(none.stdout)\(none.stderr)")
    }

    @Test(arguments: [
        (["encode", "--layout", "m:2-3=beac,i:4-5,q:6-6,p:7-7", "--id", "1", "--measured-power", "-59"], "term 'q:6-6': not a term"),
        (["encode", "--layout", "m:2-3=beac,i:4-5,p:6-6", "--measured-power", "-59"], "it has 1 identifier (i:), 0 --id given"),
        (["encode", "--layout", "m:2-3=beac,i:4-5,p:6-6", "--id", "70000", "--measured-power", "-59"],
         "--id 1 (i:4-5): '70000' does not fit the field's 2 bytes"),
        (["encode", "--layout", "m:2-3=beac,i:4-5,p:6-6", "--id", "1"], "the layout has a power field: give the measured power"),
        (["encode", "--layout", "m:2-3=beac,i:4-5,p:6-6", "--id", "1", "--measured-power", "-59", "--major", "1"],
         "major does not apply to a layout beacon"),
        (["encode", "--layout", "m:2-3=beac,i:4-40,p:41-41", "--id", "0x" + String(repeating: "00", count: 37), "--measured-power", "-59"],
         "the beacon does not fit"),
        (["encode", "--id", "1"], "--id and --data are a layout's identifiers and data fields: give its --layout"),
        (["decode", "--layout", "m:2-3=beac,i:4-5", "00"], "--layout: the layout has no power field"),
    ])
    func aMistakeIsAUsageError(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(arguments)
        #expect(result.status == 64 && result.stderr.contains(message), "\(result.status) \(result.stderr)")
    }
}
