// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconReports
import Foundation

/// What `replay` prints of a plan and of how it went: JSON lines (`--json`) or text.
extension ReplayPlan {
    /// The plan: a `plan` line per advertiser, or a heading, a table with each column as wide
    /// as its widest value, and a line for each advertiser that goes and comes back.
    /// - Parameters:
    ///   - file: the capture, as the heading names it.
    ///   - speed: `--speed`, said in the heading when not 1.
    public func planLines(json: Bool, file: String, speed: Double) -> [String] {
        if json { return entries.map(Self.planLine) }
        let turns = entries.contains { $0.onAir.count > 1 || $0.onAir.isEmpty }
        var lines = ["\(file): \(entries.count) advertiser\(entries.count == 1 ? "" : "s"), "
            + String(format: "%.1f s", length) + (speed == 1 ? "" : " at \(speed)x")
            + (turns ? ", taking turns of \(turn) s on \(sets ?? 0) set\(sets == 1 ? "" : "s")" : "")]
        var rows = [["name", "address", "sent as", "PDU type", "interval", "heard every", "from", "to", "stays", "data"]]
        for entry in entries {
            rows.append([entry.name, "\(entry.advertiser.address)",
                         entry.sentAs.map { $0 == entry.advertiser.address ? "(kept)" : "\($0)" } ?? "(the kernel's)",
                         entry.pduType, String(format: "%.1f ms", entry.interval),
                         entry.achievedInterval.map { String(format: "%.1f ms", $0) } ?? "never",
                         String(format: "%.1f s", entry.start), String(format: "%.1f s", entry.end), "\(entry.spans.count)",
                         HexText.format(entry.advertiser.data)])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(zip(row, widths).enumerated().map { column, cell in
                column == row.count - 1 ? cell.0 : cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
        }
        for entry in entries where entry.spans.count > 1 {
            lines.append("\(entry.name) is there " + entry.spans.map { String(format: "%.1f-%.1f s", $0.lowerBound, $0.upperBound) }
                .joined(separator: ", "))
        }
        return lines
    }

    /// One advertiser's `plan` JSON line.
    static func planLine(_ entry: Entry) -> String {
        var object = JSONObject()
        object.add("event", literal: "plan")
        object.add("name", entry.name)
        object.add("address", address: entry.advertiser.address)
        object.add("addressType", addressType: entry.advertiser.addressType)
        if let sentAs = entry.sentAs { object.add("sentAs", address: sentAs) } else { object.addNull("sentAs") }
        object.add("pduType", entry.pduType)
        object.add("capturedPduType", entry.capturedPDUType)
        object.add("interval", number: "\(entry.interval)")
        if let achieved = entry.achievedInterval {
            object.add("achievedInterval", number: "\((achieved * 10).rounded() / 10)")
        } else {
            object.addNull("achievedInterval")
        }
        object.add("turns", entry.onAir.count)
        if let power = entry.txPower { object.add("txPower", Int(power)) } else { object.addNull("txPower") }
        if let rssi = entry.advertiser.rssi { object.add("rssi", rssi) } else { object.addNull("rssi") }
        if let captured = entry.advertiser.interval {
            object.add("capturedInterval", number: "\((captured * 10).rounded() / 10)")
        } else {
            object.addNull("capturedInterval")
        }
        object.add("start", number: "\((entry.start * 1000).rounded() / 1000)")
        object.add("end", number: "\((entry.end * 1000).rounded() / 1000)")
        object.add("spans", ranges: entry.spans)
        object.add("reports", entry.advertiser.reports)
        object.add("data", hex: entry.advertiser.data)
        return object.line
    }

    /// What was sent, per advertiser, as the plan had it on the air for `seconds` (a `sent`
    /// line each), then the `replayed` line: how long it took against the plan and how late
    /// its changes came (`lateness`).
    /// - Parameters:
    ///   - rounds: looping, how many rounds were planned (nil: until a signal).
    ///   - ending: why it ended ("the capture's end", "interrupted").
    public func outcomeLines(after seconds: Double, loops: Bool, rounds: Int? = 1, lateness: ScenarioOutcome.Lateness,
                             ending: String, json: Bool) -> [String] {
        var lines: [String] = []
        for entry in entries {
            let sent = sent(entry, after: seconds, loops: loops)
            if json {
                var object = JSONObject()
                object.add("event", literal: "sent")
                object.add("name", entry.name)
                if let sentAs = entry.sentAs { object.add("sentAs", address: sentAs) } else { object.addNull("sentAs") }
                object.add("onAirSeconds", number: "\((sent.seconds * 10).rounded() / 10)")
                object.add("events", sent.events)
                lines.append(object.line)
            } else {
                lines.append("\(entry.name): on the air " + String(format: "%.1f s", sent.seconds) + ", about \(sent.events) events"
                             + (entry.sentAs.map { " from \($0)" } ?? ""))
            }
        }
        if json {
            var object = JSONObject()
            object.add("event", literal: "replayed")
            object.add("advertisers", entries.count)
            object.add("seconds", number: "\((seconds * 10).rounded() / 10)")
            if let rounds {
                object.add("planned", number: "\((length * Double(rounds) * 10).rounded() / 10)")
            } else {
                object.addNull("planned")
            }
            object.add("largestLateness", number: "\((lateness.largest * 1000).rounded() / 1000)")
            object.add("meanLateness", number: "\((lateness.mean * 1000).rounded() / 1000)")
            object.add("totalLateness", number: "\((lateness.total * 1000).rounded() / 1000)")
            object.add("changes", lateness.steps)
            object.add("largestEarliness", number: "\((lateness.largestEarliness * 1000).rounded() / 1000)")
            object.add("ended", ending)
            lines.append(object.line)
        } else {
            lines.append("replayed \(entries.count) advertiser\(entries.count == 1 ? "" : "s") for "
                         + String(format: "%.1f s", seconds) + " (\(ending)); its changes came at most "
                         + String(format: "%.3f s", lateness.largest) + " late and "
                         + String(format: "%.3f s", lateness.largestEarliness) + " early")
        }
        return lines
    }

    /// Looping, the whole rounds `duration` seconds hold (at least one); nil: until a signal.
    public func rounds(in duration: Double?) -> Int? {
        duration.map { max(1, Int(($0 / max(length, 0.001)).rounded(.down))) }
    }

    /// Changes later than this (seconds) after they were due are said at the end.
    public static let lateWarning = 0.2

    /// The warning for a replay whose changes came later than `lateWarning`; nil: none.
    public static func lateness(_ lateness: ScenarioOutcome.Lateness) -> String? {
        guard lateness.largest > lateWarning else { return nil }
        return "changes came up to " + String(format: "%.2f s", lateness.largest) + " after they were due: the controller "
            + "could not keep up with the plan (fewer at once with --sets, longer --turn, or a lower --speed)"
    }
}
