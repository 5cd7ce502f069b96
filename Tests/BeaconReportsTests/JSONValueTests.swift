// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Testing

@Suite struct JSONValueTests {
    @Test func trueAndFalseAreNotNumbers() {
        #expect(JSONValue(parsing: "true") == .bool(true))
        #expect(JSONValue(parsing: "1") == .integer(1))
        #expect(JSONValue(parsing: "true")?.integer == nil)
        #expect(JSONValue(parsing: "1")?.bool == nil)
    }

    @Test func wholeNumbersStayExact() {
        #expect(JSONValue(parsing: "9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(JSONValue(parsing: "2.5") == .number(2.5))
        #expect(JSONValue(parsing: "7.0")?.integer == 7)
        #expect(JSONValue(parsing: "7.5")?.integer == nil)
    }

    @Test func objectsReadAndWriteWithSortedKeysAndPlainSlashes() {
        let value = JSONValue(parsing: #"{"url":"https://example.com/a","ok":true,"id":3,"list":[null,"x"]}"#)
        #expect(value?["ok"]?.bool == true)
        #expect(value?["url"]?.string == "https://example.com/a")
        #expect(value?.line == #"{"id":3,"list":[null,"x"],"ok":true,"url":"https://example.com/a"}"#)
    }

    @Test func notJSONIsNil() {
        #expect(JSONValue(parsing: "{\"a\":") == nil)
        #expect(JSONValue(parsing: "list") == nil)
        #expect(JSONValue(parsing: "") == nil)
    }

    @Test func nestingPast64IsRefusedBeforeDecoding() {
        func nested(_ depth: Int, _ inner: String = "1") -> String {
            String(repeating: "[", count: depth) + inner + String(repeating: "]", count: depth)
        }
        #expect(JSONValue(parsing: nested(64)) != nil)
        #expect(JSONValue(parsing: nested(65)) == nil)
        // A control request's line can hold 30,000 levels.
        #expect(JSONValue(parsing: nested(30_000)) == nil)
        #expect(JSONValue(parsing: String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)) == nil)
        // Brackets in strings are text, escaped quotes included.
        let text = #"{"a":"[[[[\"[[[[","b":["# + nested(62) + "]}"
        #expect(JSONValue(parsing: text)?["a"]?.string == #"[[[["[[[["#)
        #expect(JSONValue(parsing: #"{"a":"\\","b":"# + nested(63) + "}") != nil)
    }

    @Test func scalarsAsText() {
        #expect(JSONValue.integer(-59).text == "-59")
        #expect(JSONValue.string("abc").text == "abc")
        #expect(JSONValue.null.text == "null")
        #expect(JSONValue.bool(false).text == "false")
    }
}
