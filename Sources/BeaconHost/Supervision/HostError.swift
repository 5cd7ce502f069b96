// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything that can stop the host side, each a value a program can switch on (what failed,
/// the controller's or the kernel's status, the errno), with a one-line cause and what to do
/// as its description. The exit status each means for `beacon-emit` is the command's.
public enum HostError: Error, Sendable, CustomStringConvertible {
    /// `--device` could not be parsed.
    case invalidDevice(String, reason: String)
    /// A kernel Bluetooth call failed: which call, errno, the adapter, and the adapters that exist.
    case kernel(call: String, errno: Int32, adapter: String?, adapters: [String])
    /// The user channel could not take the adapter: EBUSY (it is up) or EUSERS (another
    /// program holds its user channel).
    case userChannel(errno: Int32, adapter: String)
    /// The transport failed or closed.
    case transport(TransportError, device: String)
    /// The controller answered a command with an error status. `context` names the values sent.
    case controllerRefused(opcode: HCIOpcode, status: HCIStatus, context: String?)
    /// No Command Complete or Command Status arrived in time; `ignored` sums up the input
    /// passed over meanwhile (the answer may have been among what did not parse).
    case commandTimeout(opcode: HCIOpcode, timeout: Duration, ignored: String?)
    /// The kernel's management interface answered a command with an error status.
    case managementRefused(opcode: MgmtOpcode, status: MgmtStatus, context: String?, adapter: String)
    /// The kernel did not answer a management command in time.
    case managementTimeout(opcode: MgmtOpcode, timeout: Duration)
    /// The controller reported a hardware error.
    case hardwareError(code: UInt8)
    /// The controller sent bytes that do not parse.
    case malformedEvent(CodecError)
    /// The controller lacks something the request needs.
    case unsupported(String)
    /// The private virtual controller could not be started.
    case virtualController(String)
    /// A change to running beacons was cut short by a disruption (`cause`, what the change's
    /// command got): nothing changed, and the beacons are being put back as they were.
    indirect case interrupted(by: Disruption, HostError)

    static func isPermission(_ code: Int32) -> Bool { code == EPERM || code == EACCES }

    public var description: String {
        switch self {
        case let .invalidDevice(text, reason):
            return "--device \(text): \(reason)"
        case let .kernel(call, code, adapter, adapters):
            return Self.kernelMessage(call: call, code: code, adapter: adapter, adapters: adapters)
        case let .userChannel(code, adapter):
            let what = "bind(HCI_CHANNEL_USER, \(adapter)): \(SystemCallError.message(code)) (errno \(code))"
            if code == EUSERS {
                return "\(what): another program holds \(adapter) exclusively (its user channel): stop it first"
            }
            return "\(what): \(adapter) is up and in use by the kernel: the user channel needs it down: run "
                + "`sudo btmgmt --index \(adapter.dropFirst(3)) power off` (or `sudo hciconfig \(adapter) down`) first, "
                + "and keep bluetoothd from powering it back on (stop it, or AutoEnable=false in main.conf)"
        case let .transport(error, device):
            if case let .system(call, code) = error {
                if Self.isPermission(code) || code == ENETDOWN {
                    return Self.kernelMessage(call: call, code: code, adapter: device, adapters: [])
                }
                if code == ECONNREFUSED {
                    return "\(device): connection refused: is the controller (or virtual controller) listening there?"
                }
            }
            if case .closed = error {
                return "\(device): the controller connection closed while in use"
            }
            return "\(device): \(error)"
        case let .controllerRefused(opcode, status, context):
            let sent = context.map { " (\($0))" } ?? ""
            return "controller refused \(opcode.name ?? opcode.description)\(sent): \(status); "
                + Self.hint(opcode: opcode, status: status)
        case let .commandTimeout(opcode, timeout, ignored):
            return "no answer from the controller to \(opcode.name ?? opcode.description) within \(timeout)"
                + (ignored.map { " (meanwhile it sent \($0), all ignored)" } ?? "")
                + ": check the device, its baud rate (serial), and that no other program holds it"
        case let .managementTimeout(opcode, timeout):
            return "no answer from the kernel's management interface to \(opcode) within \(timeout)"
        case let .managementRefused(opcode, status, context, adapter):
            let sent = context.map { " (\($0))" } ?? ""
            return "the kernel refused \(opcode.name ?? opcode.description) on \(adapter)\(sent): \(status); "
                + Self.hint(management: status, adapter: adapter)
        case let .hardwareError(code):
            return "the controller reported a hardware error (code 0x\(HexText.format([code]))): reset or replug it"
        case let .malformedEvent(error):
            return "the controller sent an event that does not parse: \(error)"
        case let .unsupported(what):
            return what
        case let .virtualController(what):
            return "virtual controller: \(what)"
        case let .interrupted(disruption, error):
            return "interrupted: \(disruption) (\(error)); nothing changed, and the beacons are being put back "
                + "as they were: send the request again once they are"
        }
    }

