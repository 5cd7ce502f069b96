// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking

/// An audit as one HTML page a person opens (`audit --report FILE.html`), self-contained
/// (`HTMLPage`): the verdict, the interval as a histogram of the gaps between the reports heard
/// (the estimate and the configured interval marked), the RSSI over time, the share of events
/// heard per second, and the rules with their verdicts. Bounded whatever was heard: 60 bins,
/// at most 1,000 columns of RSSI (each one's lowest and highest) and 600 of events per second.
public enum AuditPage {
    /// - Parameters:
    ///   - configuredMs: the interval the device under test was given (`--interval`), if any.
    ///   - startedUnix: when the audit began, in seconds since 1970.
    public static func html(_ report: AuditReport, series: AuditSeries, configuredMs: Double?, startedUnix: Double) -> String {
        let verdict = report.verdict.uppercased()
        var body = "<header><h1><span class=\"verdict \(report.verdict)\">\(verdict)</span> \(escape(report.name))</h1>\n"
            + "<p>\(escape(report.profile.map { "\($0) (\(report.profileChosenBy))" } ?? "no beacon format recognised")) at "
            + "\(escape(report.address)); \(report.reports) reports over \(number(report.seconds)) s, audited "
            + "\(Timestamp.iso8601(startedUnix)). \(escape(report.source.prefix(1).uppercased() + report.source.dropFirst())).</p>"
            + (report.beacon.map { "<p>\(escape($0))</p>" } ?? "") + "</header>\n"
        body += "<section><h2>Rules</h2>\n" + rules(report.rules) + "</section>\n"
        body += "<section><h2>Interval: the gaps between reports heard</h2>\n" + histogram(series.times, report, configuredMs)
            + "</section>\n"
        body += "<section><h2>RSSI over time</h2>\n" + rssi(series.rssi) + "</section>\n"
        body += "<section><h2>Events heard per second</h2>\n" + perSecond(series.times, report) + "</section>\n"
        return HTMLPage.document(title: "\(verdict) \(report.name)", style: """
            .bar { fill: #3b7dd8; } .estimate { stroke: #17612a; stroke-width: 2; } .configured { stroke: #c26a00; stroke-width: 2;
              stroke-dasharray: 5 3; } .dot { stroke: #0b3d91; stroke-width: 3; stroke-linecap: round; } .expected { stroke: #c26a00; stroke-dasharray: 5 3; }
            """, body: body)
    }

    /// The page for an audit that heard nothing to judge, or could not start: why.
    public static func html(name: String, error message: String, startedUnix: Double) -> String {
        HTMLPage.error(title: name, startedUnix: startedUnix, message: message, what: "nothing was judged")
    }

    private static func rules(_ rules: [AuditReport.Rule]) -> String {
        guard !rules.isEmpty else { return "<p>No rule was judged.</p>\n" }
        let marks = ["pass": "✓ PASS", "fail": "✗ FAIL", "warn": "! WARN", "inconclusive": "? NOT JUDGED"]
        return "<table><thead><tr><th>verdict</th><th>rule</th><th>seen</th><th>wanted</th><th>source</th></tr></thead><tbody>\n"
            + rules.map { rule in
                "<tr data-rule=\"\(escape(rule.name))\" data-verdict=\"\(escape(rule.verdict))\"><td class=\"nowrap \(escape(rule.verdict))\">"
                    + "\(marks[rule.verdict] ?? escape(rule.verdict))</td><td>\(escape(rule.name))</td><td class=\"detail\">"
                    + "\(escape(rule.seen))</td><td class=\"detail\">\(escape(rule.wanted))</td><td>\(escape(rule.source))</td></tr>"
            }.joined(separator: "\n") + "\n</tbody></table>\n"
    }

    // MARK: Pictures: 900 wide, a left margin for the axis.

    private static let (left, width, height) = (50.0, 850.0, 180.0)

