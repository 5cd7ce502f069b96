// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// A run as one HTML file a person opens (`run --report FILE.html`): self-contained (inline CSS
/// and SVG; nothing fetched, no script), on one time axis in seconds each beacon's spans on the
/// air and the scanner's sightings of it, each region's state, each phone's matched lines,
/// every step, the disruptions and every expectation at its instant with its result; then the
/// expectations as a table, failures first, with what says why. Pass and fail are words and
/// marks (✓, ✗), not colours alone; it fits a laptop's width and prints. Its size is bounded by
/// the timeline's (`ScenarioTimeline`): a few megabytes at most.
public enum ScenarioReport {
    /// The page for a run that ended (passed, failed, interrupted or ended by an error).
    /// - Parameters:
    ///   - title: the scenario's name; `startedUnix`: when the run began (seconds since 1970).
    public static func html(title: String, outcome: ScenarioOutcome, startedUnix: Double) -> String {
        let timeline = outcome.timeline
        let passed = outcome.results.count - outcome.failures
        let verdict = outcome.passed ? "PASS" : "FAIL"
        var ending = "\(outcome.results.count) expectation\(outcome.results.count == 1 ? "" : "s"): \(passed) passed, "
            + "\(outcome.failures) failed"
        if let error = outcome.error { ending += "; ended by an error: \(error)" }
        if outcome.interrupted { ending += "; interrupted by a signal" }
        var body = "<header><h1><span class=\"verdict \(outcome.passed ? "pass" : "fail")\">\(verdict)</span> "
            + "\(escape(title))</h1>\n<p>Started \(Timestamp.iso8601(startedUnix)), ran \(seconds(outcome.duration)). "
            + "\(escape(ending)).</p></header>\n"
        body += "<section><h2>Timeline</h2>\n" + svg(outcome, timeline) + legend(timeline) + "</section>\n"
        body += "<section><h2>Expectations</h2>\n" + table(outcome.results) + "</section>\n"
        if !outcome.disruptions.isEmpty {
            body += "<section><h2>Disruptions</h2>\n<ul>" + outcome.disruptions.map {
                "<li>\(seconds($0.at)), step \(escape($0.number)): \(escape($0.text))</li>"
            }.joined() + "</ul></section>\n"
        }
        return page(title: "\(verdict) \(title)", body: body)
    }

    /// The page for a run that never started (its file does not parse, its device cannot be
    /// opened): what was wrong.
    public static func html(title: String, error message: String, startedUnix: Double) -> String {
        HTMLPage.error(title: title, startedUnix: startedUnix, message: message)
    }

    // MARK: The page

    private static func page(title: String, body: String) -> String {
        HTMLPage.document(title: title, style: """
            .span { fill: #3b7dd8; } .sighting { stroke: #0b3d91; } .inside { fill: #8fc98f; } .outside { fill: #eeeeee; }
            .step { stroke: #777; stroke-dasharray: 2 3; } .off { stroke: #c26a00; stroke-width: 2; } .phone { fill: #6a3d9a; }
            """, body: body)
    }

    /// The rows' layout: label column, plot width, row height.
    private static let (labels, plot, row) = (150.0, 800.0, 22.0)

