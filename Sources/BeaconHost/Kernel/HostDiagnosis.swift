// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One finding of `doctor`: what was looked at, how it stands, the fact, and what would put
/// it right. The remedy is a fact too (what to do, not which option to type): the command
/// line phrases it.
package struct HostDiagnosis: Sendable, Equatable {
    public enum Verdict: String, Sendable, Comparable {
        case pass, warn, fail

        private var rank: Int {
            switch self {
            case .pass: 0
            case .warn: 1
            case .fail: 2
            }
        }

        public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    }

    /// What would put a finding right.
    public enum Remedy: Sendable, Equatable {
        /// The kernel creates no Bluetooth socket here: it has none, or this process is in a
        /// network namespace of its own (a container).
        case loadBluetooth(otherNetworkNamespace: Bool)
        /// No adapter at all.
        case connectAdapter
        /// The adapter asked for is not there; these are.
        case chooseAdapter(among: [String])
        /// The adapter is down or powered off.
        case bringUp(adapter: String, index: Int)
        /// rfkill blocks the adapter (by software, or by a switch).
        case unblock(hard: Bool)
        /// bluetoothd does not run: nothing powers adapters at boot.
        case startBluetoothd
        /// This process lacks the capabilities.
        case grantCapabilities(executable: String)
        /// A legacy-only controller: what it cannot do.
        case extendedController
        /// LE privacy on: the kernel's addresses rotate.
        case privacyOff(index: Int)
        /// Instances that ended runs left on the air.
        case removeLeftovers(adapter: String)
        /// Instances left on by request (`--keep`).
        case stopKept(adapter: String)
        /// Other programs hold Bluetooth sockets or instances.
        case otherPrograms
        /// A service instance that failed or is not running.
        case inspectService(name: String)
    }

    /// The check's name: kernel, management, adapter, powered, rfkill, bluetoothd, permission,
    /// controller, privacy, instances, others, service NAME.
    public var check: String
    public var verdict: Verdict
    public var finding: String
    public var remedy: Remedy?

    public init(_ check: String, _ verdict: Verdict, _ finding: String, remedy: Remedy? = nil) {
        self.check = check
        self.verdict = verdict
        self.finding = finding
        self.remedy = remedy
    }
}

extension HostSurvey {
    /// The survey judged, check by check, in the order a reader fixes things.
    public var diagnoses: [HostDiagnosis] {
        var found: [HostDiagnosis] = []
        if let problem = bluetoothProblem {
            found.append(.init("kernel", .fail, "Linux \(kernelRelease): \(problem)", remedy: .loadBluetooth(otherNetworkNamespace: inOtherNetworkNamespace)))
            return found + permission + serviceDiagnoses
        }
        found.append(.init("kernel", .pass, "Linux \(kernelRelease), Bluetooth sockets available"))
        if let managementVersion {
            found.append(.init("management", .pass, "management API \(managementVersion)"))
        } else {
            found.append(.init("management", .warn, "management API not read: \(managementProblem ?? "unknown")"))
        }
        found += permission
        if let missingAdapter {
            found.append(.init("adapter", .fail, "no adapter \(missingAdapter); there are: \(adapterList)",
                               remedy: .chooseAdapter(among: adapters.map(\.name))))
            return found + bluetoothdDiagnosis + serviceDiagnoses
        }
        guard let adapter else {
            found.append(.init("adapter", .fail, "no Bluetooth adapter", remedy: .connectAdapter))
            return found + bluetoothdDiagnosis + serviceDiagnoses
        }
        found.append(.init("adapter", .pass, "\(adapter.name)\(adapter.address.map { " (\($0))" } ?? "")"
                           + (adapters.count > 1 ? "; all: \(adapterList)" : "")))
        if let radioSwitch, radioSwitch.soft || radioSwitch.hard {
            let how = radioSwitch.hard ? "by a hardware switch or the firmware" : "by software (rfkill)"
            found.append(.init("rfkill", .fail, "\(adapter.name) is blocked \(how)", remedy: .unblock(hard: radioSwitch.hard)))
        } else {
            found.append(.init("rfkill", .pass, radioSwitch == nil ? "no rfkill switch for \(adapter.name)"
                                                                   : "\(adapter.name) not blocked"))
        }
        let powered = settings.map { $0.contains(.powered) } ?? adapter.up
        if adapter.up && powered {
            let lowEnergy = settings.map { $0.contains(.lowEnergy) } ?? true
            found.append(.init("powered", lowEnergy ? .pass : .warn,
                               "\(adapter.name) is up and powered" + (lowEnergy ? "" : "; LE is off"),
                               remedy: lowEnergy ? nil : .bringUp(adapter: adapter.name, index: adapter.index)))
        } else {
            found.append(.init("powered", .fail, "\(adapter.name) is \(adapter.up ? "up but powered off" : "down")",
                               remedy: .bringUp(adapter: adapter.name, index: adapter.index)))
        }
        found += bluetoothdDiagnosis
        found.append(controllerDiagnosis(adapter))
        if let settings {
            found.append(settings.contains(.privacy)
                ? .init("privacy", .warn, "LE privacy is on: through the kernel, beacons go out from resolvable private "
                        + "addresses it renews on its own timer, so scanners that key beacons by address lose them",
                        remedy: .privacyOff(index: adapter.index))
                : .init("privacy", .pass, "LE privacy is off"))
        }
        found += instanceDiagnoses(adapter)
        found.append(others.isEmpty ? .init("others", .pass, "no other program holds a Bluetooth HCI socket")
            : .init("others", .warn, "other programs hold Bluetooth HCI sockets (a scan, an advertiser or a monitor): "
                    + others.map(\.description).joined(separator: ", "), remedy: .otherPrograms))
        return found + serviceDiagnoses
    }

