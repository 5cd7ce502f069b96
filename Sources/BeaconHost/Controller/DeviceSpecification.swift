// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which controller to use, as `--device` names it.
public enum DeviceSpecification: Hashable, Sendable, CustomStringConvertible {
    /// A kernel adapter: `hci0` or `0`; nil for "the first adapter that is up".
    case kernel(index: Int?)
    /// The kernel adapter with this public address, `AA:BB:CC:DD:EE:FF`, whatever its number
    /// (`resolved()` finds it).
    case adapter(address: BluetoothAddress)
    /// H4 over TCP: `tcp:HOST:PORT`.
    case tcp(host: String, port: UInt16)
    /// H4 over a UART: `serial:/dev/ttyACM0[:BAUD]`.
    case serial(path: String, baud: Int)
    /// A private virtual controller: `virtual`.
    case virtual

    public static let defaultBaud = 115_200
    static let supportedBauds = [9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000,
                                 921_600, 1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000,
                                 3_500_000, 4_000_000]

    /// Parses a `--device` value.
    /// - Throws: `HostError.invalidDevice` saying which forms are accepted.
    public init(parsing text: String) throws(HostError) {
        if text == "virtual" {
            self = .virtual
            return
        }
        if let index = Int(text.hasPrefix("hci") ? String(text.dropFirst(3)) : text), index >= 0, index < 1024 {
            self = .kernel(index: index)
            return
        }
        if text.count == 17, let address = try? BluetoothAddress(parsing: text) {
            self = .adapter(address: address)
            return
        }
        if text.hasPrefix("tcp:") {
            let rest = text.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]),
                  port > 0, colon != rest.startIndex else {
                throw .invalidDevice(text, reason: "expected tcp:HOST:PORT, for example tcp:127.0.0.1:6402")
            }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self = .tcp(host: host, port: port)
            return
        }
        if text.hasPrefix("serial:") {
            let parts = text.dropFirst(7).split(separator: ":", omittingEmptySubsequences: false)
            guard let path = parts.first, path.hasPrefix("/"), parts.count <= 2 else {
                throw .invalidDevice(text, reason: "expected serial:/dev/PATH[:BAUD], for example serial:/dev/ttyACM0:1000000")
            }
            var baud = Self.defaultBaud
            if parts.count == 2 {
                guard let value = Int(parts[1]), Self.supportedBauds.contains(value) else {
                    throw .invalidDevice(text, reason: "baud rate must be one of "
                                         + Self.supportedBauds.map(String.init).joined(separator: ", "))
                }
                baud = value
            }
            self = .serial(path: String(path), baud: baud)
            return
        }
        throw .invalidDevice(text, reason: "expected hci0 (or 0), an adapter's address AA:BB:CC:DD:EE:FF, tcp:HOST:PORT, "
                             + "serial:/dev/PATH[:BAUD] or virtual")
    }

    public var description: String {
        switch self {
        case let .kernel(index): index.map { "hci\($0)" } ?? "the first adapter that is up"
        case let .adapter(address): "the adapter \(address)"
        case let .tcp(host, port): "tcp:\(host):\(port)"
        case let .serial(path, baud): "serial:\(path):\(baud)"
        case .virtual: "virtual"
        }
    }

    /// Whether the host owns the whole controller (and may reset it): true for H4 links,
    /// false for kernel adapters, which the kernel and bluetoothd also drive.
    public var ownsController: Bool {
        switch self {
        case .kernel, .adapter: false
        default: true
        }
    }

    /// The adapter's address this names (`.adapter`), followed when the adapter comes back
    /// under another number.
    public var adapterAddress: BluetoothAddress? {
        if case let .adapter(address) = self { address } else { nil }
    }

    /// This device, with an adapter named by its address as the kernel numbers it now
    /// (`.kernel(index:)`); any other as it is.
    /// - Throws: `HostError.kernel` (ENODEV) when no adapter has the address, naming the
    ///   adapters there are and their addresses.
    public func resolved() throws(HostError) -> DeviceSpecification {
        guard case let .adapter(address) = self else { return self }
        guard let index = KernelSocketTransport.index(of: address) else {
            throw KernelSocketTransport.classify(ENODEV, call: "find the adapter with address \(address)",
                                                 adapter: nil, named: "\(address)")
        }
        return .kernel(index: index)
    }
}