    private static func histogram(_ times: [Double], _ report: AuditReport, _ configured: Double?) -> String {
        let sorted = times.sorted()
        let gaps = zip(sorted, sorted.dropFirst()).map { ($1 - $0) * 1000 }
        guard !gaps.isEmpty else { return "<p>Fewer than two reports: no gap to show.</p>\n" }
        let estimate = report.interval?.eventPeriodMs
        let typical = estimate ?? configured ?? gaps.sorted()[gaps.count / 2]
        let top = max(3 * typical, (configured ?? 0) * 1.5, 1)
        let bins = 60
        var counts = [Int](repeating: 0, count: bins)
        var over = 0
        for gap in gaps {
            guard gap < top else { over += 1; continue }
            counts[min(bins - 1, Int(gap / top * Double(bins)))] += 1
        }
        let most = max(1, counts.max() ?? 1)
        let x = { (ms: Double) in left + width * min(ms, top) / top }
        var parts: [String] = []
        for (index, count) in counts.enumerated() where count > 0 {
            let barHeight = height * Double(count) / Double(most)
            parts.append("<rect class=\"bar\" data-bin=\"\(index)\" data-count=\"\(count)\" x=\"\(number(x(Double(index) * top / Double(bins))))\" "
                         + "y=\"\(number(20 + height - barHeight))\" width=\"\(number(width / Double(bins) - 1))\" "
                         + "height=\"\(number(barHeight))\"><title>\(count) gaps of \(number(Double(index) * top / Double(bins))) to "
                         + "\(number(Double(index + 1) * top / Double(bins))) ms</title></rect>")
        }
        if let estimate {
            parts.append("<line class=\"estimate\" data-estimate=\"\(number(estimate))\" x1=\"\(number(x(estimate)))\" y1=\"14\" "
                         + "x2=\"\(number(x(estimate)))\" y2=\"\(number(20 + height))\"/><text x=\"\(number(x(estimate) + 3))\" y=\"12\">"
                         + "estimate \(number(estimate)) ms</text>")
        }
        if let configured {
            parts.append("<line class=\"configured\" data-configured=\"\(number(configured))\" x1=\"\(number(x(configured)))\" y1=\"30\" "
                         + "x2=\"\(number(x(configured)))\" y2=\"\(number(20 + height))\"/><text x=\"\(number(x(configured) + 3))\" y=\"28\">"
                         + "configured \(number(configured)) ms</text>")
        }
        return svg(parts + xAxis(top, unit: "ms", label: "gap between reports heard (ms)") + yAxis(Double(most), label: "gaps"))
            + "<p>\(gaps.count) gaps between \(times.count) reports; a missed event makes a gap of two periods or more"
            + (over > 0 ? "; \(over) longer than \(number(top)) ms not drawn" : "") + ".</p>\n"
    }

    private static func rssi(_ samples: [(at: Double, dBm: Int8)]) -> String {
        guard let first = samples.first?.at, let last = samples.last?.at else { return "<p>The source gave no RSSI.</p>\n" }
        let span = max(last - first, 0.001)
        let low = Double(samples.map(\.dBm).min() ?? -100) - 2, high = Double(samples.map(\.dBm).max() ?? 0) + 2
        let columns = 1000
        var range = [(low: Int8, high: Int8)?](repeating: nil, count: columns)
        for sample in samples {
            let column = min(columns - 1, Int((sample.at - first) / span * Double(columns - 1)))
            let now = range[column]
            range[column] = (min(now?.low ?? sample.dBm, sample.dBm), max(now?.high ?? sample.dBm, sample.dBm))
        }
        let y = { (dBm: Double) in 20 + height * (high - dBm) / max(high - low, 1) }
        let path = range.enumerated().compactMap { column, value -> String? in
            guard let value else { return nil }
            let x = left + width * Double(column) / Double(columns - 1)
            return "M\(number(x)) \(number(y(Double(value.high)) - 1))V\(number(y(Double(value.low)) + 1))"
        }.joined()
        var axis: [String] = []
        let step = HTMLPage.tickStep(high - low)
        var tick = (low / step).rounded(.up) * step
        while tick <= high {
            axis.append("<line class=\"grid\" x1=\"\(number(left))\" y1=\"\(number(y(tick)))\" x2=\"\(number(left + width))\" "
                        + "y2=\"\(number(y(tick)))\"/><text x=\"\(number(left - 4))\" y=\"\(number(y(tick) + 4))\" text-anchor=\"end\">"
                        + "\(number(tick))</text>")
            tick += step
        }
        axis.append("<text x=\"4\" y=\"12\">dBm</text>")
        return svg(axis + ["<path class=\"dot\" d=\"\(path)\"/>"] + xAxis(span, unit: "s", label: "time since the first report (s)"))
            + "<p>\(samples.count) readings; each column shows the lowest and highest of its moment.</p>\n"
    }

