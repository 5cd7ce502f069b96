// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconReports
import BeaconTracking
import Foundation

/// A capture's advertisers put back on the air (`replay`), planned before anything is sent:
/// each with its data and scan response byte for byte, its PDU type, its interval, an address
/// (a static random one kept; any other a static random one of its own, no two alike), coming
/// and going at the capture's offsets (scaled by the speed). Run as a scenario: each advertiser
/// a beacon on a set of its own, advertised and stopped on the capture's timeline.
public struct ReplayPlan: Sendable {
    public struct Entry: Sendable, Equatable {
        /// Its name in the run: `a1`, `a2`, ... in the order first heard.
        public var name: String
        public var advertiser: CapturedAdvertiser
        /// The address it goes on the air from; nil: the one the kernel chooses (through the
        /// management API, which sets no address of a beacon's own).
        public var sentAs: BluetoothAddress?
        /// The interval it advertises at, in 0.625 ms units.
        public var intervalUnits: UInt32
        /// Each stay, in order, in seconds from the replay's start: the capture's (a silence
        /// `Presence.isGoing` calls a going is one here), each to its last event's period.
        public var spans: [ClosedRange<Double>]
        /// When it comes first and goes last, in seconds from the replay's start.
        public var start: Double { spans.first?.lowerBound ?? 0 }
        public var end: Double { spans.last?.upperBound ?? 0 }
        /// Where what goes on the air is not the capture's PDU type, why (said before the plan).
        public var pduNote: String?
        /// Its TX power in dBm (its strength in the capture relative to the strongest: 0 dBm for
        /// that one); nil: the controller's default (no RSSI, or strength not kept).
        public var txPower: Int8?
        /// When it is on the air within that span, in order: the whole span, or, where more
        /// advertisers are there than sets, its turns.
        public var onAir: [ClosedRange<Double>] = []

        /// The mean period, in ms, a receiver hears it at over its span under the plan: its
        /// interval plus advDelay's mean (5 ms), stretched by the share of the span it is on the
        /// air; nil when the plan gives it no time on the air.
        public var achievedInterval: Double? {
            let span = spans.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
            let on = onAir.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
            guard on > 0, span > 0 else { return nil }
            return (interval + ReplayPlan.advertisingDelay) * span / on
        }

        /// The interval in ms, as sent.
        public var interval: Double { Double(intervalUnits) * 0.625 }
        /// Whether it goes in extended PDUs: as captured (an extended report), or data longer
        /// than a legacy PDU holds.
        public var extendedPDUs: Bool {
            !advertiser.kind.contains(.legacy) || advertiser.data.count > AdvertisingData.legacyMaximumLength
        }

        /// The PDU type it is sent with (`pduNote`: why it is not the captured one).
        public var pduType: String {
            if extendedPDUs { return "ADV_EXT_IND" + (advertiser.kind.contains(.connectable) ? " (connectable)" : "") }
            if advertiser.kind.contains(.connectable) { return "ADV_IND" }
            return scannable ? "ADV_SCAN_IND" : "ADV_NONCONN_IND"
        }

        /// The PDU type the capture has, as `pduType` names them.
        public var capturedPDUType: String {
            let kind = advertiser.kind
            if extendedPDUs {
                return "ADV_EXT_IND" + (kind.contains(.connectable) ? " (connectable)" : kind.contains(.scannable) ? " (scannable)" : "")
            }
            if kind.contains(.connectable) { return "ADV_IND" }
            return capturedScannable ? "ADV_SCAN_IND" : "ADV_NONCONN_IND"
        }

        /// Whether the capture has it scannable: a scannable PDU, or a scan response heard.
        var capturedScannable: Bool { advertiser.scanResponse != nil || advertiser.kind.contains(.scannable) }

        /// Whether it goes out scannable (legacy, not connectable): with its scan response, or
        /// an empty one where the capture has none (a passive scanner asks for none).
        public internal(set) var scannable = false
    }

    public var entries: [Entry]
    /// When the replay ends, in seconds: when the capture does (scaled).
    public var length: Double
    /// How many advertisers it puts on the air at once (the sets it was planned for; nil: as
    /// many as the capture has at once).
    public var sets: Int?
    /// Where advertisers take turns, how long each turn is, in seconds.
    public var turn: Double
    /// The capture's advertisers left out, scan responses sent without, PDU types this host
    /// sends otherwise and stays joined, each with why: said before the plan.
    public var leftOut: [String] = []
    /// The most turns a plan makes (a capture hours long in short turns is refused: `--duration`
    /// or a longer turn).
    public static let mostTurns = 100_000
    /// How far below the strongest advertiser's TX power another's goes at most, in dB: the
    /// capture's weakest are still heard in the lab.
    public static let quietest = 30
    /// The mean delay the link layer adds to each advertising event (advDelay: 0 to 10 ms), in ms.
    public static let advertisingDelay = 5.0

