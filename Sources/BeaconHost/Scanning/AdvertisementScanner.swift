// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Scanning on a controller with legacy scan commands (which also report legacy PDUs sent
/// from extended advertising sets, the kind beacons use).
public final class AdvertisementScanner {
    public struct Options: Sendable {
        public var active: Bool
        /// 0.625 ms units.
        public var intervalUnits: UInt16
        public var windowUnits: UInt16
        /// Let the controller drop duplicate reports (ranging and monitoring want them all).
        public var controllerFiltersDuplicates: Bool
        /// On a controller the host owns, scan with the extended commands where it has them (to
        /// hear extended advertising PDUs too); kernel adapters are scanned so by default.
        public var extended: Bool
        /// Scan the LE Coded PHY (long range) as well as LE 1M, with the extended commands
        /// (implies `extended`); refused where the controller lacks either.
        public var codedPHY: Bool

        public init(active: Bool = false, intervalUnits: UInt16 = 0x0010, windowUnits: UInt16 = 0x0010,
                    controllerFiltersDuplicates: Bool = false, extended: Bool = false, codedPHY: Bool = false) {
            self.active = active
            self.intervalUnits = intervalUnits
            self.windowUnits = windowUnits
            self.controllerFiltersDuplicates = controllerFiltersDuplicates
            self.extended = extended || codedPHY
            self.codedPHY = codedPHY
        }
    }

    package let controller: HCIController
    private var queued: [ScanReport] = []
    /// Whether the scan runs with the extended scanning commands.
    public private(set) var usesExtendedCommands = false
    /// Called when the scan is knocked off (a hardware error, a controller reset) and when it
    /// is on again, with a line for the user.
    public var log: ((String) -> Void)?

    /// How the scan was started, to start it the same way after a disruption.
    private var started: (options: Options, ownsController: Bool, legacy: Bool)?
    /// While the scan is off after a disruption: what knocked it off, since when, and when to
    /// try again after what delay.
    private struct Recovery {
        var cause: Disruption
        var since: ContinuousClock.Instant
        var retryAt: ContinuousClock.Instant
        var delay: Duration
    }
    private var recovery: Recovery?
    /// Seen by the controller's observer: someone reset the controller under the scan.
    private var resetSeen = false

    package init(controller: HCIController) {
        self.controller = controller
        controller.observer = { [weak self] packet in
            switch packet {
            case let .command(command) where command.opcode == .reset: self?.resetSeen = true
            case let .commandComplete(complete) where complete.opcode == .reset: self?.resetSeen = true
            default: break
            }
        }
    }

    /// Sets the scan up and enables it. Owned controllers are reset first and scanned with
    /// legacy commands; kernel adapters with the extended commands where they have them,
    /// because the kernel itself drives such controllers with extended commands and the
    /// controller then refuses legacy ones (0x0C).
    /// - Parameter legacy: use the legacy commands even where extended ones exist.
    /// - Throws: `HostError` naming a refused step.
    public func start(options: Options = Options(), ownsController: Bool = true, legacy: Bool = false) throws(HostError) {
        let context = "interval \(options.intervalUnits) x 0.625 ms, window \(options.windowUnits) x 0.625 ms"
        started = (options, ownsController, legacy)
        if ownsController {
            try ControllerInfo.initialize(controller)
            if options.extended && !legacy {
                usesExtendedCommands = try controller.send(ReadLocalSupportedCommands()).supportsExtendedScanning
            }
        } else if !legacy {
            usesExtendedCommands = try controller.send(ReadLocalSupportedCommands()).supportsExtendedScanning
        }
        if options.codedPHY {
            guard usesExtendedCommands else {
                throw .refused(Refusal(.codedPHY, legacy ? .legacyChosen : .controllerLacksExtended))
            }
            guard try controller.send(LEReadLocalSupportedFeatures()).features.contains(.leCodedPHY) else {
                throw .refused(Refusal(.codedPHY, .controllerLacksCodedPHY))
            }
        }
        if usesExtendedCommands {
            let phy = LESetExtendedScanParameters.PHYParameters(scanType: options.active ? .active : .passive,
                                                                interval: options.intervalUnits,
                                                                window: options.windowUnits)
            try controller.sendDisable(LESetExtendedScanEnable(enable: false))
            // Bit 0: LE 1M; bit 2: LE Coded, with the same type, interval and window.
            let parameters = try HostError.encoding("LE Set Extended Scan Parameters") { () throws(CodecError) in
                options.codedPHY ? try LESetExtendedScanParameters(scanningPHYs: 0x05, phys: [phy, phy])
                    : try LESetExtendedScanParameters(phys: [phy])
            }
            try controller.send(parameters, context: context + (options.codedPHY ? ", LE 1M and LE Coded" : ""))
        } else {
            try controller.sendDisable(LESetScanEnable(enable: false))
            try controller.send(LESetScanParameters(scanType: options.active ? .active : .passive,
                                                    interval: options.intervalUnits, window: options.windowUnits),
                                context: context)
        }
        try switchOn(filteringDuplicates: options.controllerFiltersDuplicates)
    }

