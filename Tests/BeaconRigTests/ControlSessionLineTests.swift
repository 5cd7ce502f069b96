// SPDX-License-Identifier: GPL-2.0-or-later

@testable import BeaconRig
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
