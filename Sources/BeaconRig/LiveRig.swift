// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A scenario's beacons on a controller through HCI commands, each on an advertising set of
/// its own (`SetAdvertiser`), changed in place.
public final class HCIScenarioStage: ScenarioStage {
    public let advertiser: SetAdvertiser
    private var handles: [String: UInt8] = [:]

    public init(advertiser: SetAdvertiser) {
        self.advertiser = advertiser
    }

    public func advertise(_ name: String, _ beacon: Beacon) throws(HostError) {
        do {
            handles[name] = try advertiser.add(beacon)
        } catch {
            throw Self.naming(name, error)
        }
    }

    public func update(_ name: String, to beacon: Beacon) throws(HostError) {
        // A beacon not on the air has nothing to change: its next advertise uses the new fields.
        guard let handle = handles[name] else { return }
        try advertiser.update(handle, to: beacon)
    }

    public func setTxPower(_ name: String, dBm: Int8) throws(HostError) {
        guard let handle = handles[name] else { throw .unsupported("ramp: '\(name)' is not on the air") }
        try advertiser.setTxPower(handle, to: dBm)
    }

    public func stop(_ name: String) throws(HostError) {
        guard let handle = handles.removeValue(forKey: name) else { return }
        try advertiser.remove(handle)
    }

    public func stopAll() throws(HostError) {
        handles.removeAll()
        try advertiser.removeAll()
    }

    private static func naming(_ name: String, _ error: HostError) -> HostError {
        if case let .unsupported(text) = error { return .unsupported("advertise \(name): \(text)") }
        return error
    }
}

/// The real clock, and the reports of a second device scanning (or none: it only waits),
/// ending a wait early when `interrupt` (a signal's descriptor) is readable.
public final class LiveObserver: ScenarioObserver {
    private let scanner: AdvertisementScanner?
    private let interrupt: Int32?
    private let origin = ContinuousClock.now

    public init(scanner: AdvertisementScanner?, interrupt: Int32?) {
        self.scanner = scanner
        self.interrupt = interrupt
    }

    public var now: Double {
        let duration = origin.duration(to: .now)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    public func next(until deadline: Double) throws(HostError) -> Observation {
        let remaining = deadline - now
        guard remaining > 0 else { return .deadline }
        let timeout = Duration.microseconds(Int64(remaining * 1_000_000))
        if let scanner {
            if let report = try scanner.nextReport(timeout: timeout, interrupt: interrupt) { return .report(report) }
        } else {
            // Nothing to read: sleep until the deadline or the signal.
            var fds = [pollfd(fd: interrupt ?? -1, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(clamping: Int64((remaining * 1000).rounded(.up))))
        }
        if let interrupt, PollProbe.readable(interrupt) { return .interrupted }
        return .deadline
    }
}
