// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What a controller says about itself: the facts `info` prints and the advertising flow
/// chooses by.
package struct ControllerInfo: Sendable {
    public var address: BluetoothAddress
    public var version: ReadLocalVersionInformation.ReturnParameters
    public var supportedCommands: ReadLocalSupportedCommands.ReturnParameters
    public var leFeatures: LEFeatures
    /// Advertising sets the controller offers (extended advertising only).
    public var numberOfAdvertisingSets: Int?
    /// The longest advertising data it takes: 31 with legacy advertising only.
    public var maximumAdvertisingDataLength: Int

    /// Extended advertising needs both the LE feature bit and the commands.
    public var supportsExtendedAdvertising: Bool {
        leFeatures.contains(.extendedAdvertising) && supportedCommands.supportsExtendedAdvertising
    }

    /// Reads the controller's address, version, supported commands and LE features, and with
    /// extended advertising the number of sets and (for `info`) the maximum data length, each
    /// only where the supported-commands bitmap lists the command: some controllers (BlueZ's
    /// emulator among them) offer extended advertising without every read command.
    /// - Parameter dataLength: also read the maximum advertising data length (beacons do not need it).
    /// - Throws: `HostError` from the command engine.
    public static func read(from controller: HCIController, dataLength: Bool = true) throws(HostError) -> ControllerInfo {
        let address = try controller.send(ReadBDAddr()).address
        let version = try controller.send(ReadLocalVersionInformation())
        let commands = try controller.send(ReadLocalSupportedCommands())
        let features = try controller.send(LEReadLocalSupportedFeatures()).features
        var info = ControllerInfo(address: address, version: version, supportedCommands: commands,
                                  leFeatures: features, numberOfAdvertisingSets: nil,
                                  maximumAdvertisingDataLength: AdvertisingData.legacyMaximumLength)
        if info.supportsExtendedAdvertising {
            info.numberOfAdvertisingSets = try AdvertisingCapabilities.readNumberOfSets(from: controller, commands: commands)
            if dataLength && commands.supportsReadMaximumAdvertisingDataLength {
                do {
                    info.maximumAdvertisingDataLength = Int(try controller.send(LEReadMaximumAdvertisingDataLength()).maximumLength)
                } catch let HostError.controllerRefused(_, status, _) where status == .unknownCommand {
                    // Listed in the bitmap but not implemented (BlueZ's emulator): keep 31.
                }
            }
        }
        return info
    }

    /// What `info` reads: an owned controller initialised first (`initialize`), then `read`. A
    /// hardware error meanwhile is answered as `advertise` and `scan` answer one: the
    /// controller is reset (owned) or given `Emitter.settleTime` (the kernel resets its own),
    /// and read again, at most three times in all.
    /// - Parameter log: told of each hardware error recovered from.
    /// - Throws: `HostError` from the command engine.
    public static func query(_ controller: HCIController, owned: Bool,
                             log: (String) -> Void) throws(HostError) -> ControllerInfo {
        var attempt = 1
        while true {
            do {
                if owned { try initialize(controller) }
                return try read(from: controller)
            } catch let .hardwareError(code) where attempt < 3 {
                attempt += 1
                log("\(Disruption.hardwareError(code: code)): reading it again")
                _ = Poll.pause(Emitter.settleTime, interrupt: nil)
            }
        }
    }

    /// Resets an owned controller and enables the events the host needs (LE Meta; advertising
    /// reports, extended reports, set terminated). Not for kernel adapters, which the kernel
    /// configures itself.
    public static func initialize(_ controller: HCIController) throws(HostError) {
        try controller.send(Reset())
        try controller.send(SetEventMask.defaultWithLEMeta)
        try controller.send(LESetEventMask.beaconDefault)
    }

    /// A company name for the manufacturers users meet most; the number otherwise.
    public var manufacturer: String {
        let names: [UInt16: String] = [
            0x0000: "Ericsson", 0x0002: "Intel", 0x000A: "Qualcomm (CSR)", 0x000D: "Texas Instruments",
            0x000F: "Broadcom", 0x001D: "Qualcomm", 0x003F: "Bluetooth SIG", 0x0046: "MediaTek", 0x004C: "Apple",
            0x0059: "Nordic Semiconductor", 0x005D: "Realtek", 0x00E0: "Google", 0x02E5: "Espressif",
            0x05F1: "The Linux Foundation",
        ]
        let id = version.companyIdentifier
        return names[id.rawValue].map { "\($0) (\(id))" } ?? "\(id)"
    }
}

