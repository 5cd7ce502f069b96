// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `beacon-emit` adds to the host's facts: what to do, naming its options. The library
/// says what failed; only the command knows which of its options would help.
extension HostError {
    /// The line the command prints: the facts, then what to do where there is something.
    var message: String {
        if case let .refused(refusal) = self { return refusal.message }
        guard let advice else { return description }
        switch self {
        case .controllerRefused, .managementRefused: return description + "; " + advice
        default: return description + ": " + advice
        }
    }

    /// What to do about this error, naming the command's options; nil where the facts say it.
    var advice: String? {
        switch self {
        case .invalidDevice:
            return "give --device as hciN, tcp:HOST:PORT, serial:PATH[@BAUD] or virtual"
        case let .kernel(_, code, adapter, _):
            return Self.kernelAdvice(code: code, adapter: adapter)
        case let .userChannel(code, adapter):
            if code == EUSERS { return "stop it first" }
            return "run `sudo btmgmt --index \(adapter.dropFirst(3)) power off` (or `sudo hciconfig \(adapter) down`) "
                + "first, and keep bluetoothd from powering it back on (stop it, or AutoEnable=false in main.conf)"
        case let .transport(error, device):
            if case let .system(_, code) = error, isPermission(code) || code == ENETDOWN {
                return Self.kernelAdvice(code: code, adapter: device)
            }
            return nil
        case let .controllerRefused(opcode, status, _):
            return Self.hint(opcode: opcode, status: status)
        case let .managementRefused(_, status, _, adapter):
            return Self.hint(management: status, adapter: adapter)
        case let .interrupted(_, error):
            return error.advice
        default:
            return nil
        }
    }

    private static func kernelAdvice(code: Int32, adapter: String?) -> String? {
        let name = adapter ?? "the adapter"
        switch code {
        case EAFNOSUPPORT where HostError.kernelHasBluetooth():
            return "run it in the host's network namespace (podman or docker run --net=host)"
        case EAFNOSUPPORT:
            return "load the bluetooth module (modprobe bluetooth), or use --device tcp:HOST:PORT, serial:PATH or virtual"
        case ENODEV where adapter == nil:
            return "bring one up with --device hci0 --up, plug one in, or use --device virtual"
        case ENODEV:
            return "plug one in, check `hciconfig -a`, or use --device virtual"
        case ENETDOWN:
            return "add --up to bring it up, or run `sudo hciconfig \(name) up`"
        case EPERM, EACCES:
            return "run as root, or grant them once with "
                + "`sudo setcap cap_net_raw,cap_net_admin+eip \(HostError.executablePath)`"
        default:
            return nil
        }
    }

    /// What to do about a controller's refusal, by status and command.
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

    /// What to do about the kernel's refusal of a management command, by status.
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
                + "`sudo setcap cap_net_raw,cap_net_admin+eip \(HostError.executablePath)`"
        case .rfKilled:
            return "the adapter is blocked by rfkill: run `rfkill unblock bluetooth`"
        default:
            return "see BlueZ's mgmt-api.txt for this status"
        }
    }
}

extension AdvertisingOptionError {
    /// The line the command prints: a refusal in the command's words, else the description.
    var message: String { refusal?.message ?? description }
}

extension Refusal {
    /// The refusal in the command's words: the option or beacon field asked for, the fact, and
    /// what to do.
    var message: String {
        statement(naming: { beacon == nil ? $0.option : $0.field }) + (advice.map { ": " + $0 } ?? "")
    }

