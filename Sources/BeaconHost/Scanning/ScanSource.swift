// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import LinuxSystem

/// A scan as a source of the loop (`EventLoop`): the scanner's link, read when it has input,
/// and when a scan knocked off (a reset, a hardware error) is due to be set up again. Each
/// report goes to `handle`, which returns false to end the scan.
package final class ScanSource: RunLoopSource {
    package let scanner: AdvertisementScanner
    private let handle: (ScanReport) -> Bool
    /// Reports read in one serve at most: the loop sees a signal between floods.
    private let batch = 256
    /// Whether `handle` ended the scan, or the link failed (`failure`).
    package private(set) var ended = false
    /// What ended the scan where the link failed beyond recovery.
    package private(set) var failure: HostError?

    package init(scanner: AdvertisementScanner, handle: @escaping (ScanReport) -> Bool) {
        self.scanner = scanner
        self.handle = handle
    }

    package var descriptors: [Int32] { [scanner.pollDescriptor].compactMap { $0 } }

    package var due: ContinuousClock.Instant? {
        scanner.hasQueued ? .now : scanner.nextDue
    }

    package func serve() {
        guard !ended else { return }
        do throws(HostError) {
            for _ in 0..<batch {
                guard let report = try scanner.nextReport(timeout: .zero) else { return }
                if !handle(report) {
                    ended = true
                    return
                }
            }
        } catch {
            failure = error
            ended = true
        }
    }

    /// Runs the scan in a loop of its own beside `others` until `end`, a signal on
    /// `interrupt`, or `handle` ends it.
    /// - Returns: true when the signal ended it.
    /// - Throws: `HostError` when the link failed.
    package func run(until end: ContinuousClock.Instant?, interrupt: Int32?, beside others: [any RunLoopSource] = [],
                     proceed: () -> Bool = { true }, what: String) throws(HostError) -> Bool {
        let loop = EventLoop(interrupt: interrupt, sources: [self] + others, what: what)
        defer { loop.close() }
        let interrupted = try loop.run(until: end) { [self] in !ended && proceed() }
        if let failure { throw failure }
        return interrupted
    }
}

