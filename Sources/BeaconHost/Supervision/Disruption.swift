// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What knocked the beacons off the air while the emitter ran.
public enum Disruption: Hashable, Sendable, CustomStringConvertible {
    /// Another program reset the controller (`hciconfig reset`, the kernel at power on).
    case controllerReset
    /// The controller reported a hardware error (HCI Hardware Error, or the kernel's Controller Error).
    case hardwareError(code: UInt8)
    /// Another program disabled, removed or rewrote this emitter's advertising: the command.
    case advertisingChanged(String)
    /// The kernel removed one of this emitter's advertising instances.
    case instanceRemoved(UInt8)
    /// Another program (its process name) wrote one of this emitter's advertising instances:
    /// the instance is theirs now, and the beacon moves to another.
    case instanceTakenOver(UInt8, by: String)
    /// The controller no longer knows one of this emitter's sets: it refused a command for it
    /// (the command) with Unknown Advertising Identifier. A reset the host has not yet heard of
    /// does this.
    case advertisingLost(String)
    /// The adapter was powered off (through the management interface, or by bluetoothd).
    case poweredOff
    /// The adapter is down (`hciconfig down`).
    case adapterDown
    /// The adapter went away (unplugged, or its driver unloaded).
    case adapterRemoved
    /// The link to the controller closed (a TCP bridge stopped, a serial cable pulled).
    case linkClosed(String)
    /// The canary (`advertise --canary`), a scanner on another device, has not heard these
    /// beacons (their numbers, from 1) for `for`, though the controller accepted every command.
    case notHeard(beacons: [Int], for: Duration)

    /// Whether the adapter itself is unavailable, rather than only the advertising lost:
    /// the cases `--fail-fast` turns into an exit.
    public var adapterUnavailable: Bool {
        switch self {
        case .poweredOff, .adapterDown, .adapterRemoved, .linkClosed: true
        default: false
        }
    }

    /// The error `--fail-fast` exits with: what scripts saw before the emitter waited.
    public func failFastError(device: String) -> HostError {
        switch self {
        case .adapterDown, .poweredOff: .transport(.system(call: "\(device) state", errno: ENETDOWN), device: device)
        case .adapterRemoved: .kernel(call: "\(device) state", errno: ENODEV, adapter: device, adapters: [])
        case .linkClosed: .transport(.closed(transport: device), device: device)
        default: .refused(Refusal(.failFast, .disrupted(device: device, what: "\(self)")))
        }
    }

    /// A short name for JSON output.
    public var code: String {
        switch self {
        case .controllerReset: "controller-reset"
        case .hardwareError: "hardware-error"
        case .advertisingChanged: "advertising-changed"
        case .instanceRemoved: "instance-removed"
        case .instanceTakenOver: "instance-taken-over"
        case .advertisingLost: "advertising-lost"
        case .poweredOff: "powered-off"
        case .adapterDown: "adapter-down"
        case .adapterRemoved: "adapter-removed"
        case .linkClosed: "link-closed"
        case .notHeard: "not-heard"
        }
    }

    public var description: String {
        switch self {
        case .controllerReset: "the controller was reset by another program"
        case let .hardwareError(code): "the controller reported a hardware error (code 0x\(String(code, radix: 16, uppercase: true)))"
        case let .advertisingChanged(command): "another program changed this emitter's advertising (\(command))"
        case let .instanceRemoved(instance): "advertising instance \(instance) was removed"
        case let .instanceTakenOver(instance, process):
            "advertising instance \(instance) was taken over by \(process) (it added its own advertising at that number): "
                + "the beacon moves to another instance, and instance \(instance) is left to \(process)"
        case let .advertisingLost(command): "the controller no longer knows this emitter's advertising set (\(command))"
        case .poweredOff: "the adapter was powered off"
        case .adapterDown: "the adapter is down"
        case .adapterRemoved: "the adapter went away"
        case let .linkClosed(link): "the link to \(link) closed"
        case let .notHeard(beacons, duration):
            (beacons.count == 1 ? "beacon \(beacons[0]) was" : "beacons \(beacons.map(String.init).joined(separator: ", ")) were")
                + " not heard by the canary for \(Self.seconds(duration)) s, though the controller accepted every command"
        }
    }

    /// Seconds with one decimal: "6.2" (messages and the CLI's lines).
    package static func seconds(_ duration: Duration) -> String {
        let tenths = duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}

extension Disruption {
    /// Whether what another program did on a controller (`observed`) takes sets `ours` off the
    /// air: a controller reset, clearing every set, or (by handle) disabling, removing or
    /// rewriting one of them; with legacy advertising (`extended` false), any change of it.
    static func of(_ observed: ObservedPacket, ours: Set<UInt8>, extended: Bool) -> Disruption? {
        switch observed {
        case let .commandComplete(complete):
            guard complete.status == .success else { return nil }
            if complete.opcode == .reset { return .controllerReset }
            if complete.opcode == .leClearAdvertisingSets { return .advertisingChanged("LE Clear Advertising Sets") }
            return nil
        case let .command(command):
            switch (extended, command.opcode) {
            case (true, .leSetExtendedAdvertisingEnable):
                guard let enable = try? LESetExtendedAdvertisingEnable(packet: command), !enable.enable,
                      enable.sets.isEmpty || enable.sets.contains(where: { ours.contains($0.handle) }) else { return nil }
                return .advertisingChanged("LE Set Extended Advertising Enable (disable)")
            case (true, .leRemoveAdvertisingSet):
                guard let remove = try? LERemoveAdvertisingSet(packet: command), ours.contains(remove.handle) else { return nil }
                return .advertisingChanged("LE Remove Advertising Set \(remove.handle)")
            case (true, .leSetExtendedAdvertisingParameters), (true, .leSetExtendedAdvertisingData):
                guard let handle = command.parameters.first, ours.contains(handle) else { return nil }
                return .advertisingChanged("\(command.opcode.name ?? command.opcode.description) for set \(handle)")
            case (false, .leSetAdvertisingEnable):
                guard command.parameters.first == 0 else { return nil }
                return .advertisingChanged("LE Set Advertising Enable (disable)")
            case (false, .leSetAdvertisingParameters), (false, .leSetAdvertisingData):
                return .advertisingChanged(command.opcode.name ?? command.opcode.description)
            default:
                return nil
            }
        }
    }
}
