// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// A run's expectations as a JUnit XML report (the format CI systems read): one test suite,
/// named after the scenario, with a test case per expectation checked, and one for an error
/// that ended the run early. What knocked the beacons off the air (and put them back) is the
/// system-out of the expectation whose step it fell in, or the suite's when no expectation
/// was checked in that step.
public enum JUnitReport {
    public static func xml(suite: String, outcome: ScenarioOutcome) -> String {
        var cases: [String] = []
        var unplaced = outcome.disruptions
        for result in outcome.results {
            let name = "step \(result.number)" + (result.round.map { " (round \($0))" } ?? "")
                + " line \(result.place.line): \(result.text)"
            var element = "    <testcase classname=\"\(escape(suite))\" name=\"\(escape(name))\" time=\"\(time(result.ended - result.started))\""
            let during = unplaced.filter { $0.number == result.number && $0.round == result.round }
            unplaced.removeAll { $0.number == result.number && $0.round == result.round }
            // A phone's expectation: its latency and line as properties.
            var properties: [(String, String)] = []
            if let phone = result.phone {
                properties.append(("phone", phone.phone))
                properties.append(("region", phone.region))
                if let latency = phone.latency { properties.append(("latencyMs", "\(Int((latency * 1000).rounded()))")) }
                if let logLine = phone.logLine { properties.append(("logLine", logLine)) }
            }
            if result.passed && during.isEmpty && properties.isEmpty {
                element += "/>"
            } else {
                element += ">"
                if !properties.isEmpty {
                    element += "\n      <properties>" + properties.map {
                        "\n        <property name=\"\($0.0)\" value=\"\(escape($0.1))\"/>"
                    }.joined() + "\n      </properties>"
                }
                if !result.passed {
                    element += "\n      <failure message=\"\(escape(result.detail))\">\(escape(result.detail))</failure>"
                }
                if !during.isEmpty { element += "\n      <system-out>\(escape(lines(during)))</system-out>" }
                element += "\n    </testcase>"
            }
            cases.append(element)
        }
        var errors = 0
        if let error = outcome.error {
            errors = 1
            cases.append("    <testcase classname=\"\(escape(suite))\" name=\"the run\" time=\"\(time(outcome.duration))\">\n"
                         + "      <error message=\"\(escape(error.description))\">\(escape(error.description))</error>\n    </testcase>")
        } else if outcome.interrupted {
            errors = 1
            cases.append("    <testcase classname=\"\(escape(suite))\" name=\"the run\" time=\"\(time(outcome.duration))\">\n"
                         + "      <error message=\"interrupted by a signal\">interrupted by a signal</error>\n    </testcase>")
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites tests="\(cases.count)" failures="\(outcome.failures)" errors="\(errors)" time="\(time(outcome.duration))">
              <testsuite name="\(escape(suite))" tests="\(cases.count)" failures="\(outcome.failures)" errors="\(errors)" time="\(time(outcome.duration))">
            \(cases.joined(separator: "\n"))\(unplaced.isEmpty ? "" : "\n    <system-out>\(escape(lines(unplaced)))</system-out>")
              </testsuite>
            </testsuites>

            """
    }

    /// One line per disruption: when, in which step, what.
    static func lines(_ disruptions: [StepDisruption]) -> String {
        disruptions.map { "+\(time($0.at))s step \($0.number)\($0.round.map { " (round \($0))" } ?? ""): \($0.text)" }
            .joined(separator: "\n")
    }

    /// Seconds with three decimals.
    static func time(_ seconds: Double) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        let fraction = milliseconds % 1000
        return "\(milliseconds / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
    }

    static func escape(_ text: String) -> String { XMLText.escape(text) }
}
