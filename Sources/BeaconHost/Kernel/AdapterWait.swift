// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// Waiting for a kernel adapter that is not there or not up yet: a service that starts before
/// its adapter (hci0 plugged in later, powered on by bluetoothd after boot) waits, saying so,
/// rather than exiting into a restart loop.
package enum AdapterWait {
    /// What adapter `index` (nil: any adapter) lacks now: nil when it is up (or, with
    /// `bringingUp`, when it exists: it will be brought up).
    public static func lack(index: Int?, bringingUp: Bool) -> AdapterAvailability? {
        lack(.kernel(index: index), bringingUp: bringingUp)
    }

    /// What `device` (a kernel adapter by number or address) lacks now; nil for other devices.
    public static func lack(_ device: DeviceSpecification, bringingUp: Bool) -> AdapterAvailability? {
        if case let .adapter(address) = device {
            guard let index = KernelSocketTransport.index(of: address) else { return .gone }
            return lack(.kernel(index: index), bringingUp: bringingUp)
        }
        guard case let .kernel(index) = device else { return nil }
        guard let index else {
            let adapters = KernelSocketTransport.adapters()
            if adapters.contains(where: \.up) { return nil }
            return adapters.isEmpty ? .gone : .down
        }
        guard KernelSocketTransport.exists(index: index) else { return .gone }
        return bringingUp || KernelSocketTransport.isUp(index: index) ? nil : .down
    }

    /// Waits until `device` (a kernel adapter by number or address) is usable: checked again
    /// whenever the kernel says an adapter came, went, went up or down (its device events, where
    /// the socket for them opens and the process may read them: CAP_NET_RAW), and at the
    /// latest every `interval` (the check that needs no event, and the `tick`).
    /// - Parameters:
    ///   - waiting: called when the wait starts and whenever what is missing changes.
    ///   - tick: called at every check (the service manager's watchdog is kept fed).
    /// - Returns: false when `interrupt` became readable (a signal: stop) before it was.
    public static func untilUsable(_ device: DeviceSpecification, bringingUp: Bool, interrupt: Int32?,
                                   interval: Duration = .milliseconds(500),
                                   waiting: (AdapterAvailability) -> Void, tick: () -> Void) -> Bool {
        var reported: AdapterAvailability? = nil
        guard lack(device, bringingUp: bringingUp) != nil else { return true }
        let events = KernelSocketTransport.openDeviceEvents()
        defer { events?.close() }
        while let missing = lack(device, bringingUp: bringingUp) {
            if missing != reported {
                waiting(missing)
                reported = missing
            }
            tick()
            switch wake(events: events, interrupt: interrupt, until: .now + interval) {
            case .interrupted: return false
            case .event, .deadline: continue
            }
        }
        return true
    }

    private enum Wake { case interrupted, event, deadline }

    /// Waits for the kernel's next device event (read and dropped: what it says is checked
    /// anew), `interrupt` or `deadline`.
    private static func wake(events: Descriptor?, interrupt: Int32?, until deadline: ContinuousClock.Instant) -> Wake {
        /// The schedule alone: the interrupt, or the deadline.
        func pause() -> Wake {
            Poll.pause(ContinuousClock.now.duration(to: deadline), interrupt: interrupt) ? .interrupted : .deadline
        }
        let watched = [interrupt.map(Descriptor.init), events].compactMap { $0 }
        guard let ready = try? Poll.waitAny(watched, until: deadline) else { return pause() }
        if interrupt != nil, ready.first == true { return .interrupted }
        guard let events, ready.last == true else { return .deadline }
        var buffer = [UInt8](repeating: 0, count: 64)
        // A socket that fails keeps polling ready: the schedule alone, then.
        guard (try? events.read(into: &buffer)) != nil else { return pause() }
        return .event
    }
}
