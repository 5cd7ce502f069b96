// SPDX-License-Identifier: GPL-2.0-or-later

// The only Swift file that imports CHCI: kernel HCI sockets through libbluetooth.

import AdvertisementCodec
import CHCI
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Kernel adapters (`hci0`): opening raw HCI sockets, listing adapters, bringing one up.
package enum KernelSocketTransport {
    /// Opens a raw HCI socket on adapter `index`, or on the first adapter that is up.
    ///
    /// The corresponding C functions are `hci_get_route` and `hci_open_dev`.
    /// - Throws: `HostError` with the cause a user can act on (no Bluetooth in the kernel,
    ///   no such adapter, missing capability).
    public static func open(index: Int?) throws(HostError) -> HCIDescriptorTransport {
        let id: Int32
        if let index {
            id = Int32(index)
        } else {
            let route = chci_first_up_device()
            if route < 0 { throw classify(-route, call: "hci_get_route", adapter: nil) }
            id = route
        }
        let fd = chci_open_device(id)
        if fd < 0 { throw classify(-fd, call: "hci_open_dev(\(id))", adapter: Int(id)) }
        return HCIDescriptorTransport(name: "hci\(id)", descriptor: fd, closeDescriptor: {
            _ = chci_close_device($0)
            Descriptor.noteClosed()
        })
    }

    /// Opens the kernel's management socket (`HCI_CHANNEL_CONTROL`), through which the
    /// kernel and bluetoothd share advertising instances.
    /// - Throws: `HostError` (no Bluetooth in the kernel, ...).
    public static func openManagement() throws(HostError) -> MgmtSocket {
        let fd = chci_open_channel(-1, Int32(CHCI_CHANNEL_CONTROL))
        if fd < 0 { throw classify(-fd, call: "bind(HCI_CHANNEL_CONTROL)", adapter: nil) }
        return MgmtSocket(descriptor: fd)
    }

    /// Opens the kernel's monitor channel (`HCI_CHANNEL_MONITOR`, what btmon reads), which
    /// shows every program's management commands with the name of the process that sent them;
    /// a socket filter keeps only those (not every adapter's HCI traffic). Needs CAP_NET_RAW.
    /// - Throws: `HostError` (missing capability, no Bluetooth in the kernel).
    public static func openMonitor() throws(HostError) -> MgmtSocket {
        let fd = chci_open_channel(-1, Int32(CHCI_CHANNEL_MONITOR))
        if fd < 0 { throw classify(-fd, call: "bind(HCI_CHANNEL_MONITOR)", adapter: nil) }
        // Without the filter it works the same, reading (and dropping) every HCI packet itself.
        _ = chci_filter_monitor_control(fd)
        return MgmtSocket(descriptor: fd, name: "the monitor socket")
    }

    /// A socket on which the kernel says when an adapter comes, goes, goes up or down (its
    /// device events), for a wait to wake at once instead of checking on a schedule. Nil where
    /// it cannot open (no Bluetooth in the kernel); without CAP_NET_RAW it opens and stays quiet.
    public static func openDeviceEvents() -> Descriptor? {
        let fd = chci_open_device_events()
        return fd < 0 ? nil : Descriptor(fd)
    }

    /// Takes adapter `index` from the kernel for this process alone (`HCI_CHANNEL_USER`): no
    /// other program, bluetoothd included, can use it until the socket closes, when the kernel
    /// takes it back (down).
    /// - Throws: `HostError.userChannel` when the adapter is up or held, or `.kernel`.
    public static func openUserChannel(index: Int) throws(HostError) -> HCIDescriptorTransport {
        let fd = chci_open_channel(Int32(index), Int32(CHCI_CHANNEL_USER))
        if fd < 0 {
            let code = -fd
            if code == EBUSY || code == EUSERS { throw .userChannel(errno: code, adapter: "hci\(index)") }
            throw classify(code, call: "bind(HCI_CHANNEL_USER, hci\(index))", adapter: index)
        }
        return HCIDescriptorTransport(name: "hci\(index) (user channel)", descriptor: fd)
    }

    /// Whether adapter `index` exists (up or down); false also when the kernel has no Bluetooth.
    public static func exists(index: Int) -> Bool {
        chci_device_exists(Int32(index)) == 1
    }

    /// Whether adapter `index` is up.
    public static func isUp(index: Int) -> Bool {
        chci_device_is_up(Int32(index)) == 1
    }

    /// Brings adapter `index` up (HCIDEVUP), as `hciconfig hciN up` does.
    /// - Throws: `HostError` naming the cause.
    public static func bringUp(index: Int) throws(HostError) {
        let result = chci_device_up(Int32(index))
        if result < 0 { throw classify(-result, call: "ioctl(HCIDEVUP, hci\(index))", adapter: index) }
    }

    /// The adapters the kernel knows, with whether each is up and its public address; empty
    /// when it has none or no Bluetooth at all.
    public static func adapters() -> [(name: String, up: Bool, index: Int, address: BluetoothAddress?)] {
        var ids = [Int32](repeating: 0, count: 16)
        var up = [Int32](repeating: 0, count: 16)
        let count = chci_device_list(&ids, &up, 16)
        guard count > 0 else { return [] }
        return (0..<Int(count)).map { ("hci\(ids[$0])", up[$0] != 0, Int(ids[$0]), address(index: Int(ids[$0]))) }
    }

    /// Adapter `index`'s public address; nil when it does not exist.
    public static func address(index: Int) -> BluetoothAddress? {
        var bytes = [UInt8](repeating: 0, count: 6)
        guard chci_device_address(Int32(index), &bytes) == 0 else { return nil }
        return BluetoothAddress(littleEndian: bytes)
    }

    /// The number of the adapter whose public address is `address` (the lowest, should two
    /// have it); nil when none has.
    public static func index(of address: BluetoothAddress) -> Int? {
        adapters().filter { $0.address == address }.map(\.index).min()
    }

    /// - Parameter named: what names the adapter in the message when it is not a number (an address).
    static func classify(_ code: Int32, call: String, adapter: Int?, named: String? = nil) -> HostError {
        HostError.kernel(call: call, errno: code, adapter: adapter.map { "hci\($0)" } ?? named,
                         adapters: adapters().map {
                             "\($0.name) (\($0.up ? "up" : "down")\($0.address.map { ", \($0)" } ?? ""))"
                         })
    }
}
