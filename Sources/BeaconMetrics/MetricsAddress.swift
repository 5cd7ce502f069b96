// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where `--metrics` listens: `PORT` or `:PORT` (loopback), `ADDRESS:PORT`, `[IPV6]:PORT`;
/// port 0 is one the kernel picks (the emitter prints it).
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(host: String = "127.0.0.1", port: UInt16) {
        self.host = host
        self.port = port
    }

    /// - Throws: `Invalid` saying what the value should look like.
    public init(parsing text: String) throws(Invalid) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw Self.invalid(text) }
            port = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            guard !host.contains(":") else { throw Self.invalid(text) }
        } else {
            (host, port) = ("", Substring(text))
        }
        guard let number = UInt16(port) else { throw Self.invalid(text) }
        let address = host.isEmpty ? "127.0.0.1" : String(host)
        guard Self.isNumeric(address) else {
            throw Invalid(description: "--metrics takes a numeric address (127.0.0.1, 0.0.0.0, ::1), got '\(address)'")
        }
        self.init(host: address, port: number)
    }

    private static func invalid(_ text: String) -> Invalid {
        Invalid(description: "--metrics takes PORT or ADDRESS:PORT (9464, 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464), got '\(text)'")
    }

    private static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