    /// Why there is nothing to replay, or what cannot be replayed.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// - Parameters:
    ///   - speed: how much faster than the capture (2: twice as fast; the intervals are kept).
    ///   - only: the advertisers to replay (their addresses, beacons, strength; `.none`: every one).
    ///   - duration: at most this many seconds of the capture (scaled), from its start.
    ///   - ownAddresses: each goes out from an address of its own (HCI sets); false: from the
    ///     one the kernel chooses.
    ///   - strength: each advertiser's TX power from its median RSSI in the capture, relative
    ///     to the strongest's (0 dBm), at most `quietest` dB below it; false: none set.
    ///   - sets: how many advertisers may be on the air at once (a controller's sets); where more
    ///     are there at once, they take turns of `turn` seconds, the ones on the air least
    ///     lately first. nil: no limit.
    /// - Throws: `Refusal` when no advertiser is left (an advertiser this host cannot send, more
    ///   than 251 bytes or data that is no list of AD structures, is left out: `leftOut`), or the
    ///   turns would be more than `mostTurns`.
    /// The longest plan made (without --duration): a day.
    public static let longestPlan: Double = 86_400

    ///   - scannableWithoutResponse: whether this host sends scannable advertising with an
    ///     empty scan response (raw HCI does; the kernel's management API makes an instance
    ///     without scan response data non-connectable).
    public init(_ advertisers: [CapturedAdvertiser], speed: Double = 1, only: ScanFilter = .none,
                duration: Double? = nil, ownAddresses: Bool = true, strength: Bool = false, sets: Int? = nil, turn: Double = 1,
                scannableWithoutResponse: Bool = true) throws(Refusal) {
        let chosen = advertisers.filter { only.accepts(address: $0.address, data: $0.data, rssi: $0.rssi) }
        guard !advertisers.isEmpty else { throw Refusal(description: "the capture holds no advertising report") }
        guard !chosen.isEmpty else {
            let what = only.choosesByAddressOnly ? "is at the address given to --only" : "passes the filter given"
            throw Refusal(description: "no advertiser of the capture \(what) (the capture's: "
                          + advertisers.prefix(5).map { "\($0.address)" }.joined(separator: ", ")
                          + (advertisers.count > 5 ? ", ..." : "") + ")")
        }
        var used = Set<BluetoothAddress>()
        var entries: [Entry] = []
        var leftOut: [String] = []
        for var advertiser in chosen {
            // What this host cannot send is left out, and said; the rest is replayed.
            guard advertiser.data.count <= AdvertisingData.extendedPDUMaximumLength else {
                leftOut.append("\(advertiser.address): \(advertiser.data.count) bytes of advertising data, more than the "
                               + "\(AdvertisingData.extendedPDUMaximumLength) this host sends: left out")
                continue
            }
            do {
                _ = try AdvertisingData(parsing: advertiser.data)
            } catch {
                leftOut.append("\(advertiser.address): its advertising data \(HexText.format(advertiser.data)) is no list of AD "
                               + "structures (\(error)): left out")
                continue
            }
            if let response = advertiser.scanResponse {
                do {
                    _ = try AdvertisingData(parsing: response)
                } catch {
                    leftOut.append("\(advertiser.address): its scan response \(HexText.format(response)) is no list of AD "
                                   + "structures (\(error)): sent without it")
                    advertiser.scanResponse = nil
                }
            }
            guard advertiser.first.isFinite, advertiser.last.isFinite else {
                leftOut.append("\(advertiser.address): its reports carry no finite time: left out")
                continue
            }
            let index = entries.count
            var address = advertiser.address
            if advertiser.addressType != .randomDevice || !address.isStaticRandom || used.contains(address) {
                repeat { address = Advertiser.makeStaticRandomAddress() } while used.contains(address)
            }
            used.insert(address)
            let milliseconds = advertiser.interval ?? 100
            let units = AdvertisingOptions.units(milliseconds: milliseconds) ?? 160
            let interval = Double(units) * 0.000625
            // It stays for its last event's period, so that a receiver hears that event too.
            // A capture's clock may step back (records out of order): the span is from the
            // earliest report to the latest, never before the capture's start.
            let earliest = max(0, min(advertiser.first, advertiser.last)), latest = max(0, advertiser.first, advertiser.last)
            let stays = advertiser.spans.isEmpty ? [earliest...latest] : advertiser.spans
            let spans = stays.map { max(0, $0.lowerBound) / speed...max(0, $0.upperBound) / speed + interval }
            var entry = Entry(name: "a\(index + 1)", advertiser: advertiser, sentAs: ownAddresses ? address : nil,
                              intervalUnits: units, spans: spans)
            if advertiser.silencesMerged > 0 {
                leftOut.append("\(entry.name) (\(advertiser.address)): more than \(CaptureSurvey.mostSpans) stays: its last "
                               + "\(advertiser.silencesMerged) silence\(advertiser.silencesMerged == 1 ? "" : "s") replayed as presence")
            }
            if !entry.extendedPDUs && !advertiser.kind.contains(.connectable) && entry.capturedScannable {
                if advertiser.scanResponse?.isEmpty == false || scannableWithoutResponse {
                    entry.scannable = true
                } else {
                    entry.pduNote = "the kernel's management API sends no scannable advertising without scan response data "
                        + "(the capture has none: a passive scan): --access raw sends it"
                }
            } else if entry.extendedPDUs && !advertiser.kind.contains(.connectable) && advertiser.kind.contains(.scannable) {
                entry.pduNote = "a scannable extended PDU carries no advertising data: its data goes in a non-scannable one"
            }
            if let note = entry.pduNote {
                leftOut.append("\(entry.name) (\(advertiser.address)): captured as \(entry.capturedPDUType), sent as "
                               + "\(entry.pduType): \(note)")
            }
            entries.append(entry)
        }
        self.leftOut = leftOut
        guard !entries.isEmpty else {
            throw Refusal(description: "no advertiser of the capture can be sent: " + leftOut.joined(separator: "; "))
        }
        if let duration {
            entries = entries.filter { $0.start < duration }.map { entry in
                var cut = entry
                cut.spans = entry.spans.filter { $0.lowerBound < duration }.map { $0.lowerBound...min($0.upperBound, duration) }
                return cut
            }
        }
        length = entries.map(\.end).max() ?? 0
        // A capture whose timestamps span more than a day (a clock that jumped, a damaged
        // record) would have the replay wait that long: refused, unless --duration cuts it.
        guard length.isFinite, length <= Self.longestPlan else {
            throw Refusal(description: "the capture's advertisers span \(length.isFinite ? "\(Int(length)) s" : "no finite time") at "
                          + "speed \(speed), more than a day (\(Int(Self.longestPlan)) s: a timestamp out of place?): replay a "
                          + "part of it with --duration SECONDS")
        }
        if strength, let strongest = entries.compactMap(\.advertiser.rssi).max() {
            for index in entries.indices {
                guard let rssi = entries[index].advertiser.rssi else { continue }
                entries[index].txPower = Int8(max(-Self.quietest, rssi - strongest))
            }
        }
        self.sets = sets
        self.turn = turn
        for index in entries.indices { entries[index].onAir = entries[index].spans }
        self.entries = entries
        if let sets, Self.mostAtOnce(entries) > sets { try takeTurns(sets: max(1, sets)) }
    }

