// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
import BeaconHost
import BeaconReports

/// `--device` and what goes with it, shared by every command that talks to a controller.
struct DeviceOptions: ParsableArguments {
    @Option(name: [.customShort("i"), .customLong("device")], help: ArgumentHelp(
        "Controller: hci0 (or 0), an adapter's address AA:BB:CC:DD:EE:FF, tcp:HOST:PORT, serial:/dev/PATH[:BAUD], or virtual. Default: the first kernel adapter that is up.",
        valueName: "device"), transform: parsed(DeviceSpecification.init(parsing:)))
    var device: DeviceSpecification?

    @Flag(help: "Bring a kernel adapter that is down up first (advertise: again when it is unplugged and comes back).")
    var up = false

    @Flag(name: [.short, .long], help: "Report each step and HCI command.")
    var verbose = false

    var specification: DeviceSpecification {
        device ?? .kernel(index: nil)
    }

    /// Opens the controller, entering the private namespace first for `virtual`.
    /// - Throws: `HostError` (the caller turns it into a message and exit status).
    func open(progress: (String) -> Void, userChannel: Bool = false) throws(HostError) -> ControllerConnection {
        let specification = self.specification
        if specification == .virtual {
            try VirtualController.enterPrivateNamespace(arguments: CommandLine.arguments, progress: progress)
        }
        let connection = try ControllerConnection.open(specification, bringUp: up, userChannel: userChannel)
        connection.controller.reportUnsolicited = Console.ignored
        return connection
    }
}

extension DeviceOptions {
    /// A scanner on `scanner` and, when --device was given, `beacon` advertised on --device
    /// (`verify`, `calibrate`); a `virtual` one of them runs in a private namespace of its own.
    func openWithScanner(_ scanner: DeviceSpecification, advertising beacon: Beacon, legacy: Bool,
                         scanOptions: AdvertisementScanner.Options = .init()) throws(HostError) -> AdvertiseAndScan {
        let emitting = device != nil
        if scanner == .virtual || (emitting && specification == .virtual) {
            try VirtualController.enterPrivateNamespace(arguments: CommandLine.arguments, progress: { Console.error($0) })
        }
        let emitter = emitting ? try open(progress: { Console.error($0) }) : nil
        do {
            return try AdvertiseAndScan(advertising: beacon, on: emitter, legacy: legacy, scanning: scanner,
                                        scanOptions: scanOptions,
                                        steps: { [verbose] in if verbose { Console.error($0) } },
                                        warnings: { Console.error($0, priority: .warning) })
        } catch {
            emitter?.close()
            throw error
        }
    }
}

/// `--access`: how a kernel adapter is reached.
struct AccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        How to reach a kernel adapter: mgmt (the kernel's management API: advertising instances beside \
        bluetoothd's and other programs', which the kernel keeps apart; the address is the kernel's choice), \
        raw (HCI commands on a raw socket, on advertising sets the kernel does not use; on an adapter the \
        kernel manages, legacy advertising is shared with it, whoever writes last wins, and bluetoothd can \
        override it), user-channel (the adapter taken from the kernel while beacon-emit runs: nothing else \
        can use it; it must be down first), or auto: mgmt where the kernel offers advertising instances, \
        raw otherwise.
        """, valueName: "way"))
    var access: KernelAccess = .automatic

    /// `--access` other than auto and raw names a kernel adapter's way in.
    func check(_ device: DeviceSpecification) throws {
        do {
            if access != .automatic { _ = try AdvertisingLaunch.resolve(access, device: device) }
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension KernelAccess: ExpressibleByArgument {}

/// An option's transform that parses its value once, at parse time: a value the library
/// refuses is a usage error with the library's message (what is accepted, what is wrong).
func parsed<Value, Failure: Error & CustomStringConvertible>(_ parse: @escaping @Sendable (String) throws(Failure) -> Value)
    -> @Sendable (String) throws -> Value {
    { text in
        do throws(Failure) {
            return try parse(text)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// Prints a host error the way every command does, and exits with its status.
func fail(_ error: HostError) -> ExitCode {
    Console.error(error.message)
    return ExitCode(error.exitStatus)
}