    private static func svg(_ outcome: ScenarioOutcome, _ timeline: ScenarioTimeline) -> String {
        let end = max(outcome.duration, timeline.steps.last?.at ?? 0, 1)
        let x = { (at: Double) -> String in format(labels + plot * min(max(at, 0), end) / end) }
        let beacons = timeline.spans.keys.sorted()
        let regions = Array(Set(timeline.regions.map(\.region))).sorted()
        let phones = Array(Set(timeline.phoneLines.map(\.phone))).sorted()
        var rows: [String] = []
        var y = 30.0
        // Steps: a mark and its number at each step's start.
        rows.append(label("steps", y))
        for step in timeline.steps {
            rows.append("<line class=\"step\" x1=\"\(x(step.at))\" y1=\"\(format(y - 12))\" x2=\"\(x(step.at))\" y2=\"\(format(y + 4))\">"
                        + "<title>step \(escape(step.number)): \(escape(step.text)) (at \(seconds(step.at)))</title></line>")
        }
        y += row
        for name in beacons {
            rows.append(label(name, y))
            for span in timeline.spans[name] ?? [] {
                let to = span.to ?? end
                rows.append("<rect class=\"span\" data-beacon=\"\(escape(name))\" data-from=\"\(format(span.from))\" "
                            + "data-to=\"\(format(to))\" x=\"\(x(span.from))\" y=\"\(format(y - 12))\" "
                            + "width=\"\(format(max(1, plot * (to - span.from) / end)))\" height=\"7\"><title>\(escape(name)) on the air "
                            + "\(seconds(span.from)) to \(seconds(to))</title></rect>")
            }
            let ticks = (timeline.sightings[name] ?? []).map { "M\(x($0)) \(format(y - 3))v6" }.joined()
            if !ticks.isEmpty { rows.append("<path class=\"sighting\" d=\"\(ticks)\"/>") }
            y += row
        }
        for name in regions {
            rows.append(label("region \(name)", y))
            let changes = timeline.regions.filter { $0.region == name }
            for (index, change) in changes.enumerated() {
                let to = index + 1 < changes.count ? changes[index + 1].at : end
                rows.append("<rect class=\"\(change.state == "inside" ? "inside" : "outside")\" x=\"\(x(change.at))\" "
                            + "y=\"\(format(y - 13))\" width=\"\(format(max(1, plot * (to - change.at) / end)))\" height=\"14\"/>"
                            + "<text x=\"\(format((Double(x(change.at)) ?? labels) + 2))\" y=\"\(format(y - 2))\">\(escape(change.state))</text>")
            }
            y += row
        }
        for name in phones {
            rows.append(label("phone \(name)", y))
            for line in timeline.phoneLines where line.phone == name {
                let mark = line.transition == .enter ? "E" : line.transition == .exit ? "X" : "S"
                rows.append("<text class=\"phone\" x=\"\(x(line.at))\" y=\"\(format(y - 2))\">\(mark)<title>\(seconds(line.at)): "
                            + "\(escape(line.text))</title></text>")
            }
            y += row
        }
        // Expectations: a mark at each verdict's instant, its word in its title.
        rows.append(label("expectations", y))
        for result in outcome.results.prefix(ScenarioTimeline.maximumEntries) {
            rows.append("<text class=\"\(result.passed ? "pass" : "fail")\" data-step=\"\(escape(result.number))\" "
                        + "data-result=\"\(result.passed ? "pass" : "fail")\" x=\"\(x(result.ended))\" y=\"\(format(y - 2))\">"
                        + "\(result.passed ? "✓" : "✗")<title>\(result.passed ? "PASS" : "FAIL") step \(escape(result.number)): "
                        + "\(escape(result.text))</title></text>")
        }
        y += row
        // Disruptions: a line across the rows at each.
        for disruption in outcome.disruptions {
            rows.append("<line class=\"off\" x1=\"\(x(disruption.at))\" y1=\"20\" x2=\"\(x(disruption.at))\" y2=\"\(format(y - 8))\">"
                        + "<title>\(seconds(disruption.at)): \(escape(disruption.text))</title></line>")
        }
        let height = y + 26
        var axis: [String] = []
        let step = tickStep(end)
        var tick = 0.0
        while tick <= end + 0.0001 {
            axis.append("<line class=\"grid\" x1=\"\(x(tick))\" y1=\"16\" x2=\"\(x(tick))\" y2=\"\(format(y - 6))\"/>"
                        + "<text x=\"\(x(tick))\" y=\"\(format(y + 10))\" text-anchor=\"middle\">\(tickLabel(tick))</text>")
            tick += step
        }
        return "<svg viewBox=\"0 0 \(format(labels + plot + 20)) \(format(height))\" role=\"img\" "
            + "aria-label=\"the run's timeline, in seconds\">\n<g class=\"axis\">" + axis.joined() + "</g>\n"
            + rows.joined(separator: "\n") + "\n<text x=\"\(format(labels + plot))\" y=\"\(format(y + 22))\" "
            + "text-anchor=\"end\">time since the run began (s)</text></svg>\n"
    }

