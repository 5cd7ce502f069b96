// SPDX-License-Identifier: GPL-2.0-or-later

/// An open link to a controller, with what was started to provide it.
package final class ControllerConnection {
    public let controller: HCIController
    public let device: DeviceSpecification
    /// The private rootcanal behind `--device virtual`.
    public let virtualController: RunningVirtualController?

    /// Whether the host may reset the controller: H4 links, the virtual one, and a kernel
    /// adapter taken through the user channel; not a kernel adapter shared with the kernel.
    public let ownsController: Bool

    init(controller: HCIController, device: DeviceSpecification, virtualController: RunningVirtualController?,
         ownsController: Bool? = nil) {
        self.controller = controller
        self.device = device
        self.virtualController = virtualController
        self.ownsController = ownsController ?? device.ownsController
    }

    /// The kernel adapter behind a raw socket, or nil (H4 links, the user channel).
    public var sharedKernelIndex: Int? {
        guard case let .kernel(index) = device, !ownsController else { return nil }
        return index ?? Int(controller.transport.name.dropFirst(3))
    }

    /// Opens `device`. For `.virtual` the caller must already run inside the private namespace
    /// (`VirtualController.enterPrivateNamespace`).
    /// - Parameter bringUp: bring a down kernel adapter up first (`--up`); it needs the adapter named.
    /// - Throws: `HostError` with the cause and what to do.
    /// - Parameter userChannel: take a kernel adapter through the exclusive user channel.
    public static func open(_ device: DeviceSpecification, bringUp: Bool = false, userChannel: Bool = false,
                            commandTimeout: Duration = .seconds(2)) throws(HostError) -> ControllerConnection {
        let device = try device.resolved()
        if case .kernel(nil) = device, bringUp {
            throw .refused(Refusal(.bringUp, .needsAdapterName))
        }
        let transport: any HCITransport
        var virtual: RunningVirtualController? = nil
        var shared = false
        switch device {
        case let .kernel(index) where userChannel:
            guard let index else { throw .refused(Refusal(.kernelAccess(.userChannel), .needsAdapterName)) }
            if bringUp { throw .refused(Refusal(.bringUp, .needsAdapterDown)) }
            let channel = try KernelSocketTransport.openUserChannel(index: index)
            return ControllerConnection(controller: HCIController(transport: channel, commandTimeout: commandTimeout),
                                        device: device, virtualController: nil, ownsController: true)
        case let .kernel(index):
            if bringUp, let index { try KernelSocketTransport.bringUp(index: index) }
            transport = try KernelSocketTransport.open(index: index)
            shared = true
        case let .tcp(host, port):
            do {
                transport = try StreamTransports.connectTCP(host: host, port: port)
            } catch {
                throw .transport(error, device: device.description)
            }
        case let .serial(path, baud):
            do {
                transport = try StreamTransports.openSerial(path: path, baud: baud)
            } catch {
                throw .transport(error, device: device.description)
            }
        case .adapter:  // resolved above: never an address here
            throw .invalidDevice("\(device)", reason: "not resolved to an adapter number")
        case .virtual:
            let running = try VirtualController.launch()
            virtual = running
            do {
                transport = try StreamTransports.connectTCP(host: "127.0.0.1", port: running.port)
            } catch {
                running.stop()
                throw .transport(error, device: "virtual controller")
            }
        }
        return ControllerConnection(controller: HCIController(transport: transport, commandTimeout: commandTimeout,
                                                              sharedWithKernel: shared),
                                    device: device, virtualController: virtual)
    }

    /// A second device on the same virtual radio (for the virtual round trip).
    /// - Throws: `HostError` if this is not a virtual connection or the connection fails.
    public func openVirtualPeer() throws(HostError) -> HCIController {
        guard let virtualController else { throw .refused(Refusal(.secondDevice, .needsVirtualDevice)) }
        do {
            let transport = try StreamTransports.connectTCP(host: "127.0.0.1", port: virtualController.port)
            return HCIController(transport: transport)
        } catch {
            throw .transport(error, device: "virtual controller")
        }
    }

    /// A controller to scan with beside `emitter`: `virtual` beside a virtual emitter is a
    /// second device on its radio; anything else is opened (the connection, to close).
    /// - Throws: `HostError` naming the device.
    public static func openScanner(_ specification: DeviceSpecification, beside emitter: ControllerConnection?)
        throws(HostError) -> (controller: HCIController, connection: ControllerConnection?) {
        if specification == .virtual, let emitter, emitter.virtualController != nil {
            return (try emitter.openVirtualPeer(), nil)
        }
        let connection = try open(specification)
        return (connection.controller, connection)
    }

    /// Closes the link, then stops the virtual controller if one was started.
    public func close() {
        controller.transport.close()
        virtualController?.stop()
    }
}
