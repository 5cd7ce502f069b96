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

    /// Waits until `device` (a kernel adapter by number or address) is usable, checking every `interval`.
    /// - Parameters:
    ///   - waiting: called when the wait starts and whenever what is missing changes.
    ///   - tick: called at every check (the service manager's watchdog is kept fed).
    /// - Returns: false when `interrupt` became readable (a signal: stop) before it was.
    public static func untilUsable(_ device: DeviceSpecification, bringingUp: Bool, interrupt: Int32?,
                                   interval: Duration = .milliseconds(500),
                                   waiting: (AdapterAvailability) -> Void, tick: () -> Void) -> Bool {
        var reported: AdapterAvailability? = nil
        while let missing = lack(device, bringingUp: bringingUp) {
            if missing != reported {
                waiting(missing)
                reported = missing
            }
            tick()
            if Poll.pause(interval, interrupt: interrupt) { return false }
        }
        return true
    }
}
