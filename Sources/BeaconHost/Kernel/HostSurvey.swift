// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
import LinuxSystem

/// What `doctor` looks at on a box: the kernel, its adapters, what holds them, and what a
/// beacon-emit run there would meet. Facts only, each as it was read (or why it was not);
/// `diagnoses` judges them. Built by `take(adapter:)` on a real box, and field by field in
/// tests.
package struct HostSurvey: Sendable, Equatable {
    /// A kernel adapter as the kernel lists it.
    public struct Adapter: Sendable, Equatable {
        public var name: String
        public var index: Int
        public var up: Bool
        public var address: String?

        public init(name: String, index: Int, up: Bool, address: String? = nil) {
            self.name = name
            self.index = index
            self.up = up
            self.address = address
        }
    }

    /// The adapter's switch in the kernel's rfkill list.
    public struct RadioSwitch: Sendable, Equatable {
        /// Blocked by software (`rfkill block`, a desktop's airplane mode).
        public var soft: Bool
        /// Blocked by a hardware switch or the firmware.
        public var hard: Bool

        public init(soft: Bool, hard: Bool) {
            self.soft = soft
            self.hard = hard
        }
    }

    /// What the controller says it can do (HCI commands read on a raw socket).
    public struct Controller: Sendable, Equatable {
        public var version: String
        public var manufacturer: String
        public var extendedAdvertising: Bool
        public var advertisingSets: Int
        public var codedPHY: Bool

        public init(version: String, manufacturer: String, extendedAdvertising: Bool, advertisingSets: Int, codedPHY: Bool) {
            self.version = version
            self.manufacturer = manufacturer
            self.extendedAdvertising = extendedAdvertising
            self.advertisingSets = advertisingSets
            self.codedPHY = codedPHY
        }
    }

    /// The advertising instances the kernel lists for the adapter.
    public struct Instances: Sendable, Equatable {
        public var maximum: Int
        public var listed: [UInt8]

        public init(maximum: Int, listed: [UInt8]) {
            self.maximum = maximum
            self.listed = listed
        }
    }

    /// One beacon-emit run's record of the instances it added on the adapter.
    public struct Record: Sendable, Equatable {
        public var instances: [UInt8]
        public var pid: Int32?
        public var running: Bool
        /// Left on by request (`--keep`).
        public var kept: Bool

        public init(instances: [UInt8], pid: Int32?, running: Bool, kept: Bool) {
            self.instances = instances
            self.pid = pid
            self.running = running
            self.kept = kept
        }
    }

    /// A configuration in `/etc/beacon-emit` and its unit's state (`systemctl is-active`).
    public struct Service: Sendable, Equatable {
        public var name: String
        /// active, inactive, failed, activating, ...; nil when no service manager runs.
        public var state: String?

        public init(name: String, state: String?) {
            self.name = name
            self.state = state
        }
    }

    /// Another program with a Bluetooth socket open: its name and process id.
    public struct Program: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var pid: Int32

        public init(name: String, pid: Int32) {
            self.name = name
            self.pid = pid
        }

        public var description: String { "\(name) (pid \(pid))" }
    }

    /// The kernel's release (`uname -r`).
    public var kernelRelease: String
    /// Whether the kernel created a Bluetooth socket; when not, why (the host's message).
    public var bluetoothProblem: String?
    /// The kernel has Bluetooth, but refuses it to this process's network namespace (a container).
    public var inOtherNetworkNamespace = false
    /// The management API's version ("1.22"), or nil with `managementProblem`.
    public var managementVersion: String?
    public var managementProblem: String?
    public var adapters: [Adapter]
    /// The adapter looked at: the one asked for, else the first that is up, else the first.
    public var adapter: Adapter?
    /// What was asked for when no adapter has that name or address.
    public var missingAdapter: String?
    /// The adapter's management settings (powered, LE, privacy, ...), when they were read.
    public var settings: MgmtSettings?
    public var radioSwitch: RadioSwitch?
    /// bluetoothd's process id and version, when it runs.
    public var bluetoothd: Program?
    public var bluetoothdVersion: String?
    /// Running as root.
    public var root: Bool
    /// The capabilities of the two beacon-emit needs that this process lacks.
    public var missingCapabilities: [String]
    /// This program's path (for the capability line).
    public var executable: String
    public var controller: Controller?
    /// Why the controller was not read.
    public var controllerProblem: String?
    public var instances: Instances?
    public var records: [Record]
    /// Programs other than bluetoothd and this one holding Bluetooth HCI sockets (a scan, an
    /// advertiser, a monitor).
    public var others: [Program]
    public var services: [Service]

    public init(kernelRelease: String, bluetoothProblem: String? = nil, managementVersion: String? = nil,
                managementProblem: String? = nil, adapters: [Adapter] = [], adapter: Adapter? = nil,
                missingAdapter: String? = nil, settings: MgmtSettings? = nil, radioSwitch: RadioSwitch? = nil,
                bluetoothd: Program? = nil, bluetoothdVersion: String? = nil, root: Bool = true,
                missingCapabilities: [String] = [], executable: String = "beacon-emit", controller: Controller? = nil,
                controllerProblem: String? = nil, instances: Instances? = nil, records: [Record] = [],
                others: [Program] = [], services: [Service] = []) {
        self.kernelRelease = kernelRelease
        self.bluetoothProblem = bluetoothProblem
        self.managementVersion = managementVersion
        self.managementProblem = managementProblem
        self.adapters = adapters
        self.adapter = adapter
        self.missingAdapter = missingAdapter
        self.settings = settings
        self.radioSwitch = radioSwitch
        self.bluetoothd = bluetoothd
        self.bluetoothdVersion = bluetoothdVersion
        self.root = root
        self.missingCapabilities = missingCapabilities
        self.executable = executable
        self.controller = controller
        self.controllerProblem = controllerProblem
        self.instances = instances
        self.records = records
        self.others = others
        self.services = services
    }
}

