// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports

/// `beacon-emit info`: what the controller is and what it can advertise.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report the controller: address, HCI version, manufacturer, advertising capabilities.",
        discussion: """
            For a kernel adapter also each way in (--access) with whether it is available now, the one auto \
            takes, the advertising instances the kernel already has, and the address its beacons would go \
            out from through the management API. With --all, every kernel adapter instead, one line each: \
            its address, whether it is up, what its controller can advertise (extended advertising, sets, LE \
            Coded PHY), the kernel's advertising instances, and what holds it (bluetoothd, other programs with \
            HCI sockets, beacon-emit runs); no adapter is exit 69, saying why.
            """ + guide("scanning.md#stop-and-info") + HelpExamples.text("info"))

    @OptionGroup var deviceOptions: DeviceOptions

    @Flag(help: "Print one JSON object (with --all: one per adapter).")
    var json = false

    @Flag(help: "Every kernel adapter, one line each (like bluetoothctl list, with what each can do and what holds it).")
    var all = false

    func validate() throws {
        if all && deviceOptions.device != nil {
            throw ValidationError("--all lists every kernel adapter: it goes without -i/--device")
        }
    }

    func run() throws {
        if all { return try listAdapters() }
        let info: ControllerInfo
        let device: String
        var kernel: KernelAdapterReport? = nil
        do {
            let connection = try deviceOptions.open(progress: { Console.error($0) })
            defer { connection.close() }
            if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
            info = try ControllerInfo.query(connection.controller, owned: connection.ownsController) {
                Console.error($0, priority: .warning)
            }
            device = connection.device.description
            if let index = connection.sharedKernelIndex { kernel = KernelAdapterReport.read(index: index) }
        } catch {
            throw fail(error)
        }
        if json {
            var object = JSONObject()
            object.add("device", device)
            object.add("address", info.address.description)
            object.add("hciVersion", info.version.coreVersion ?? "unknown")
            object.add("hciVersionCode", info.version.hciVersion)
            object.add("manufacturer", info.manufacturer)
            object.add("companyId", info.version.companyIdentifier.rawValue)
            object.add("legacyAdvertising", true)
            object.add("extendedAdvertising", info.supportsExtendedAdvertising)
            object.add("advertisingSets", info.numberOfAdvertisingSets ?? 1)
            object.add("maxAdvertisingDataLength", info.maximumAdvertisingDataLength)
            if let kernel {
                object.add("accessAuto", kernel.automaticChoice.rawValue)
                object.add("accessAvailable", kernel.waysIn.filter(\.available).map(\.access.rawValue).joined(separator: ","))
                if let features = kernel.features {
                    object.add("kernelInstancesMax", Int(features.maximumInstances))
                    object.add("kernelInstances", features.instances.map(String.init).joined(separator: ","))
                }
                object.add("setAdvertising", kernel.setAdvertisingOn)
                object.add("mgmtBeaconAddress", kernel.beaconAddress)
            }
            print(object.line)
        } else {
            print("""
                device:                   \(device)
                address:                  \(info.address)
                HCI version:              \(info.version.coreVersion ?? "unknown") (\(info.version.hciVersion))
                manufacturer:             \(info.manufacturer)
                legacy advertising:       yes
                extended advertising:     \(info.supportsExtendedAdvertising ? "yes" : "no")
                advertising sets:         \(info.numberOfAdvertisingSets ?? 1)
                max advertising data:     \(info.maximumAdvertisingDataLength) bytes
                """)
            if let kernel {
                for way in kernel.waysIn {
                    let name = "--access \(way.access.rawValue):".padding(toLength: 26, withPad: " ", startingAt: 0)
                    print("\(name)\(way.available ? "available" : "not available") (\(way.note))")
                }
                print("--access auto chooses:     \(kernel.automaticChoice.rawValue)")
                print("beacons' address (mgmt):   \(kernel.beaconAddress)")
                if let features = kernel.features {
                    print("kernel advertises:         " + (features.instances.isEmpty ? "no instances"
                        : "instance(s) " + features.instances.map(String.init).joined(separator: ", ")))
                }
            }
        }
    }

    /// `--all`: every kernel adapter, from the survey `doctor` takes, one line (or JSON object) each.
    private func listAdapters() throws {
        let (box, adapters) = HostSurvey.everyAdapter()
        guard !adapters.isEmpty else {
            Console.error("no Bluetooth adapter: " + (box.bluetoothProblem ?? box.managementProblem ?? "the kernel lists none")
                          + " (beacon-emit doctor says what to do)")
            throw ExitStatus.unavailable
        }
        for survey in adapters {
            guard let adapter = survey.adapter else { continue }
            if json {
                var object = JSONObject()
                object.add("adapter", adapter.name)
                object.add("index", adapter.index)
                if let address = adapter.address { object.add("address", address) } else { object.addNull("address") }
                object.add("up", adapter.up)
                if let controller = survey.controller {
                    object.add("hciVersion", controller.version)
                    object.add("manufacturer", controller.manufacturer)
                    object.add("extendedAdvertising", controller.extendedAdvertising)
                    object.add("advertisingSets", controller.advertisingSets)
                    object.add("codedPHY", controller.codedPHY)
                } else if let problem = survey.controllerProblem {
                    object.add("controllerProblem", problem)
                }
                if let instances = survey.instances {
                    object.add("kernelInstancesMax", instances.maximum)
                    object.add("kernelInstances", integers: instances.listed)
                }
                object.add("heldBy", strings: survey.holders)
                print(object.line)
                continue
            }
            var parts = [adapter.address ?? "(no address)", adapter.up ? "up" : "down"]
            if let controller = survey.controller {
                parts.append("Bluetooth \(controller.version), \(controller.manufacturer); "
                             + (controller.extendedAdvertising ? "extended advertising, \(controller.advertisingSets) set"
                                + (controller.advertisingSets == 1 ? "" : "s") : "legacy advertising only")
                             + (controller.codedPHY ? ", LE Coded PHY" : ""))
            } else if let problem = survey.controllerProblem {
                parts.append("controller not read: \(problem)")
            }
            if let instances = survey.instances {
                parts.append("kernel instances: " + (instances.listed.isEmpty ? "none"
                             : instances.listed.map(String.init).joined(separator: ",")) + " of \(instances.maximum)")
            }
            parts.append("held by: " + (survey.holders.isEmpty ? "nothing" : survey.holders.joined(separator: ", ")))
            print(adapter.name.padding(toLength: 6, withPad: " ", startingAt: 0) + parts.joined(separator: "  "))
        }
    }
}
