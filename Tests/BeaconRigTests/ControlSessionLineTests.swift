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