    /// Whether the kernel has Bluetooth (its module is loaded, or built in): sysfs shows it
    /// whatever network namespace asks. Tests replace it.
    nonisolated(unsafe) static var kernelHasBluetooth: () -> Bool = { FileSystem.exists("/sys/module/bluetooth") }

    private static func kernelMessage(call: String, code: Int32, adapter: String?, adapters: [String]) -> String {
        let name = adapter ?? "the adapter"
        let what = "\(call): \(SystemCallError.message(code)) (errno \(code))"
        switch code {
        case EAFNOSUPPORT where kernelHasBluetooth():
            // The kernel creates Bluetooth sockets in the host's network namespace only.
            return "\(what): the kernel has Bluetooth, but this process is in a network namespace of its own "
                + "(a container without --net=host, or unshare --net), where the kernel refuses Bluetooth sockets: "
                + "run it in the host's network namespace (podman or docker run --net=host)"
        case EAFNOSUPPORT:
            return "\(what): this kernel has no Bluetooth support (AF_BLUETOOTH): load the bluetooth module "
                + "(modprobe bluetooth), or use --device tcp:HOST:PORT, serial:PATH or virtual"
        case ENODEV where adapter == nil:
            let known = adapters.isEmpty ? "no adapters exist" : "adapters: " + adapters.joined(separator: ", ")
            return "\(what): no adapter is up (\(known)): bring one up with --device hci0 --up, plug one in, "
                + "or use --device virtual"
        case ENODEV:
            let known = adapters.isEmpty ? "no adapters exist" : "adapters: " + adapters.joined(separator: ", ")
            return "\(what): no such adapter (\(known)): plug one in, check `hciconfig -a`, or use --device virtual"
        case ENETDOWN:
            return "\(what): \(name) is down: add --up to bring it up, or run `sudo hciconfig \(name) up`"
        case EPERM, EACCES:
            return "\(what): raw HCI access needs CAP_NET_RAW and CAP_NET_ADMIN: run as root, or grant them once "
                + "with `sudo setcap cap_net_raw,cap_net_admin+eip \(executablePath)`"
        case EBUSY:
            return "\(what): \(name) is busy: another program holds it exclusively (a user channel)"
        default:
            return what
        }
    }