    /// How long `entry` was on the air under the plan by `elapsed` seconds into the run (rounds
    /// after the first only where the run `loops`; else the run ends with the plan, whatever
    /// its start and stop took), and the advertising events that makes at its interval
    /// (advDelay's mean included): what was sent, said at the end.
    public func sent(_ entry: Entry, after elapsed: Double, loops: Bool = false) -> (seconds: Double, events: Int) {
        let elapsed = loops ? elapsed : min(elapsed, length)
        func on(until time: Double) -> Double {
            entry.onAir.reduce(0) { $0 + max(0, min($1.upperBound, time) - $1.lowerBound) }
        }
        let whole = length > 0 ? (elapsed / length).rounded(.down) : 0
        let seconds = whole * on(until: length) + on(until: elapsed - whole * length)
        return (seconds, Int((seconds * 1000 / (entry.interval + Self.advertisingDelay)).rounded(.down)))
    }

    /// The most advertisers there at once.
    static func mostAtOnce(_ entries: [Entry]) -> Int {
        let edges = entries.flatMap { $0.spans.flatMap { [($0.lowerBound, 1), ($0.upperBound, -1)] } }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var now = 0, most = 0
        for (_, step) in edges {
            now += step
            most = max(most, now)
        }
        return most
    }

    /// Shares `sets` among the advertisers there, turn by turn: in each turn those there get
    /// it, or, where more are there than sets, the ones on the air least lately (then the first
    /// heard). An advertiser on the air in turns that follow each other stays on.
    private mutating func takeTurns(sets: Int) throws(Refusal) {
        // A tail shorter than half a turn belongs to the last turn (no turn of a few milliseconds).
        let turns = max(1, Int((length / turn).rounded()))
        guard turns <= Self.mostTurns else {
            throw Refusal(description: "more advertisers at once than \(sets) sets for \(Int(length)) s would take \(turns) turns "
                          + "of \(turn) s, more than \(Self.mostTurns): replay less of it (--duration) or longer turns")
        }
        var lastOn = [Int](repeating: -1, count: entries.count), onSince = [Int](repeating: -1, count: entries.count)
        var onAir = [[ClosedRange<Double>]](repeating: [], count: entries.count)
        // The advertisers by when they come; those between their first coming and last going
        // now (each turn costs those, not all), and each one's first stay not yet over.
        let coming = entries.indices.sorted { entries[$0].start < entries[$1].start }
        var next = 0
        var there: [Int] = []
        var stay = [Int](repeating: 0, count: entries.count)
        for number in 0..<turns {
            let (from, to) = (Double(number) * turn, number == turns - 1 ? length : min(length, Double(number + 1) * turn))
            while next < coming.count && entries[coming[next]].start < to {
                there.append(coming[next])
                next += 1
            }
            there.removeAll { entries[$0].end <= from }
            // Those there in this turn: a stay of theirs overlaps it (not in a silence).
            let present = there.filter { index in
                let spans = entries[index].spans
                while stay[index] < spans.count && spans[stay[index]].upperBound <= from { stay[index] += 1 }
                return stay[index] < spans.count && spans[stay[index]].lowerBound < to
            }
            // Those off the air first, the least lately on first; then those on, the latest to
            // come on first (one on the longest gives way), so that each gets its share.
            func priority(_ index: Int) -> (Int, Int, Int) {
                lastOn[index] == number - 1 ? (1, -onSince[index], index) : (0, lastOn[index], index)
            }
            let chosen = present.count <= sets ? present : Array(present.sorted { priority($0) < priority($1) }.prefix(sets))
            for index in chosen {
                for span in entries[index].spans[stay[index]...] {
                    guard span.lowerBound < to else { break }
                    let piece = max(from, span.lowerBound)...min(to, span.upperBound)
                    if let last = onAir[index].last, last.upperBound >= piece.lowerBound {
                        onAir[index][onAir[index].count - 1] = last.lowerBound...max(last.upperBound, piece.upperBound)
                    } else {
                        onAir[index].append(piece)
                    }
                }
                if lastOn[index] != number - 1 { onSince[index] = number }
                lastOn[index] = number
            }
        }
        for index in entries.indices { entries[index].onAir = onAir[index] }
    }

