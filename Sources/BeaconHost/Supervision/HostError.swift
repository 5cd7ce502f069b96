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
    /// A request refused in words of the rig's or the command's own (a scenario's beacon by
    /// name, a device option). The host library throws none: its refusals are `refused`.
    case unsupported(String)
    /// A setting the device, the controller or the kernel cannot honour, as facts.
    case refused(Refusal)
    /// A command that cannot be built from the values given (the codec's reason).
    case unencodable(CodecError, command: String)
    /// The private virtual controller could not be started.
    case virtualController(String)
    /// A change to running beacons was cut short by a disruption (`cause`, what the change's
    /// command got): nothing changed, and the beacons are being put back as they were.
    indirect case interrupted(by: Disruption, HostError)

    static func isPermission(_ code: Int32) -> Bool { code == EPERM || code == EACCES }

    /// The command `build` makes; one the codec refuses to make from the values given (more
    /// data than it holds) is `.unencodable`, named `command`.
    static func encoding<C>(_ command: String, _ build: () throws(CodecError) -> C) throws(HostError) -> C {
        do {
            return try build()
        } catch {
            throw .unencodable(error, command: command)
        }
    }

    public var description: String {
        switch self {
        case let .invalidDevice(text, reason):
            return "device \(text): \(reason)"
        case let .kernel(call, code, adapter, adapters):
            return Self.kernelFact(call: call, code: code, adapter: adapter, adapters: adapters)
        case let .userChannel(code, adapter):
            let what = "bind(HCI_CHANNEL_USER, \(adapter)): \(SystemCallError.message(code)) (errno \(code))"
            if code == EUSERS {
                return "\(what): another program holds \(adapter) exclusively (its user channel)"
            }
            return "\(what): \(adapter) is up and in use by the kernel, and the user channel needs it down"
        case let .transport(error, device):
            if case let .system(call, code) = error {
                if Self.isPermission(code) || code == ENETDOWN {
                    return Self.kernelFact(call: call, code: code, adapter: device, adapters: [])
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
            return "controller refused \(opcode.name ?? opcode.description)\(sent): \(status)"
        case let .commandTimeout(opcode, timeout, ignored):
            return "no answer from the controller to \(opcode.name ?? opcode.description) within \(timeout)"
                + (ignored.map { " (meanwhile it sent \($0), all ignored)" } ?? "")
                + ": check the device, its baud rate (serial), and that no other program holds it"
        case let .managementTimeout(opcode, timeout):
            return "no answer from the kernel's management interface to \(opcode) within \(timeout)"
        case let .managementRefused(opcode, status, context, adapter):
            let sent = context.map { " (\($0))" } ?? ""
            return "the kernel refused \(opcode.name ?? opcode.description) on \(adapter)\(sent): \(status)"
        case let .hardwareError(code):
            return "the controller reported a hardware error (code 0x\(HexText.format([code]))): reset or replug it"
        case let .malformedEvent(error):
            return "the controller sent an event that does not parse: \(error)"
        case let .unsupported(what):
            return what
        case let .refused(refusal):
            return refusal.description
        case let .unencodable(error, command):
            return "\(command) cannot be sent: \(error)"
        case let .virtualController(what):
            return "virtual controller: \(what)"
        case let .interrupted(disruption, error):
            return "interrupted: \(disruption) (\(error)); nothing changed, and the beacons are being put back "
                + "as they were: send the request again once they are"
        }
    }

    /// Whether the kernel has Bluetooth (its module is loaded, or built in): sysfs shows it
    /// whatever network namespace asks. Tests replace it.
    nonisolated(unsafe) public static var kernelHasBluetooth: () -> Bool = { FileSystem.exists("/sys/module/bluetooth") }

    /// A failed kernel call and what its errno means here.
    private static func kernelFact(call: String, code: Int32, adapter: String?, adapters: [String]) -> String {
        let name = adapter ?? "the adapter"
        let what = "\(call): \(SystemCallError.message(code)) (errno \(code))"
        let known = adapters.isEmpty ? "no adapters exist" : "adapters: " + adapters.joined(separator: ", ")
        switch code {
        case EAFNOSUPPORT where kernelHasBluetooth():
            // The kernel creates Bluetooth sockets in the host's network namespace only.
            return "\(what): the kernel has Bluetooth, but this process is in a network namespace of its own, "
                + "where the kernel refuses Bluetooth sockets"
        case EAFNOSUPPORT:
            return "\(what): this kernel has no Bluetooth support (AF_BLUETOOTH)"
        case ENODEV where adapter == nil:
            return "\(what): no adapter is up (\(known))"
        case ENODEV:
            return "\(what): no such adapter (\(known))"
        case ENETDOWN:
            return "\(what): \(name) is down"
        case EPERM, EACCES:
            return "\(what): raw HCI access needs CAP_NET_RAW and CAP_NET_ADMIN"
        case EBUSY:
            return "\(what): \(name) is busy: another program holds it exclusively (a user channel)"
        default:
            return what
        }
    }

    /// This program's path, for the setcap line.
    public static var executablePath: String {
        CurrentProcess.executablePath ?? "$(command -v beacon-emit)"
    }
}
