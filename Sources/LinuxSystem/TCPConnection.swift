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

    /// A socket listening on `host:port` (a numeric IPv4 or IPv6 address; port 0: one the
    /// kernel picks, `localPort` says which): non-blocking, close-on-exec, the address reusable
    /// at once after an earlier run.
    /// - Throws: `SystemCallError`: an address that is not numeric (getaddrinfo, EINVAL), or
    ///   the call that failed (`bind(name)`: EADDRINUSE for a port in use); nothing stays open.
    public static func listen(host: String, port: UInt16, backlog: Int32, name: String) throws(SystemCallError) -> Descriptor {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else {
            throw SystemCallError(call: "getaddrinfo(\(host))", errno: EINVAL)
        }
        defer { freeaddrinfo(list) }
        let socket = try Descriptor.socket(domain: info.pointee.ai_family,
                                           type: info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue),
                                           protocol: info.pointee.ai_protocol)
        do {
            try socket.setOption(level: SOL_SOCKET, SO_REUSEADDR, to: 1)
            try socket.bind(to: info.pointee.ai_addr, length: info.pointee.ai_addrlen, name: "bind(\(name))")
            try socket.listen(backlog: backlog, name: "listen(\(name))")
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// The port a listening socket is bound to (nil when it cannot be read).
    public static func localPort(of socket: Descriptor) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
        }
        guard status == 0 else { return nil }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> UInt16 in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// Quick acknowledgements on again (the kernel turns them off after a while): called after
    /// each read, so delayed ACKs do not add tens of milliseconds to each round trip.
    public static func rearmQuickAcknowledgements(_ socket: Descriptor) {
        try? socket.setOption(level: Int32(IPPROTO_TCP), TCP_QUICKACK, to: 1)
    }
}
