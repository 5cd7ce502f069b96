// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The advertising interval of one advertiser, estimated from when its reports arrived.
///
/// Each advertising event comes `interval + advDelay` after the one before, `advDelay` a
/// pseudo-random 0 to 10 ms (Core Vol 6 Part B 4.4.2.2.1); a scanner misses some events, and
/// a busy host reads some reports late. So:
/// - Reads closer together than any two events can be (15 ms; no interval is under 20 ms) are
///   one event heard on its channels and read apart (up to three: its first read is kept), or
///   a burst the host read after being held up (more): a burst's times say nothing of the air,
///   and it is set aside (counted as heard, not timed).
/// - The period to count with is the longest that most spacings are whole multiples of.
/// - Each report is then numbered by the periods since the last report that came on time (one
///   read a quarter period late or more is numbered but never counted from), and the period is
///   the time between the first and the last report on time over the periods between them: a
///   late read in the middle costs nothing, one at an end a few ms over the whole span.
/// - The delay shows as the width of the single-period spacings (uniform over 10 ms on a real
///   controller, none on a virtual one): half of it is taken off, so the interval is what was
///   configured.
public struct IntervalEstimate: Sendable, Hashable {
    /// The mean time between advertising events (the interval and the mean delay), in ms.
    public var eventPeriod: Double
    /// The advertising interval the advertiser was configured with, estimated, in ms.
    public var interval: Double
    /// The mean random delay added to each event, as measured (0 to 5 ms), in ms.
    public var meanDelay: Double
    /// How far the event period may be off (ms, either way), from how the reports at the two
    /// ends of the span scatter.
    public var uncertainty: Double
    /// The spacings between the reports heard, in ms.
    public var minimumSpacing: Double
    public var medianSpacing: Double
    public var p90Spacing: Double
    /// The advertising events the advertiser sent from the first report heard to the last,
    /// estimated, over its stays (`Presence`: a silence that is a going sends nothing).
    public var eventsSent: Int
    /// Its stays: 1, or more where it went and came back (`Presence.isGoing`).
    public var stays = 1
    /// The reports heard (one per event).
    public var eventsHeard: Int
    /// Reports read in a burst or a quarter period late or more: heard, not timed.
    public var lateReads: Int

    /// Whether enough reports came on time for the count of periods to be trusted: at least 16,
    /// and at least half of those heard. With fewer, or a host that read more late, the count
    /// can be wrong by a period, or the period taken for a half or a third of itself
    /// (simulated with a host held up a fifth of the time, it was, from 37 % late or 15 on time).
    public var isSure: Bool {
        eventsHeard - lateReads >= Self.reportsSure && lateReads * 2 <= eventsHeard
    }

    /// Reports on time for a sure estimate.
    public static let reportsSure = 16

    /// Whether a value is further from the event period than a miscount could make it (a
    /// factor of 3.5): an unsure estimate can still tell 1000 ms from 100.
    public func isFar(_ value: Double) -> Bool {
        value * 3.5 < eventPeriod || value > eventPeriod * 3.5
    }

    /// The share of the advertiser's events a report was heard for (0...1).
    public var heardShare: Double { eventsSent > 0 ? min(1, Double(eventsHeard) / Double(eventsSent)) : 0 }

    /// Reports closer than this are one event heard twice (on two channels).
    public static let sameEvent = 0.003
    /// Reads closer than this are a burst the host read late (seconds).
    public static let burst = 0.015
    /// Reports on time needed for an estimate.
    public static let reportsNeeded = 4

    /// How many of the reports at `times` (seconds) could be timed (one per event, bursts a
    /// busy host read apart), and the seconds of listening that would give `reportsNeeded` of
    /// them at the spacing heard (nil with fewer than two).
    public static func listening(_ times: [Double]) -> (onTime: Int, needed: Double?) {
        let timed = onTime(times)
        guard timed.count >= 2 else { return (timed.count, nil) }
        let spacing = (timed[timed.count - 1] - timed[0]) / Double(timed.count - 1)
        return (timed.count, max(1, spacing * Double(reportsNeeded + 2)))
    }

    /// One time per event (reports within `sameEvent` are one), bursts set aside.
    static func onTime(_ times: [Double]) -> [Double] { timedEvents(times).onTime }

