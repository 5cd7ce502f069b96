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
            beacon-emit recorded as its own are removed, and none of a run still going; on a raw socket, \
            only the advertising sets it uses; H4 controllers are reset. --recorded removes what every \
            ended run recorded, on every adapter (a service's ExecStopPost: a killed run leaves nothing).
            """ + guide("scanning.md#stop-and-info") + HelpExamples.text("stop"))

    @OptionGroup var deviceOptions: DeviceOptions
    @OptionGroup var accessOptions: AccessOptions

    @Flag(help: "Remove the instances every ended beacon-emit run recorded, on every adapter (not with --device or --access).")
    var recorded = false

    func validate() throws {
        try accessOptions.check(deviceOptions.specification)
        if recorded && (deviceOptions.device != nil || accessOptions.access != .automatic) {
            throw ValidationError("--recorded covers every adapter with records: drop --device and --access")
        }
    }

    func run() throws {
        if recorded {
            // A record directory it does not trust is neither read nor written: said, and a failure.
            if let untrusted = InstanceRecord.distrust(InstanceRecord.directory()) {
                Console.error("stop --recorded: \(untrusted)")
                throw ExitStatus.permission
            }
            for line in AdvertisingShutdown.removeEveryRecordedInstance() { print("stop --recorded: \(line)") }
            return
        }
        do {
            let device = try deviceOptions.specification.resolved()
            let access = try AdvertisingLaunch.resolve(accessOptions.access, device: device, bringingUp: deviceOptions.up)
            if access == .management, case let .kernel(index) = device {
                let connection = try ManagementConnection.open(index: index, powerOn: false)
                defer { connection.close() }
                if deviceOptions.verbose { connection.client.trace = { Console.error($0) } }
                let what = try AdvertisingShutdown.removeRecordedInstances(connection.client)
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