    private static func perSecond(_ times: [Double], _ report: AuditReport) -> String {
        guard let first = times.min(), let last = times.max(), last > first else { return "<p>Too short to count per second.</p>\n" }
        let seconds = Int((last - first).rounded(.up))
        // Buckets of whole seconds, at most 600 of them.
        let size = max(1, Int((Double(seconds) / 600).rounded(.up)))
        let buckets = max(1, (seconds + size - 1) / size)
        var counts = [Double](repeating: 0, count: buckets)
        for time in times { counts[min(buckets - 1, Int((time - first) / Double(size)))] += 1 }
        let rates = counts.map { $0 / Double(size) }
        let expected = report.interval.map { 1000 / max($0.eventPeriodMs, 1) }
        let top = max(rates.max() ?? 1, (expected ?? 0) * 1.2, 1)
        var parts: [String] = []
        for (index, rate) in rates.enumerated() where rate > 0 {
            let barHeight = height * rate / top
            parts.append("<rect class=\"bar\" x=\"\(number(left + width * Double(index) / Double(buckets)))\" "
                         + "y=\"\(number(20 + height - barHeight))\" width=\"\(number(max(0.5, width / Double(buckets) - 0.5)))\" "
                         + "height=\"\(number(barHeight))\"><title>\(number(rate)) a second from \(index * size) s</title></rect>")
        }
        if let expected {
            let y = 20 + height * (1 - expected / top)
            parts.append("<line class=\"expected\" x1=\"\(number(left))\" y1=\"\(number(y))\" x2=\"\(number(left + width))\" "
                         + "y2=\"\(number(y))\"/><text x=\"\(number(left + width))\" y=\"\(number(y - 3))\" text-anchor=\"end\">"
                         + "sent: \(number(expected)) a second</text>")
        }
        return svg(parts + xAxis(Double(buckets * size), unit: "s", label: "time since the first report (s)")
                   + yAxis(top, label: "a second"))
            + "<p>Reports heard each \(size == 1 ? "second" : "\(size) seconds (per second)")"
            + (report.interval.map { "; \(number($0.heardPercent)) % of the events sent were heard" } ?? "") + ".</p>\n"
    }

    private static func svg(_ parts: [String]) -> String {
        "<svg viewBox=\"0 0 \(number(left + width + 20)) \(number(height + 60))\" role=\"img\">\n" + parts.joined(separator: "\n")
            + "\n</svg>\n"
    }

    private static func xAxis(_ end: Double, unit: String, label: String) -> [String] {
        var parts: [String] = []
        let step = HTMLPage.tickStep(end)
        var tick = 0.0
        while tick <= end + step / 1000 {
            let x = left + width * tick / max(end, 0.001)
            parts.append("<line class=\"grid\" x1=\"\(number(x))\" y1=\"20\" x2=\"\(number(x))\" y2=\"\(number(20 + height))\"/>"
                         + "<text x=\"\(number(x))\" y=\"\(number(height + 34))\" text-anchor=\"middle\">\(number(tick)) \(unit)</text>")
            tick += step
        }
        parts.append("<text x=\"\(number(left + width))\" y=\"\(number(height + 52))\" text-anchor=\"end\">\(escape(label))</text>")
        return parts
    }

    private static func yAxis(_ top: Double, label: String) -> [String] {
        ["<text x=\"\(number(left - 4))\" y=\"24\" text-anchor=\"end\">\(number(top))</text>",
         "<text x=\"\(number(left - 4))\" y=\"\(number(20 + height))\" text-anchor=\"end\">0</text>",
         "<text x=\"4\" y=\"12\">\(escape(label))</text>"]
    }

    private static func number(_ value: Double) -> String { HTMLPage.number(value) }

    private static func escape(_ text: String) -> String { HTMLPage.escape(text) }
}