extension HostSurvey {
    /// Every kernel adapter, each looked at as `take(adapter:)` looks at one (`info --all`,
    /// `bluetoothctl list`'s question): the box's survey first (its adapters; why there are
    /// none), then one survey per adapter, in the kernel's order.
    public static func everyAdapter(configurations: String = "/etc/beacon-emit",
                                    records: String = InstanceRecord.directory()) -> (box: HostSurvey, adapters: [HostSurvey]) {
        let box = take(adapter: nil, configurations: configurations, records: records)
        let each = box.adapters.map { take(adapter: .kernel(index: $0.index), configurations: configurations, records: records) }
        return (box, each)
    }

    /// What holds the adapter looked at, for a line: bluetoothd, other programs with HCI
    /// sockets, beacon-emit runs with instances recorded on it.
    public var holders: [String] {
        var holders: [String] = []
        if let bluetoothd { holders.append(bluetoothd.description) }
        holders += others.map(\.description)
        for record in records where record.running && !record.instances.isEmpty {
            holders.append("beacon-emit" + (record.pid.map { " (pid \($0))" } ?? "") + ": instance(s) "
                           + record.instances.map(String.init).joined(separator: ","))
        }
        return holders
    }

    /// Looks at this box.
    /// - Parameters:
    ///   - adapter: the adapter asked for (by number or address); nil, or `.kernel(index: nil)`: the
    ///     first that is up.
    ///   - configurations: where the service's configurations are (`NAME.yaml`).
    ///   - records: where beacon-emit runs record their instances (this user's runs); each
    ///     configured service's records are read from its state directory too.
    public static func take(adapter requested: DeviceSpecification?, configurations: String = "/etc/beacon-emit",
                            records: String = InstanceRecord.directory()) -> HostSurvey {
        var survey = HostSurvey(kernelRelease: Self.read("/proc/sys/kernel/osrelease") ?? "unknown")
        survey.executable = HostError.executablePath
        survey.root = CurrentProcess.isRoot
        survey.missingCapabilities = Self.missingCapabilities()

        // The kernel, through its management API (what every adapter is reached through by default).
        var management: MgmtSocket? = nil
        do {
            management = try KernelSocketTransport.openManagement()
        } catch let .kernel(call, code, _, _) where code == EAFNOSUPPORT {
            survey.bluetoothProblem = "\(call): \(SystemCallError.message(code)) (errno \(code)): "
                + (HostError.kernelHasBluetooth() ? "the kernel has Bluetooth, but this process is in a network namespace of "
                   + "its own, where the kernel refuses Bluetooth sockets" : "no Bluetooth in this kernel (no bluetooth module)")
            survey.inOtherNetworkNamespace = HostError.kernelHasBluetooth()
        } catch {
            survey.managementProblem = error.description
        }
        defer { management?.close() }
        if let management {
            let global = MgmtClient(transport: management, index: MgmtPacket.nonController, commandTimeout: .seconds(1))
            do {
                survey.managementVersion = try global.send(ReadVersionInformation(), global: true).description
            } catch {
                survey.managementProblem = error.description
            }
        }

        survey.adapters = KernelSocketTransport.adapters().sorted { $0.index < $1.index }.map {
            Adapter(name: $0.name, index: $0.index, up: $0.up, address: $0.address?.description)
        }
        switch requested {
        case let .kernel(index?)?:
            survey.adapter = survey.adapters.first { $0.index == index }
            if survey.adapter == nil { survey.missingAdapter = "hci\(index)" }
        case let .adapter(address)?:
            survey.adapter = survey.adapters.first { $0.address == address.description }
            if survey.adapter == nil { survey.missingAdapter = address.description }
        default:
            survey.adapter = survey.adapters.first(where: \.up) ?? survey.adapters.first
        }
        survey.bluetoothd = Self.processes(named: "bluetoothd").first
        if let daemon = survey.bluetoothd { survey.bluetoothdVersion = Self.version(of: daemon) }
        survey.others = Self.holdersOfBluetoothSockets().filter {
            $0.name != "bluetoothd" && $0.pid != CurrentProcess.id
        }
        survey.services = Self.services(in: configurations)

        guard let adapter = survey.adapter else { return survey }
        survey.radioSwitch = Self.radioSwitch(of: adapter.name)
        if let management {
            let client = MgmtClient(transport: management, index: UInt16(adapter.index), commandTimeout: .seconds(1))
            survey.settings = try? client.send(ReadControllerInformation()).currentSettings
            if let features = try? client.send(ReadAdvertisingFeatures()) {
                survey.instances = Instances(maximum: Int(features.maximumInstances), listed: features.instances)
            }
        }
        // The unit keeps its records in its state directory (StateDirectory=beacon-emit-NAME).
        let directories = [records] + survey.services.map { "/var/lib/beacon-emit-\($0.name)" }
        survey.records = Set(directories).sorted().flatMap { InstanceRecord.all(adapter: adapter.name, in: $0) }.map { record, _ in
            Record(instances: record.instances, pid: record.owner?.pid, running: record.owner?.isRunning ?? false,
                   kept: record.kept)
        }
        if adapter.up {
            do {
                let connection = try ControllerConnection.open(.kernel(index: adapter.index), commandTimeout: .seconds(1))
                defer { connection.close() }
                let info = try ControllerInfo.read(from: connection.controller, dataLength: false)
                let sets = info.supportsExtendedAdvertising
                    ? (try? AdvertisingCapabilities.readNumberOfSets(from: connection.controller, commands: info.supportedCommands)) ?? 1
                    : 1
                survey.controller = Controller(version: info.version.coreVersion ?? "HCI \(info.version.hciVersion)",
                                               manufacturer: info.manufacturer,
                                               extendedAdvertising: info.supportsExtendedAdvertising,
                                               advertisingSets: sets,
                                               codedPHY: info.leFeatures.contains(.leCodedPHY))
            } catch {
                survey.controllerProblem = error.description
            }
        } else {
            survey.controllerProblem = "\(adapter.name) is down"
        }
        return survey
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// CAP_NET_ADMIN (12) and CAP_NET_RAW (13) where this process's effective set lacks them.
    static func missingCapabilities(status: String? = read("/proc/self/status")) -> [String] {
        let line = status?.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
        let effective = line.flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        return [(12, "CAP_NET_ADMIN"), (13, "CAP_NET_RAW")].filter { effective & (1 << $0.0) == 0 }.map(\.1)
    }

    /// The processes running now, by id.
    private static var processIDs: [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).sorted()
    }