    /// The fields each advertiser is described by (the `--beacon` keys): its data and scan
    /// response whole, and its own settings as their keys write them (`AnyBeaconSetting`): its
    /// interval, address, PDU type (as captured, whatever the others need), TX power and
    /// connectability.
    public static func fields(of entry: Entry) -> [String: String] {
        var fields = ["ad": HexText.format(entry.advertiser.data)]
        var own = BeaconParameters(intervalUnits: entry.intervalUnits, txPower: entry.txPower,
                                   address: entry.sentAs.map { .random($0) }, pdu: entry.extendedPDUs ? .extended : .legacy)
        if entry.advertiser.kind.contains(.connectable) { own.connectable = true }
        for setting in AnyBeaconSetting.all {
            if let value = setting.valueText(own) { fields[setting.key] = value }
        }
        // Scannable as captured: its scan response, or an empty one (a passive scan heard none).
        if let response = entry.advertiser.scanResponse, !response.isEmpty {
            fields["scan-response"] = HexText.format(response)
        } else if entry.scannable {
            fields["scan-response"] = ""
        }
        return fields
    }

    /// The plan as a scenario: each advertiser a beacon, advertised and stopped at its times,
    /// `rounds` times over (nil: until a signal). Looping, an advertiser there at the capture's
    /// end and at its start, with no going between (`Presence.isGoing` over the silence across
    /// the wrap), stays on the air from round to round, as it would in a longer capture,
    /// instead of going and coming back at every round's start (a new phase each time).
    /// - Throws: `BeaconDescription.Invalid` for an advertiser whose bytes are no advertising data.
    /// - Parameter prefix: before each advertiser's name (a scenario's `replay` step: `replay1-`).
    public func scenario(device: String?, prefix: String = "", rounds: Int? = 1) throws -> Scenario {
        var beacons: [Scenario.BeaconDefinition] = []
        var events: [(time: Double, order: Int, action: Scenario.Action)] = []
        var carried: [String] = []
        let looping = rounds != 1
        for entry in entries {
            let name = prefix + entry.name
            let fields = Self.fields(of: entry)
            let split = try BeaconDescription.parameters(in: fields)
            beacons.append(Scenario.BeaconDefinition(name: name, fields: split.fields,
                                                     beacon: try BeaconDescription(fields: split.fields)
                                                        .beacon(parameters: split.parameters),
                                                     parameters: split.parameters))
            var onAir = entry.onAir
            if looping, let first = onAir.first, let last = onAir.last,
               !Presence.isGoing(length - last.upperBound + first.lowerBound, interval: entry.interval) {
                // Across the wrap: on from its last stay's start to its first stay's end.
                carried.append(name)
                if onAir.count == 1 {
                    onAir = []
                } else {
                    events.append((first.upperBound, 0, .stop([name])))
                    events.append((last.lowerBound, 1, .advertise([name])))
                    onAir = Array(onAir.dropFirst().dropLast())
                }
            }
            // At one time, those leaving first: their sets go to those coming.
            for span in onAir {
                events.append((span.lowerBound, 1, .advertise([name])))
                events.append((span.upperBound, 0, .stop([name])))
            }
        }
        // On the capture's clock: a paced wait of none starts the timeline, and each wait runs
        // to when the next change is due, the time the changes before it took taken out.
        var steps = [Scenario.Step(.wait(seconds: 0, paced: true))]
        var now = 0.0
        for instant in Self.instants(events) {
            if instant.time > now + 0.0005 {
                let wait = ((instant.time - now) * 1000).rounded() / 1000
                steps.append(Scenario.Step(.wait(seconds: wait, paced: true)))
                now += wait
            }
            // Those that go as one change, then those that come as one.
            if !instant.going.isEmpty { steps.append(Scenario.Step(.stop(instant.going))) }
            if !instant.coming.isEmpty { steps.append(Scenario.Step(.advertise(instant.coming))) }
        }
        // A round ends when the plan does (the last going), not when its last change is made.
        if length > now + 0.0005 { steps.append(Scenario.Step(.wait(seconds: ((length - now) * 1000).rounded() / 1000, paced: true))) }
        guard looping else { return Scenario(device: device, beacons: beacons, steps: steps) }
        // Those carried across the wrap come before the first round and go after the last.
        let round = Scenario.Step(.repeatSteps(times: rounds ?? Self.untilASignal, steps: steps))
        steps = (carried.isEmpty ? [] : [Scenario.Step(.advertise(carried))]) + [round]
            + (carried.isEmpty ? [] : [Scenario.Step(.stop(carried))])
        return Scenario(device: device, beacons: beacons, steps: steps)
    }

