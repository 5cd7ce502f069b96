// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost

/// `beacon-emit stop`: turn advertising off on a controller (already off is success).
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn advertising off on a controller (for example after --keep). Already off is success.")

    @OptionGroup var deviceOptions: DeviceOptions

    func run() throws {
        do {
            let connection = try deviceOptions.open(progress: { Console.error($0) })
            defer { connection.close() }
            if deviceOptions.verbose { connection.controller.trace = { Console.error($0) } }
            let what = try AdvertisingShutdown.disableAll(connection)
            print("advertising off on \(connection.device): \(what)")
        } catch {
            throw fail(error)
        }
    }
}
