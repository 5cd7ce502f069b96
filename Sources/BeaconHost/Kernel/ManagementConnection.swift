// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A link to a kernel adapter's management interface, with the adapter's state at open.
package final class ManagementConnection {
    public let client: MgmtClient
    public let information: ReadControllerInformation.ReturnParameters

    init(client: MgmtClient, information: ReadControllerInformation.ReturnParameters) {
        self.client = client
        self.information = information
    }

    /// Opens the management socket for adapter `index` (nil: the first powered adapter) and
    /// reads its state.
    /// - Parameter powerOn: switch LE on and power the adapter on first where they are off (`--up`).
    /// - Throws: `HostError`: no Bluetooth in the kernel, no such adapter, missing permission;
    ///   `.unsupported` when LE is off, the adapter is powered off (without `powerOn`), or Set
    ///   Advertising is on (it takes precedence over every instance).
    public static func open(index: Int?, powerOn: Bool, commandTimeout: Duration = .seconds(2)) throws(HostError)
        -> ManagementConnection {
        let socket = try KernelSocketTransport.openManagement()
        var client = MgmtClient(transport: socket, index: UInt16(index ?? 0), commandTimeout: commandTimeout)
        if index == nil {
            let indices = try client.send(ReadControllerIndexList(), global: true).indices
            var chosen: UInt16? = nil
            for candidate in indices {
                let probe = MgmtClient(transport: socket, index: candidate, commandTimeout: commandTimeout)
                if (try? probe.send(ReadControllerInformation()))?.currentSettings.contains(.powered) == true {
                    chosen = candidate
                    break
                }
            }
            guard let chosen else {
                throw KernelSocketTransport.classify(ENODEV, call: "the management API", adapter: nil)
            }
            client = MgmtClient(transport: socket, index: chosen, commandTimeout: commandTimeout)
        }
        var information = try client.send(ReadControllerInformation())
        let adapter = client.adapter
        let settings = information.currentSettings
        if !settings.contains(.powered) || !settings.contains(.lowEnergy) {
            guard powerOn else {
                if !settings.contains(.powered) {
                    throw .kernel(call: "the management API", errno: ENETDOWN, adapter: adapter, adapters: [])
                }
                throw .refused(Refusal(nil, .lowEnergyOff(adapter: adapter, index: client.index)))
            }
            if !settings.contains(.lowEnergy) {
                information.currentSettings = try client.send(SetLowEnergy(enabled: true)).currentSettings
            }
            if !settings.contains(.powered) {
                information.currentSettings = try client.send(SetPowered(powered: true), timeout: MgmtClient.powerOnTimeout).currentSettings
            }
        }
        if information.currentSettings.contains(.advertising) {
            throw .refused(Refusal(nil, .setAdvertisingOn(adapter: adapter, index: client.index)))
        }
        return ManagementConnection(client: client, information: information)
    }

    /// Whether the management API can carry beacons on adapter `index` (nil: the first one):
    /// the kernel offers advertising instances there, and LE is on (or `--up` will switch it
    /// on). The automatic choice takes the management API when it can.
    public static func canAdvertise(index: Int?, bringingUp: Bool) -> Bool {
        guard let socket = try? KernelSocketTransport.openManagement() else { return false }
        defer { socket.close() }
        let client = MgmtClient(transport: socket, index: UInt16(index ?? 0), commandTimeout: .seconds(1))
        guard let index = index.map(UInt16.init) ?? (try? client.send(ReadControllerIndexList(), global: true))?.indices.first
        else { return false }
        let probe = MgmtClient(transport: socket, index: index, commandTimeout: .seconds(1))
        guard ((try? probe.send(ReadAdvertisingFeatures()))?.maximumInstances ?? 0) > 0 else { return false }
        return bringingUp || (try? probe.send(ReadControllerInformation()))?.currentSettings.contains(.lowEnergy) == true
    }

    public func close() { client.transport.close() }
}
