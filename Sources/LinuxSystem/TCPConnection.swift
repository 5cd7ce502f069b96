// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// TCP connections for latency over throughput: Nagle off, and each read acknowledged at once.
public enum TCPConnection {
    /// Connects to `host:port` (each address the name resolves to, in turn) with Nagle off and
    /// quick acknowledgements on.
    /// - Throws: `SystemCallError`: the name that does not resolve (getaddrinfo), or the last
    ///   address's refusal (`connect(name)`).
    public static func connect(host: String, port: UInt16, name: String) throws(SystemCallError) -> Descriptor {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SystemCallError(call: "getaddrinfo(\(host))", errno: status == EAI_SYSTEM ? errno : ENOENT)
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let socket: Descriptor
            do {
                socket = try Descriptor.socket(domain: info.pointee.ai_family, type: info.pointee.ai_socktype,
                                               protocol: info.pointee.ai_protocol)
            } catch {
                lastError = error.errno
                continue
            }
            do {
                try socket.connect(to: info.pointee.ai_addr, length: info.pointee.ai_addrlen)
            } catch {
                lastError = error.errno
                socket.close()
                continue
            }
            try? socket.setOption(level: Int32(IPPROTO_TCP), TCP_NODELAY, to: 1)
            rearmQuickAcknowledgements(socket)
            return socket
        }
        throw SystemCallError(call: "connect(\(name))", errno: lastError)
    }

    /// Quick acknowledgements on again (the kernel turns them off after a while): called after
    /// each read, so delayed ACKs do not add tens of milliseconds to each round trip.
    public static func rearmQuickAcknowledgements(_ socket: Descriptor) {
        try? socket.setOption(level: Int32(IPPROTO_TCP), TCP_QUICKACK, to: 1)
    }
}
