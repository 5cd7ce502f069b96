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

/// Control replies as typed values: what the server writes, `beacon-emit control` and the boxes read.
@Suite struct ControlReplyTests {
    @Test func eachReplyGoesOutAsOneLineAndComesBackTheSame() throws {
        let canary = ControlReply.Canary(device: "hci1", beacons: [.init(id: 1, heard: true, lastHeardMsAgo: 120),
                                                                   .init(id: 2, heard: false, lastHeardMsAgo: nil)])
        let replies: [ControlReply] = [
            ControlReply(beacons: [["id": 1, "type": "ibeacon"], ["id": 2, "type": "eddystone-url"]]),
            ControlReply(status: .init(state: "off-air", beaconCount: 2, uptimeSeconds: 9, device: "hci0 (mgmt)",
                                       lastDisruption: "controller reset", canary: canary)),
            ControlReply(id: 3, beacon: ["id": 3, "minor": 9]),
            ControlReply(id: 3),
            .refusal("no beacon with id 4"),
            .refusal("the beacons are off the air", retry: true),
        ]
        for reply in replies {
            #expect(ControlReply(line: reply.line) == reply, "\(reply.line)")
            let data = try JSONEncoder().encode(reply)
            #expect(try JSONDecoder().decode(ControlReply.self, from: data) == reply)
        }
        // The lines the protocol documents, written by hand.
        #expect(ControlReply(id: 7).line == #"{"id":7,"ok":true}"#)
        #expect(ControlReply.refusal("gone", retry: true).line == #"{"error":"gone","ok":false,"retry":true}"#)
        #expect(ControlReply(status: .init(state: "on-air", beaconCount: 2, uptimeSeconds: 5, device: "hci0")).line
            == #"{"beacons":2,"device":"hci0","ok":true,"state":"on-air","uptimeSeconds":5}"#)
        #expect(replies[1].line.contains(#""canary":{"beacons":[{"heard":true,"id":1,"lastHeardMsAgo":120},"#
                                         + #"{"heard":false,"id":2,"lastHeardMsAgo":null}],"device":"hci1"}"#), "\(replies[1].line)")
    }

    /// "beacons" is list's array and status's count: each reads back as what it is.
    @Test func beaconsIsTheListOrTheStatusCount() throws {
        let list = try #require(ControlReply(line: #"{"ok":true,"beacons":[{"id":1}]}"#))
        #expect(list.beacons == [["id": 1]] && list.status == nil)
        let status = try #require(ControlReply(line: #"{"ok":true,"state":"waiting","beacons":3,"uptimeSeconds":1,"device":"hci2"}"#))
        #expect(status.beacons == nil && status.status?.beaconCount == 3 && status.status?.state == "waiting")
    }

    /// Whatever is not a reply's: no object is nil; a member of the wrong kind counts as missing.
    @Test func whatIsNotAReply() {
        #expect(ControlReply(line: "[1]") == nil)
        #expect(ControlReply(line: "not json") == nil)
        let odd = ControlReply(line: #"{"ok":"yes","id":"3","error":7}"#)
        #expect(odd?.ok == false && odd?.id == nil && odd?.error == nil)
    }

    /// The handler's status with a canary, read back typed.
    @Test func theHandlersStatusReadsBackTyped() throws {
        let handler = ControlHandler(session: FakeLive([ControlHandlerTests.beacon(1), ControlHandlerTests.beacon(2)]),
                                     makeBeacon: testBeacon, fieldsOf: ControlHandlerTests.fields)
        handler.device = "hci0 (raw)"
        handler.canary = ("hci1", { [(lastHeard: .milliseconds(250), unheard: false), (lastHeard: nil, unheard: true)] })
        handler.note(.offAir(.controllerReset))
        let reply = try #require(ControlReply(line: handler.reply(to: #"{"command":"status"}"#)))
        let status = try #require(reply.status)
        #expect(reply.ok && status.state == "off-air" && status.beaconCount == 2 && status.device == "hci0 (raw)")
        #expect(status.lastDisruption != nil)
        #expect(status.canary == .init(device: "hci1", beacons: [.init(id: 1, heard: true, lastHeardMsAgo: 250),
                                                                  .init(id: 2, heard: false, lastHeardMsAgo: nil)]))
    }
}