    /// Changes due within this many seconds of the first of them are made together, at its
    /// time: a few milliseconds early, rather than each late by the commands of those before it
    /// (a crowd that comes within a few milliseconds, as captured, comes as one change).
    public static let together = 0.05

    /// The advertisers going and coming (`events`: each a stop or an advertise of one, at its
    /// time) grouped into instants: those due within `together` of an instant's first, each
    /// advertiser at most once in an instant (one that goes and comes back goes first).
    static func instants(_ events: [(time: Double, order: Int, action: Scenario.Action)])
        -> [(time: Double, going: [String], coming: [String])] {
        var instants: [(time: Double, going: [String], coming: [String])] = []
        for event in events.sorted(by: { ($0.time, $0.order) < ($1.time, $1.order) }) {
            let (going, coming): ([String], [String]) = switch event.action {
            case let .stop(names?): (names, [])
            case let .advertise(names): ([], names)
            default: ([], [])
            }
            if let last = instants.last, event.time - last.time <= together,
               Set(last.going + last.coming).isDisjoint(with: going + coming) {
                instants[instants.count - 1].going += going
                instants[instants.count - 1].coming += coming
            } else {
                instants.append((event.time, going, coming))
            }
        }
        return instants
    }

    /// Looping until a signal: this many rounds.
    public static let untilASignal = 1_000_000
}