    /// What to do about a refusal, by status and command.
    static func hint(opcode: HCIOpcode, status: HCIStatus) -> String {
        let parameters: Set<HCIOpcode> = [.leSetAdvertisingParameters, .leSetExtendedAdvertisingParameters]
        let advertising: Set<HCIOpcode> = parameters.union([
            .leSetRandomAddress, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
            .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingData, .leSetExtendedAdvertisingEnable,
            .leRemoveAdvertisingSet, .leClearAdvertisingSets,
        ])
        let scanning: Set<HCIOpcode> = [.leSetScanParameters, .leSetScanEnable, .leSetExtendedScanParameters,
                                        .leSetExtendedScanEnable]
        switch status {
        case .commandDisallowed where parameters.contains(opcode):
            return "the likely cause: advertising is already active on this controller (run `beacon-emit stop`), "
                + "or the controller was driven with the other advertising mode since its last reset "
                + "(try --legacy or --extended), or bluetoothd is advertising on it"
        case .commandDisallowed where advertising.contains(opcode):
            return "the likely cause: the controller was driven with the other advertising mode (legacy vs "
                + "extended) since its last reset (try --legacy or --extended, or reset the adapter), advertising "
                + "is already active (`beacon-emit stop`), or bluetoothd is managing advertising on it"
        case .commandDisallowed where scanning.contains(opcode):
            return "the likely cause: another program is scanning on this controller, or it was driven with the "
                + "other scanning mode (legacy vs extended) since its last reset: try --legacy, or reset the adapter"
        case .commandDisallowed:
            return "the controller does not allow this command in its present state: reset it (replug it, or "
                + "`sudo hciconfig hciN reset` for a kernel adapter) and check that no other program drives it"
        case .unsupportedFeatureOrParameterValue where parameters.contains(opcode):
            return "the advertising interval is outside what the controller accepts: the standard allows "
                + AdvertisingOptions.intervalRangeDescription(legacy: opcode == .leSetAdvertisingParameters)
                + "; controllers before Bluetooth 5.0 want at least 100 ms for non-connectable advertising, and "
                + "many take less than the standard's maximum; or --tx-power is out of range"
        case .unsupportedFeatureOrParameterValue:
            return "the controller does not support a value sent"
        case .invalidCommandParameters where parameters.contains(opcode):
            return "a parameter is invalid: interval minimum above maximum, no advertising channel, or an "
                + "address type the controller rejects"
        case .invalidCommandParameters where opcode == .leSetAdvertisingEnable || opcode == .leSetExtendedAdvertisingEnable:
            return "advertising from a random address needs one set first (--random-address static)"
        case .invalidCommandParameters:
            return "the controller rejected a parameter value"
        case .unknownCommand:
            return "the controller does not implement this command: try --legacy (older controllers lack "
                + "extended advertising)"
        case .unknownAdvertisingIdentifier:
            return "the advertising set does not exist on the controller"
        case .memoryCapacityExceeded, .limitReached:
            return "the controller has no room for more advertising sets: advertise fewer beacons"
        default:
            return "see the Bluetooth Core Specification, Vol 1 Part F, for this status"
        }
    }

    /// What to do about a management refusal, by status.
    static func hint(management status: MgmtStatus, adapter: String) -> String {
        let number = adapter.dropFirst(3)
        switch status {
        case .busy:
            return "another program (usually bluetoothd) is changing the adapter's advertising or LE setting "
                + "right now: try again in a moment"
        case .rejected:
            return "LE is off, the adapter is powered off, or advertising through Set Advertising (bluetoothd's "
                + "or `btmgmt advertising on`) takes precedence: add --up, or run `btmgmt --index \(number) le on` "
                + "and `btmgmt --index \(number) advertising off`"
        case .notSupported, .unknownCommand:
            return "this kernel or adapter has no advertising instances: use --access raw (or user-channel)"
        case .invalidParameters:
            return "a value was refused: the interval (20 to 10240 ms), --tx-power (-127 to 20 dBm), or data "
                + "longer than the adapter takes (31 bytes in a legacy PDU)"
        case .notPowered:
            return "\(adapter) is powered off: add --up, or run `btmgmt --index \(number) power on`"
        case .noResources:
            return "the adapter has no room for more advertising: advertise fewer beacons, remove other programs' "
                + "instances (`btmgmt --index \(number) rm-adv N`), or use --access user-channel"
        case .invalidIndex:
            return "no such adapter: check `btmgmt info`, or use --device virtual"
        case .permissionDenied:
            return "the management interface needs CAP_NET_ADMIN: run as root, or grant it once with "
                + "`sudo setcap cap_net_raw,cap_net_admin+eip \(executablePath)`"
        case .rfKilled:
            return "the adapter is blocked by rfkill: run `rfkill unblock bluetooth`"
        default:
            return "see BlueZ's mgmt-api.txt for this status"
        }
    }

    /// This program's path, for the setcap line.
    static var executablePath: String {
        CurrentProcess.executablePath ?? "$(command -v beacon-emit)"
    }
}
