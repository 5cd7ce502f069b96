// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

/// The readers the output tests use can fail: a key twice, a JUnit count that does not agree.
@Suite struct OutputCheckerTests {
    @Test func aKeyTwiceIsRefused() throws {
        #expect(throws: StrictJSON.Fault.self) { try StrictJSON.check(#"{"type":"eddystone","data":"30","data":"0201"}"#) }
        #expect(throws: StrictJSON.Fault.self) { try StrictJSON.check(#"{"a":{"b":1,"b":2}}"#) }
        let keys = try StrictJSON.check(#"{"a":[{"b":1},{"b":2}],"c":"x\"y","d":null,"e":-1.5e3,"f":true}"#)
        #expect(keys.first == ["a", "c", "d", "e", "f"])
    }

    @Test func aJUnitReportWhoseCountsDisagreeIsRefused() throws {
        let suite = JUnitSuite(name: "a <suite> & \"more\"", cases: [.init("one", .failed("x < y")), .init("two", .skipped("why")),
                                                                   .init("three", .passed, output: "seen")], time: 1.5)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try suite.xml.write(toFile: path, atomically: true, encoding: .utf8)
        let read = try JUnitCheck.read(path)
        #expect(read.suites == ["a <suite> & \"more\""] && read.failures == 1 && read.skipped == 1 && read.messages["one"] == "x < y")
        try suite.xml.replacingOccurrences(of: "failures=\"1\"", with: "failures=\"0\"").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: JUnitCheck.Fault.self) { try JUnitCheck.read(path) }
        try suite.xml.replacingOccurrences(of: "&amp;", with: "&").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try JUnitCheck.read(path) }
    }
}
