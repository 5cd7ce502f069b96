// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost
import BeaconReports

/// `beacon-emit stop`: turn off the advertising beacon-emit left on (already off is success).
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn off the advertising beacon-emit left on (--keep). Already off is success.",
        discussion: """
            Through the management API (the default on kernel adapters) only the instances that \
            beacon-emit recorded as its own are removed; on a raw socket, only the advertising sets it \
            uses; H4 controllers are reset.
            """)

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup var accessOptions: AccessOptions

    func validate() throws {
        try accessOptions.check(deviceOptions.specification)
    }

    func run() throws {
        do {
            let access = try AdvertisingLaunch.resolve(accessOptions.access, device: deviceOptions.specification,
                                                       bringingUp: deviceOptions.up)
            if access == .management, case let .kernel(index) = deviceOptions.specification {
                let connection = try ManagementConnection.open(index: index, powerOn: false)
                defer { connection.close() }
                if deviceOptions.verbose { connection.client.trace = { Console.error($0) } }
                let what = try AdvertisingShutdown.removeRecordedInstances(connection)
                print("advertising off on \(connection.client.adapter): \(what)")
                return
            }
            let connection = try deviceOptions.open(progress: { Console.error($0) },
                                                    userChannel: access == .userChannel)
            defer { connection.close() }
            if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
            let what = try AdvertisingShutdown.disable(connection)
            print("advertising off on \(connection.device): \(what)")
        } catch {
            throw fail(error)
        }
    }
}