    /// One time per event, and how many reads were in bursts (each taken as an event of its own).
    static func timedEvents(_ times: [Double]) -> (onTime: [Double], burstReads: Int) {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= sameEvent }) ?? true {
            events.append(time)
        }
        // Reads closer than `burst` form a group: up to three are one event heard on its three
        // channels and read apart (its first read kept); more are a burst the host read late.
        var onTime: [Double] = []
        var burstReads = 0
        var group: [Double] = []
        func close() {
            if group.count > 3 { burstReads += group.count } else if let first = group.first { onTime.append(first) }
            group.removeAll()
        }
        for time in events {
            if let last = group.last, time - last >= burst { close() }
            group.append(time)
        }
        close()
        return (onTime, burstReads)
    }

    /// The estimate from the times (seconds) reports of one advertiser arrived; nil with fewer
    /// than four reports on time.
    public init?(times: [Double]) {
        var events: [Double] = []
        for time in times.sorted() where events.last.map({ time - $0 >= Self.sameEvent }) ?? true {
            events.append(time)
        }
        let (onTime, burstReads) = Self.timedEvents(times)
        guard onTime.count >= Self.reportsNeeded else { return nil }
        let spacings = zip(onTime.dropFirst(), onTime).map { ($0 - $1) * 1000 }
        let sorted = spacings.sorted()
        func quantile(_ values: [Double], _ q: Double) -> Double {
            values[min(values.count - 1, max(0, Int((Double(values.count - 1) * q).rounded())))]
        }
        // The period to count with: of the spacings in the lower half (and their halves and
        // thirds, for when no single period was heard), the longest that nearly as many
        // spacings are whole multiples of as of any
        // (at least 70 % as many: late reads fit a half period more often by chance).
        func fit(_ period: Double) -> Int {
            spacings.filter { abs($0 / period - ($0 / period).rounded()) <= 0.25 }.count
        }
        var candidates: [Double] = []
        // At most 64 of them, evenly through the lower half: each candidate is scored over every
        // spacing, and a long capture has hundreds of thousands.
        let lower = sorted.prefix(max(1, (sorted.count + 1) / 2)).filter { $0 >= 15 }
        let step = max(1, lower.count / 64)
        for spacing in stride(from: 0, to: lower.count, by: step).map({ lower[$0] }) {
            candidates += [spacing, spacing / 2, spacing / 3].filter { $0 >= 15 }
        }
        if candidates.isEmpty { candidates = [max(15, sorted[0])] }
        let scored = candidates.map { ($0, fit($0)) }
        let best = scored.map(\.1).max() ?? 0
        var base = scored.filter { Double($0.1) >= Double(best) * 0.7 }.map(\.0).max() ?? candidates[0]
        let singles = spacings.filter { ($0 / base).rounded() == 1 && abs($0 / base - 1) <= 0.25 }
        if !singles.isEmpty { base = quantile(singles.sorted(), 0.5) }
        // Number each report by the periods since the last one on time. A report early against
        // that one, and on time against one a little before, shows those after it were late (a
        // host never reads early): they are no longer counted from. Early against all, it is
        // itself late by over half a period.
        // On time: within a quarter period of where the count puts it, and the random delay's
        // own 10 ms spread beside a short period.
        let onTimeWithin = min(base * 0.4, base * 0.25 + 8)
        var numbers = [0]
        var anchors = [0]
        func place(_ index: Int, after anchor: Int) -> (number: Int, residual: Double) {
            let elapsed = (onTime[index] - onTime[anchor]) * 1000
            let number = numbers[anchor] + max(1, Int((elapsed / base).rounded()))
            return (number, elapsed - Double(number - numbers[anchor]) * base)
        }
        // Reports off the count against every one on time, on one side, each on time against the
        // one before: three in a row start a phase of their own. Early ones say the ones counted
        // from were all late (the first report among them); late ones say the advertiser's events
        // moved later (a virtual controller held up by its host, a controller's clock reset) or
        // the host's delay did.
        var off: (early: Bool, run: [Int]) = (false, [])
        // The longest phase counted so far, where a later one replaced it: the period is counted
        // within one phase (a constant offset changes no spacing within it).
        var longest: [Int] = []
        func newPhase(_ first: [Int]) {
            if anchors.count > longest.count { longest = anchors }
            anchors = first
        }
        for index in 1..<onTime.count {
            var (number, residual) = place(index, after: anchors[anchors.count - 1])
            if residual < -onTimeWithin {
                // The last few on time may all have been late (one stall, several reports).
                for back in stride(from: anchors.count - 2, through: max(0, anchors.count - 6), by: -1) {
                    let before = place(index, after: anchors[back])
                    guard abs(before.residual) <= onTimeWithin else { continue }
                    anchors.removeLast(anchors.count - 1 - back)
                    (number, residual) = before
                    break
                }
            }
            let early = residual < -onTimeWithin
            if early || residual > onTimeWithin {
                if off.early == early, let last = off.run.last, case let joined = place(index, after: last),
                   abs(joined.residual) <= onTimeWithin {
                    number = joined.number
                    off.run.append(index)
                } else {
                    off = (early, [index])
                }
                numbers.append(number)
                if off.run.count == 3 {
                    newPhase(off.run)
                    off.run = []
                }
                continue
            }
            off.run = []
            numbers.append(number)
            anchors.append(index)
        }
        if longest.count > anchors.count { anchors = longest }
        guard anchors.count >= 2, numbers[anchors[anchors.count - 1]] > numbers[anchors[0]] else { return nil }
        // Nine steps in ten between reports on time a multiple of two (or three): the period is that
        // multiple of the base (a beacon heard at every second event cannot be told from one
        // advertising half as often; the evidence says the longer).
        let steps = zip(anchors.dropFirst(), anchors).map { numbers[$0] - numbers[$1] }
        if steps.count >= 6,
           let factor = [3, 2].first(where: { factor in steps.filter { $0 % factor == 0 }.count * 10 >= steps.count * 9 }) {
            for index in numbers.indices { numbers[index] /= factor }
        }
        // The period over the whole span, from the least late of the first few reports on time
        // to the least late of the last few (a host reads late, never early).
        func residuals(_ slice: ArraySlice<Int>, from start: Int, period: Double) -> [(index: Int, residual: Double)] {
            slice.map { ($0, (onTime[$0] - onTime[start]) * 1000 - Double(numbers[$0] - numbers[start]) * period) }
        }
        var first = anchors[0], last = anchors[anchors.count - 1]
        var eventPeriod = (onTime[last] - onTime[first]) * 1000 / Double(numbers[last] - numbers[first])
        // The first few and the last few, apart (with fewer than ten, each half).
        let ends = min(5, anchors.count / 2)
        for _ in 0..<2 {
            let start = first
            let head = residuals(anchors.prefix(ends), from: start, period: eventPeriod)
            let tail = residuals(anchors.suffix(ends), from: start, period: eventPeriod)
            first = head.min { $0.residual < $1.residual }!.index
            last = tail.min { $0.residual < $1.residual }!.index
            guard numbers[last] > numbers[first] else { return nil }
            eventPeriod = (onTime[last] - onTime[first]) * 1000 / Double(numbers[last] - numbers[first])
        }
        self.eventPeriod = eventPeriod
        // How late the ends may still be: the scatter of the first and the last few about the line.
        func scatter(_ slice: ArraySlice<Int>) -> Double {
            let values = residuals(slice, from: first, period: eventPeriod).map(\.residual)
            return (values.max() ?? 0) - (values.min() ?? 0)
        }
        uncertainty = (scatter(anchors.prefix(ends)) + scatter(anchors.suffix(ends))) / Double(numbers[last] - numbers[first])
        let single = zip(onTime.indices.dropFirst(), onTime.indices).filter { numbers[$0] - numbers[$1] == 1 }
            .map { (onTime[$0] - onTime[$1]) * 1000 }.sorted()
        // A uniform delay over width w: the single spacings' 10th to 90th percentile is 0.8 w.
        let width = single.count >= 5 ? (quantile(single, 0.9) - quantile(single, 0.1)) / 0.8 : 0
        meanDelay = min(5, max(0, width / 2))
        interval = eventPeriod - meanDelay
        minimumSpacing = sorted[0]
        medianSpacing = quantile(sorted, 0.5)
        p90Spacing = quantile(sorted, 0.9)
        eventsHeard = onTime.count + burstReads
        lateReads = eventsHeard - anchors.count
        let present = Presence.stays(events, interval: eventPeriod)
        stays = present.count
        eventsSent = present.reduce(0) { $0 + Int((($1.upperBound - $1.lowerBound) * 1000 / eventPeriod).rounded()) + 1 }
    }
}