    /// The worst verdict: what `doctor` exits by.
    public var verdict: HostDiagnosis.Verdict { diagnoses.map(\.verdict).max() ?? .pass }

    private var adapterList: String {
        adapters.isEmpty ? "none"
            : adapters.map { "\($0.name) (\($0.up ? "up" : "down")\($0.address.map { ", \($0)" } ?? ""))" }.joined(separator: ", ")
    }

    private var permission: [HostDiagnosis] {
        if root { return [.init("permission", .pass, "running as root")] }
        if missingCapabilities.isEmpty { return [.init("permission", .pass, "CAP_NET_ADMIN and CAP_NET_RAW granted")] }
        return [.init("permission", .fail, "not root, and without \(missingCapabilities.joined(separator: " and ")): "
                      + "the kernel refuses the sockets beacon-emit advertises through",
                      remedy: .grantCapabilities(executable: executable))]
    }

    private var bluetoothdDiagnosis: [HostDiagnosis] {
        guard let bluetoothd else {
            return [.init("bluetoothd", .warn, "bluetoothd is not running: beacon-emit does not need it, but nothing "
                          + "powers adapters at boot or after a reset without it", remedy: .startBluetoothd)]
        }
        return [.init("bluetoothd", .pass, "bluetoothd \(bluetoothdVersion ?? "(version not read)") running, \(bluetoothd)")]
    }

    private func controllerDiagnosis(_ adapter: Adapter) -> HostDiagnosis {
        guard let controller else {
            return .init("controller", .warn, "capabilities not read: \(controllerProblem ?? "unknown")")
        }
        let what = "Bluetooth \(controller.version), \(controller.manufacturer)"
        guard controller.extendedAdvertising else {
            return .init("controller", .warn, "\(what): legacy advertising only. Through the kernel a beacon goes out "
                         + "every 100-150 ms whatever interval is asked; several beacons take turns on its one "
                         + "advertising set; no TX power of its own, no Coded PHY", remedy: .extendedController)
        }
        return .init("controller", .pass, "\(what): extended advertising, \(controller.advertisingSets) set"
                     + (controller.advertisingSets == 1 ? "" : "s") + ", Coded PHY \(controller.codedPHY ? "yes" : "no")")
    }

    private func instanceDiagnoses(_ adapter: Adapter) -> [HostDiagnosis] {
        guard let instances else { return [] }
        let listed = Set(instances.listed)
        func numbers(_ set: [UInt8]) -> String { set.sorted().map(String.init).joined(separator: ", ") }
        let ours = records.filter { $0.running }.flatMap(\.instances).filter(listed.contains)
        let kept = records.filter { !$0.running && $0.kept }.flatMap(\.instances).filter(listed.contains)
        let leftover = records.filter { !$0.running && !$0.kept }.flatMap(\.instances).filter(listed.contains)
        let recorded = Set(records.flatMap(\.instances))
        let foreign = instances.listed.filter { !recorded.contains($0) }
        var found: [HostDiagnosis] = []
        var summary = "\(instances.listed.count) of \(instances.maximum) advertising instances in use"
        if !ours.isEmpty { summary += "; running beacon-emit: \(numbers(ours))" }
        if !foreign.isEmpty { summary += "; another program's (bluetoothd's, btmgmt's): \(numbers(foreign))" }
        found.append(.init("instances", foreign.isEmpty ? .pass : .warn, summary, remedy: foreign.isEmpty ? nil : .otherPrograms))
        if !leftover.isEmpty {
            found.append(.init("leftovers", .fail, "instance(s) \(numbers(leftover)) on \(adapter.name) were added by "
                               + "beacon-emit runs that are over (killed or crashed) and are still on the air",
                               remedy: .removeLeftovers(adapter: adapter.name)))
        }
        if !kept.isEmpty {
            found.append(.init("leftovers", .warn, "instance(s) \(numbers(kept)) on \(adapter.name) were left on "
                               + "by request when their run ended", remedy: .stopKept(adapter: adapter.name)))
        }
        if leftover.isEmpty && kept.isEmpty {
            found.append(.init("leftovers", .pass, "nothing left on the air by ended beacon-emit runs"))
        }
        return found
    }

    private var serviceDiagnoses: [HostDiagnosis] {
        services.map { service in
            let name = "service \(service.name)"
            switch service.state {
            case nil:
                return .init(name, .pass, "beacon-emit@\(service.name) configured; no service manager runs here")
            case "active"?, "reloading"?:
                return .init(name, .pass, "beacon-emit@\(service.name) is active")
            case "failed"?:
                return .init(name, .fail, "beacon-emit@\(service.name) failed", remedy: .inspectService(name: service.name))
            case let state?:
                return .init(name, .warn, "beacon-emit@\(service.name) is \(state)", remedy: .inspectService(name: service.name))
            }
        }
    }
}