    /// Enables the scan with the commands it was set up with.
    private func switchOn(filteringDuplicates filter: Bool) throws(HostError) {
        if usesExtendedCommands {
            try controller.send(LESetExtendedScanEnable(enable: true, filterDuplicates: filter ? 1 : 0))
        } else {
            try controller.send(LESetScanEnable(enable: true, filterDuplicates: filter))
        }
    }

    /// The link's socket: readable when `nextReport` has something to read (a caller's loop
    /// waits on it with its own descriptors, then calls `nextReport(timeout: .zero)`).
    public var pollDescriptor: Int32? { controller.transport.pollDescriptor }

    /// When the scan knocked off (a reset, a hardware error) is next tried again: a caller's
    /// loop calls `nextReport` then, input or not.
    public var nextDue: ContinuousClock.Instant? { recovery?.retryAt }

    /// Whether reports already read wait to be taken (an event brought several).
    var hasQueued: Bool { !queued.isEmpty }

    /// The next report, or nil once `timeout` passes (`.zero`: what has arrived, read
    /// without waiting).
    ///
    /// A hardware error or a controller reset (by another program, or the kernel after a
    /// hardware error) knocks the scan off; it is set up again as it was started (an owned
    /// controller reset first) `Emitter.settleTime` later, retried after 0.2, 0.4, ... up to
    /// 5 s while that fails, saying so through `log`.
    /// - Throws: `HostError` when the link fails.
    public func nextReport(timeout: Duration) throws(HostError) -> ScanReport? {
        if !queued.isEmpty { return queued.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        var polled = false
        while true {
            if resetSeen {
                resetSeen = false
                knockedOff(.controllerReset)
            }
            if let off = recovery {
                guard ContinuousClock.now >= off.retryAt else {
                    let wait = ContinuousClock.now.duration(to: min(off.retryAt, deadline))
                    _ = Poll.pause(max(wait, .zero), interrupt: nil)
                    if ContinuousClock.now >= deadline { return nil }
                    continue
                }
                try resume()
                continue
            }
            // Past the deadline, what has arrived is still taken in (the canary drains its scan
            // with a zero timeout).
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero || !polled else { return nil }
            polled = true
            let event: HCIEvent?
            do {
                event = try controller.nextEvent(timeout: max(remaining, .zero))
            } catch let .hardwareError(code) {
                knockedOff(.hardwareError(code: code))
                continue
            }
            guard let event else {
                // The wait also ends early when the observer was handed another program's
                // command (a kernel socket): only the deadline ends this one.
                if ContinuousClock.now >= deadline { return nil }
                continue
            }
            polled = false  // another event may wait behind this one
            queued = ScanReport.reports(in: event)
            if !queued.isEmpty { return queued.removeFirst() }
        }
    }

    private func knockedOff(_ cause: Disruption) {
        guard started != nil else { return }
        let now = ContinuousClock.now
        if recovery == nil {
            log?("\(cause): scanning again in \(Emitter.settleTime)")
            recovery = Recovery(cause: cause, since: now, retryAt: now + Emitter.settleTime, delay: Emitter.settleTime)
        } else {
            recovery?.retryAt = now + Emitter.settleTime
        }
    }

    /// Starts the scan again as it was started; a failure other than the link's is tried
    /// again later.
    private func resume() throws(HostError) {
        guard let started, let off = recovery else { return }
        do {
            try start(options: started.options, ownsController: started.ownsController, legacy: started.legacy)
            resetSeen = false  // the scan's own Reset, on an owned controller
            recovery = nil
            let gap = off.since.duration(to: .now)
            log?("scanning again after \(Int((gap.inSeconds * 1000).rounded())) ms off (\(off.cause))")
        } catch let error where Self.endsTheScan(error) {
            throw error
        } catch {
            let delay = min(off.delay * 2, .seconds(5))
            log?("could not scan again yet (trying again in \(delay)): \(error)")
            recovery?.retryAt = .now + delay
            recovery?.delay = delay
        }
    }

    /// What recovery cannot fix: the link failing. A kernel adapter that is down for a moment
    /// (the kernel closes and opens it again after a hardware error) is waited for.
    private static func endsTheScan(_ error: HostError) -> Bool {
        if case .transport(.system(_, ENETDOWN), _) = error { return false }
        if case .transport = error { return true }
        return false
    }

    /// Switches the scan off and on again, as it was started: a controller that reports an
    /// advertiser only when a scan starts (BlueZ's emulator, some firmware with its duplicate
    /// filter stuck) reports it again. Nothing while the scan is off after a disruption.
    /// - Throws: `HostError` when the controller refuses or the link fails.
    package func cycle() throws(HostError) {
        guard let started, recovery == nil else { return }
        if usesExtendedCommands {
            try controller.sendDisable(LESetExtendedScanEnable(enable: false))
        } else {
            try controller.sendDisable(LESetScanEnable(enable: false))
        }
        try switchOn(filteringDuplicates: started.options.controllerFiltersDuplicates)
    }

    /// Stops scanning (best effort).
    public func stop() {
        if usesExtendedCommands {
            _ = try? controller.send(LESetExtendedScanEnable(enable: false))
        } else {
            _ = try? controller.send(LESetScanEnable(enable: false))
        }
    }

    /// Stops scanning and closes the link.
    public func close() {
        stop()
        controller.transport.close()
    }
}