    private static func legend(_ timeline: ScenarioTimeline) -> String {
        var parts = ["bars: on the air (from the rig's own record)", "ticks: the scanner's sightings",
                     "dashed: steps", "orange: a disruption", "✓ pass, ✗ fail", "E enter, X exit, S state (a phone's line)"]
        let thinned = timeline.stride.filter { $0.value > 1 }.sorted { $0.key < $1.key }
        if !thinned.isEmpty {
            parts.append("sightings thinned: " + thinned.map { "\($0.key) every \($0.value)th of \(timeline.sighted[$0.key] ?? 0)" }
                .joined(separator: ", "))
        }
        if timeline.leftOut > 0 { parts.append("\(timeline.leftOut) steps, region changes or phone lines over \(ScenarioTimeline.maximumEntries) not drawn") }
        return "<p class=\"legend\">" + escape(parts.joined(separator: "; ")) + ".</p>\n"
    }

    private static func table(_ results: [ScenarioResult]) -> String {
        guard !results.isEmpty else { return "<p>No expectation was checked.</p>\n" }
        // Failures first; at most `maximumEntries` rows (the rest counted).
        let all = results.filter { !$0.passed } + results.filter(\.passed)
        let ordered = all.prefix(ScenarioTimeline.maximumEntries)
        let more = all.count > ordered.count ? "<p>\(all.count - ordered.count) more expectations (failures are listed first) are "
            + "in the JSON and JUnit output.</p>\n" : ""
        return more + "<table><thead><tr><th>result</th><th>step</th><th>line</th><th>expectation</th><th>at</th><th>latency</th>"
            + "<th>detail</th></tr></thead><tbody>\n" + ordered.map { result in
                let latency = result.phone?.latency.map { "\(Int(($0 * 1000).rounded())) ms" } ?? ""
                return "<tr data-result=\"\(result.passed ? "pass" : "fail")\"><td class=\"nowrap \(result.passed ? "pass" : "fail")\">"
                    + "\(result.passed ? "✓ PASS" : "✗ FAIL")</td><td>\(escape(result.number + (result.round.map { " (\($0))" } ?? "")))</td>"
                    + "<td>\(result.place.line)</td><td>\(escape(result.text))</td><td class=\"nowrap\">\(seconds(result.ended))</td>"
                    + "<td>\(latency)</td><td class=\"detail\">\(escape(result.detail))</td></tr>"
            }.joined(separator: "\n") + "\n</tbody></table>\n"
    }

    private static func label(_ text: String, _ y: Double) -> String {
        "<text x=\"0\" y=\"\(format(y - 2))\">\(escape(String(text.prefix(24))))</text>"
    }

    /// A tick every 1, 2, 5, 10, ... seconds: about ten across.
    private static func tickStep(_ end: Double) -> Double {
        let steps: [Double] = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400]
        return steps.first { end / $0 <= 12 } ?? 86400
    }

    private static func tickLabel(_ seconds: Double) -> String {
        seconds >= 120 && seconds.truncatingRemainder(dividingBy: 60) == 0 ? "\(Int(seconds / 60)) min"
            : seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    private static func seconds(_ value: Double) -> String { "\(format(value)) s" }

    private static func format(_ value: Double) -> String { HTMLPage.number(value) }

    private static func escape(_ text: String) -> String { HTMLPage.escape(text) }
}
