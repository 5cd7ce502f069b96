// SPDX-License-Identifier: GPL-2.0-or-later

@testable import BeaconRig
import BeaconReports
import Foundation
import Testing

/// What a control session owes: complete request lines sent, less reply lines received, as its
/// messages say it when the emitter goes or the replies do not come.
@Suite struct ControlSessionLineTests {
    @Test func repliesOwedAreCompleteLinesSentLessLinesReceived() {
        var lines = ControlSession.LineCounts()
        lines.requested(Array("{\"op\":\"status\"}\n{\"op\":\"list\"}\n{\"op\"".utf8)[...])
        #expect(lines.waiting == 2)
        #expect(lines.partialRequest)
        #expect(lines.owed == "2 requests")
        lines.replied(Array("{\"ok\":true}\n".utf8)[...])
        #expect(lines.owed == "1 request")
        lines.replied(Array("{\"ok\":true}\n{\"ok\":true}\n".utf8)[...])
        #expect(lines.waiting == 0)
        #expect(lines.owed == "0 requests")
    }
}

/// The one framer of the control protocol: lines come out whole, however the bytes arrive.
@Suite struct JSONLinesTests {
    @Test func linesComeOutWholeAcrossReads() {
        var framer = JSONLines()
        #expect(framer.append(Array(#"{"command":"li"#.utf8)).isEmpty)
        #expect(framer.hasPartialLine)
        #expect(framer.append(Array("st\"}\r\n{\"command\":\"status\"}\n{\"a\"".utf8))
                == [#"{"command":"list"}"#, #"{"command":"status"}"#])
        #expect(framer.hasPartialLine)
        #expect(framer.append(Array(":1}\n\n".utf8)) == [#"{"a":1}"#, ""])
        #expect(!framer.hasPartialLine)
        #expect(!framer.overflowed)
    }

    @Test func aLineLongerThanTheLimitOverflows() {
        var framer = JSONLines()
        #expect(framer.append([UInt8](repeating: UInt8(ascii: "x"), count: JSONLines.maximumLine)).isEmpty)
        #expect(!framer.overflowed)
        #expect(framer.append([UInt8(ascii: "x")]).isEmpty)
        #expect(framer.overflowed)
    }

    @Test func aFramedLineEndsWithOneLineFeed() {
        #expect(JSONLines.frame(#"{"ok":true}"#) == Array(#"{"ok":true}"#.utf8) + [0x0A])
        var framer = JSONLines()
        #expect(framer.append(JSONLines.frame("é")) == ["é"])
    }
}

/// The control requests as one Codable type for the server and its clients.
@Suite struct ControlRequestTests {
    @Test func eachRequestGoesOutAsOneLineAndComesBackTheSame() throws {
        let requests: [ControlRequest] = [.list, .status, .add(beacon: "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2"),
                                          .add(beacon: ["type": "eddystone-url", "url": "https://example.com", "txPowerAt0m": -20]),
                                          .update(id: 2, fields: ["minor": 3]), .remove(id: 7)]
        for request in requests {
            #expect(try ControlRequest(line: request.line) == request)
            let data = try JSONEncoder().encode(request)
            #expect(try JSONDecoder().decode(ControlRequest.self, from: data) == request)
        }
        #expect(ControlRequest.update(id: 2, fields: "minor=3").line == #"{"command":"update","fields":"minor=3","id":2}"#)
        #expect(ControlRequest.remove(id: 7).line == #"{"command":"remove","id":7}"#)
    }

    @Test(arguments: [
        ("[1]", "not a JSON object"),
        (#"{"id":1}"#, #"no "command""#),
        (#"{"command":"remove","id":1,"beacon":"x"}"#, #"remove takes command, id, not "beacon""#),
        (#"{"command":"remove","id":"1"}"#, #""id" must be a beacon's id"#),
        (#"{"command":"reboot"}"#, #"unknown command "reboot""#),
    ])
    func aLineThatIsNoRequestIsRefusedSayingWhy(line: String, expected: String) {
        do {
            _ = try ControlRequest(line: line)
            Issue.record("accepted \(line)")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }
}
