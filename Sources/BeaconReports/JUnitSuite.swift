// SPDX-License-Identifier: GPL-2.0-or-later

/// One JUnit test suite (the XML CI systems read), built from test cases: what `audit` and
/// `verify` write with `--junit`, and what any command writes when its run ends before it
/// could judge anything (an error test case saying why), so a pipeline's report always shows
/// the outcome.
public struct JUnitSuite: Sendable {
    public enum Outcome: Sendable, Hashable {
        case passed
        case failed(String)
        /// Not judged (JUnit's skipped), and why.
        case skipped(String)
        /// The run could not get as far as judging (a device that fails, a file that cannot be read).
        case error(String)
    }

    public struct Case: Sendable {
        public var name: String
        public var outcome: Outcome
        /// What the test case saw, shown beside it (a warning's detail).
        public var output: String?

        public init(_ name: String, _ outcome: Outcome, output: String? = nil) {
            self.name = name
            self.outcome = outcome
            self.output = output
        }
    }

    /// The suite's name, also every test case's class name: keep it the same from run to run
    /// (a beacon's identity, never an address that rotates) so a CI keeps each case's history.
    public var name: String
    public var cases: [Case]
    /// Seconds the run took.
    public var time: Double

    public init(name: String, cases: [Case], time: Double) {
        self.name = name
        self.cases = cases
        self.time = time
    }

    /// A suite of one error test case: the run ended before anything was judged.
    public static func error(suite: String, name: String = "the run", _ message: String, time: Double = 0) -> JUnitSuite {
        JUnitSuite(name: suite, cases: [Case(name, .error(message))], time: time)
    }

    public var failures: Int { cases.filter { if case .failed = $0.outcome { true } else { false } }.count }
    public var errors: Int { cases.filter { if case .error = $0.outcome { true } else { false } }.count }
    public var skipped: Int { cases.filter { if case .skipped = $0.outcome { true } else { false } }.count }

    public var xml: String {
        let suite = XMLText.escape(name)
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" "
            + "time=\"\(Self.seconds(time))\""
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<testsuites \(counts)>", "  <testsuite name=\"\(suite)\" \(counts)>"]
        for testCase in cases {
            let start = "    <testcase classname=\"\(suite)\" name=\"\(XMLText.escape(testCase.name))\""
            var inner: [String] = []
            switch testCase.outcome {
            case .passed: break
            case let .failed(message): inner.append(Self.element("failure", message))
            case let .skipped(message): inner.append(Self.element("skipped", message))
            case let .error(message): inner.append(Self.element("error", message))
            }
            if let output = testCase.output { inner.append("      <system-out>\(XMLText.escape(output))</system-out>") }
            lines.append(inner.isEmpty ? start + "/>" : start + ">\n" + inner.joined(separator: "\n") + "\n    </testcase>")
        }
        lines += ["  </testsuite>", "</testsuites>", ""]
        return lines.joined(separator: "\n")
    }

    private static func element(_ tag: String, _ message: String) -> String {
        "      <\(tag) message=\"\(XMLText.escape(message))\">\(XMLText.escape(message))</\(tag)>"
    }

    /// Seconds with three decimals.
    public static func seconds(_ value: Double) -> String {
        let milliseconds = Int((max(0, value.isFinite ? value : 0) * 1000).rounded())
        let fraction = milliseconds % 1000
        return "\(milliseconds / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
    }
}
