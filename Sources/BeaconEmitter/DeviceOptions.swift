// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost

/// `--device` and what goes with it, shared by every command that talks to a controller.
struct DeviceOptions: ParsableArguments {
    @Option(name: [.customShort("i"), .customLong("device")], help: ArgumentHelp(
        "Controller: hci0 (or 0), tcp:HOST:PORT, serial:/dev/PATH[:BAUD], or virtual. Default: the first kernel adapter that is up.",
        valueName: "device"))
    var device: String?

    @Flag(help: "Bring a kernel adapter that is down up first.")
    var up = false

    @Flag(name: [.short, .long], help: "Report each step and HCI command.")
    var verbose = false

    func validate() throws {
        if let device {
            do {
                _ = try DeviceSpecification(parsing: device)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    var specification: DeviceSpecification {
        device.flatMap { try? DeviceSpecification(parsing: $0) } ?? .kernel(index: nil)
    }

    /// Opens the controller, entering the private namespace first for `virtual`.
    /// - Throws: `HostError` (the caller turns it into a message and exit status).
    func open(progress: (String) -> Void) throws(HostError) -> ControllerConnection {
        let specification = self.specification
        if specification == .virtual {
            try VirtualController.enterPrivateNamespace(arguments: CommandLine.arguments, progress: progress)
        }
        if case .kernel(nil) = specification, up {
            throw .unsupported("--up needs an adapter name: --device hci0 --up")
        }
        return try ControllerConnection.open(specification, bringUp: up)
    }
}

/// Prints a host error the way every command does, and exits with its status.
func fail(_ error: HostError) -> ExitCode {
    Console.error(error.description)
    return ExitCode(error.exitStatus)
}
