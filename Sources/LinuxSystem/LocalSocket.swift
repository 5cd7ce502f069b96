// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unix-domain stream sockets named by a path: one listened on, one connected to.
public enum LocalSocket {
    /// The longest path a socket can be named by, in bytes.
    public static var maximumPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// A socket listening at `path` (socket, bind, listen): non-blocking, close-on-exec. The
    /// caller chooses its permissions (`FileSystem.withCreationMask` around it).
    /// - Throws: `SystemCallError` naming the call; nothing stays open.
    public static func listen(path: String, backlog: Int32) throws(SystemCallError) -> Descriptor {
        var address = try address(path)
        let socket = try Descriptor.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                Result { () throws(SystemCallError) in
                    try socket.bind(to: address, length: socklen_t(MemoryLayout<sockaddr_un>.size))
                    try socket.listen(backlog: backlog)
                }
            }
        }
        if case let .failure(error) = bound {
            socket.close()
            throw error
        }
        return socket
    }

    /// A socket connected to the one listening at `path` (blocking).
    /// - Parameter timeout: how long to wait for a listener whose queue of connections is full
    ///   (the kernel waits for room that long, then fails with EAGAIN); nil: for ever.
    /// - Throws: `SystemCallError` naming the call; nothing stays open.
    public static func connect(path: String, timeout: Duration? = nil) throws(SystemCallError) -> Descriptor {
        var address = try address(path)
        let socket = try Descriptor.socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                Result { () throws(SystemCallError) in
                    // A Unix socket's connect waits for room in the listener's queue as long as
                    // the socket's send timeout says; the timeout is lifted once connected.
                    if let timeout { try socket.setOption(level: SOL_SOCKET, SO_SNDTIMEO, to: timeout) }
                    try socket.connect(to: address, length: socklen_t(MemoryLayout<sockaddr_un>.size))
                    if timeout != nil { try socket.setOption(level: SOL_SOCKET, SO_SNDTIMEO, to: .zero) }
                }
            }
        }
        if case let .failure(error) = connected {
            socket.close()
            throw error
        }
        return socket
    }

    private static func address(_ path: String) throws(SystemCallError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumPathLength else {
            throw SystemCallError(call: "socket path \(path)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}
