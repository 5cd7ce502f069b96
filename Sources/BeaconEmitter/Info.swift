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
            out from through the management API.
            """ + guide("scanning.md#stop-and-info") + HelpExamples.text("info"))

    @OptionGroup var deviceOptions: DeviceOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
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
}
