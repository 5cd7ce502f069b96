// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
import BeaconHost
import BeaconTracking
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The reports a scan's handler has read and the observer not yet taken.
private final class Arrivals {
    var reports: [ScanReport] = []
}

/// The stage's descriptors in the observer's loop: readable, the wait ends (the stage has
/// something to take in); the stage reads them itself.
private final class StageSource: RunLoopSource {
    private let current: () -> [Int32]
    var woke = false

    init(descriptors: @escaping () -> [Int32]) {
        current = descriptors
    }

    var descriptors: [Int32] { current() }
    func serve() { woke = true }
}

/// The real clock, and the reports of a second device scanning (or none: it only waits).
/// The wait is the one loop type's (`EventLoop`): `interrupt` (a signal's) ends it, the
/// scanner's link brings reports (a `ScanSource`), and one of `wake` (the stage's controller
/// link and watchers, as they are at each wait) ends it as a deadline come early.
public final class LiveObserver: ScenarioObserver {
    private let scan: ScanSource?
    private let loop: EventLoop
    /// Whether one of the stage's descriptors was readable in the last wait.
    private let stage: StageSource
    /// Reports read and not yet observed (the scan's handler adds to them).
    private let arrived = Arrivals()
    private let origin = ContinuousClock.now

    /// - Parameter sources: served in each wait beside the scan (the metrics endpoint); they
    ///   do not end it.
    public init(scanner: AdvertisementScanner?, interrupt: Int32?, wake: @escaping () -> [Int32] = { [] },
                beside sources: [any RunLoopSource] = []) {
        let stage = StageSource(descriptors: wake)
        self.stage = stage
        scan = scanner.map { [arrived] scanner in
            ScanSource(scanner: scanner) { report in
                arrived.reports.append(report)
                return true
            }
        }
        loop = EventLoop(interrupt: interrupt, sources: [stage] + [scan].compactMap { $0 } + sources, what: "the scenario's wait")
    }

    deinit { loop.close() }

    public var now: Double {
        origin.duration(to: .now).inSeconds
    }

    public func queued() throws(HostError) -> [ScanReport] {
        var reports = arrived.reports
        arrived.reports = []
        while let scanner = scan?.scanner, reports.count < 10_000, let report = try scanner.nextReport(timeout: .zero) {
            reports.append(report)
        }
        return reports
    }

    public func next(until deadline: Double) throws(HostError) -> Observation {
        if !arrived.reports.isEmpty { return .report(arrived.reports.removeFirst()) }
        let end = origin + .microseconds(Int64((deadline * 1_000_000).rounded()))
        stage.woke = false
        let interrupted = try loop.run(until: end) { [self] in arrived.reports.isEmpty && !stage.woke && scan?.ended != true }
        if let failure = scan?.failure { throw failure }
        if interrupted { return .interrupted }
        if !arrived.reports.isEmpty { return .report(arrived.reports.removeFirst()) }
        return .deadline
    }

    /// The reports read and not yet taken (`next`, `queued`).
    package var unread: Int { arrived.reports.count }

    public func wait(beside sources: [any RunLoopSource], while busy: () -> Bool) throws(HostError) -> Bool {
        for source in sources { loop.add(source) }
        // They leave the loop whatever ends the wait.
        defer { loop.remove(sources) }
        let interrupted = try loop.run(until: nil) { [scan] in busy() && scan?.ended != true }
        if let failure = scan?.failure { throw failure }
        return interrupted
    }
}