    /// What to do, naming the command's options.
    var advice: String? {
        let droppable = setting.flatMap { $0 == .longData ? nil : $0 }
        let drop = beacon == nil ? droppable.map { "drop \($0.option)" } : droppable.map { "drop its \($0.droppedField)" }
        switch reason {
        case .legacyChosen:
            return [drop, "drop --legacy"].compactMap { $0 }.joined(separator: ", or ")
        case .controllerLacksExtended:
            if setting == .mode(.extended) { return "drop --extended to use legacy advertising" }
            return drop
        case .controllerLacksCodedPHY:
            return (drop ?? "drop --phy coded") + " to use LE 1M"
        case .legacyIntervalRange:
            return "choose an interval in that range"
        case .legacyIntervalRangeChosen:
            return "choose an interval in that range, or drop --legacy"
        case .connectable:
            return beacon == nil ? "use --random-address static, or drop --connectable"
                : "drop --connectable (or connectable=true), or give it address=static"
        case .sharedSet:
            return "give every beacon the run's --interval and --tx-power (and an address of its own to all or none), "
                + "or advertise fewer beacons (without --legacy, where the controller has a set for each)"
        case .sharedSetMixedAddresses:
            return "give every beacon that takes turns an address of its own (address=static or non-resolvable), or none, "
                + "or advertise fewer beacons"
        case .kernelChoosesAddress, .kernelOwnInterval, .kernelLacksLongData, .kernelHasNoInstances:
            return "use --access raw"
        case .kernelChoosesCommands:
            return "use --access raw or user-channel, or drop " + (setting.map { $0.option } ?? "the mode")
        case .kernelLacksCodedPHY, .kernelCannotSetTxPower, .kernelSetsItself:
            return [drop, "use --access raw"].compactMap { $0 }.joined(separator: ", or ")
        case let .instancesTaken(_, index, _, _):
            return "remove one (`btmgmt --index \(index) rm-adv N`), stop the program that added it, or use --access "
                + "user-channel for a dedicated adapter"
        case let .lowEnergyOff(_, index):
            return "add --up, or run `btmgmt --index \(index) le on`"
        case let .setAdvertisingOn(_, index):
            return "turn it off with `btmgmt --index \(index) advertising off`, or use --access raw"
        case .needsAdapterName:
            return "name the adapter: --device hci0"
        case .needsAdapterDown:
            return "drop --up"
        case .needsVirtualDevice:
            return "use --device virtual"
        case .notKernelAdapter:
            return "name a kernel adapter (--device hciN), or drop --access"
        case .lastBeacon:
            return "stop beacon-emit to stop advertising"
        case .scanResponseKeepsItsType:
            return "remove the beacon and add it again"
        case .disrupted, .dataTooLong, .scanResponseNeedsLegacyPDUs, .scanResponseOnCodedPHY,
             .sharedSetOfOtherType, .noFreeSet, .noAddressMadeUp, .noOwnParameters, .noSuchBeacon, .noBeacons,
             .tooManyBeacons, .notAdvertising, .instanceNotOurs, .instanceStillListed:
            return nil
        }
    }
}

extension Refusal.Setting {
    /// The command-line option that sets it for the run.
    var option: String {
        switch self {
        case let .mode(mode): "--\(mode.rawValue)"
        case .txPower: "--tx-power"
        case let .interval(text): "--interval \(text)"
        case .randomAddress: "--random-address"
        case .nonResolvableAddress: "--random-address non-resolvable"
        case .ownAddress: "address"
        case let .ownParameters(text): "own \(text)"
        case .codedPHY: "--phy coded"
        case .longData: "data over 31 bytes"
        case let .beaconSetting(key, value, _): "\(key)=\(value)"
        case .scanResponse: "--scan-response"
        case .bringUp: "--up"
        case let .kernelAccess(access): "--access \(access.rawValue)"
        case .secondDevice: "a second device on the virtual radio (--canary virtual, a peer scanner)"
        case .failFast: "--fail-fast"
        }
    }

    /// The field of a beacon's description to drop: a setting's key alone (`tx-power`).
    var droppedField: String {
        if case let .beaconSetting(key, _, _) = self { return key }
        return field
    }

    /// The field of a beacon's description (`--beacon`, a scenario, control) that sets it for one beacon.
    var field: String {
        switch self {
        case let .beaconSetting(key, value, _): "\(key)=\(value)"
        case .txPower: "tx-power"
        case let .interval(text): "interval \(text)"
        case .nonResolvableAddress: "address=non-resolvable"
        case .ownAddress, .randomAddress: "address"
        case .codedPHY: "phy=coded"
        default: name
        }
    }
}

private func isPermission(_ code: Int32) -> Bool { code == EPERM || code == EACCES }