    /// The processes whose command name is `name`.
    static func processes(named name: String) -> [Program] {
        processIDs.compactMap { pid in read("/proc/\(pid)/comm") == name ? Program(name: name, pid: pid) : nil }
    }

    /// What `bluetoothd --version` says (the running one's program where it can be read).
    static func version(of daemon: Program) -> String? {
        let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/exe")
        let candidates = [running, "/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]
        guard let path = candidates.compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
              let result = try? ChildProcess.run([path, "--version"]), result.termination == .exited(0) else { return nil }
        let version = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return version.isEmpty ? nil : version
    }

    /// The processes holding HCI sockets (the kernel's list in /proc/net/hci, matched to each
    /// process's descriptors by inode); only those this process may look into.
    static func holdersOfBluetoothSockets() -> [Program] {
        guard let list = read("/proc/net/hci") else { return [] }
        // "sk RefCnt Rmem Wmem User Inode Parent": the inode is the sixth column.
        let inodes = Set(list.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 5 ? "socket:[\(fields[5])]" : nil
        })
        guard !inodes.isEmpty else { return [] }
        return processIDs.compactMap { pid in
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let holds = descriptors.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")).map(inodes.contains) ?? false
            }
            return holds ? Program(name: read("/proc/\(pid)/comm") ?? "?", pid: pid) : nil
        }
    }

    /// The rfkill switch the kernel registered for adapter `name` (/sys/class/rfkill).
    static func radioSwitch(of name: String, in directory: String = "/sys/class/rfkill") -> RadioSwitch? {
        for entry in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() {
            let path = "\(directory)/\(entry)"
            guard read("\(path)/type") == "bluetooth", read("\(path)/name") == name else { continue }
            return RadioSwitch(soft: read("\(path)/soft") == "1", hard: read("\(path)/hard") == "1")
        }
        return nil
    }

    /// Each configuration `NAME.yaml` in `directory` with its unit's state, where systemd runs.
    static func services(in directory: String) -> [Service] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".yaml") && $0 != "example.yaml" }.map { String($0.dropLast(5)) }.sorted()
        let systemd = FileManager.default.fileExists(atPath: "/run/systemd/system")
        return names.map { name in
            guard systemd, let result = try? ChildProcess.run(["systemctl", "is-active", "beacon-emit@\(name)"]) else {
                return Service(name: name, state: nil)
            }
            let state = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            return Service(name: name, state: state.isEmpty ? "unknown" : state)
        }
    }
}
