// SPDX-License-Identifier: GPL-2.0-or-later

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file descriptor, typed: the calls this package makes on sockets, pipes, files and
/// terminals, each through `SystemCall` (EINTR retried, "would block" a value, errors naming
/// the call). It does not own what it names: an owner keeps it in an optional and sets that to
/// nil when it closes it, so a closed descriptor is a state, not a -1 checked everywhere.
public struct Descriptor: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Wraps what a call that returns a descriptor returned.
    /// - Throws: `SystemCallError` naming `call` when it is negative (errno read at once).
    public init(checking rawValue: Int32, call: @autoclosure () -> String) throws(SystemCallError) {
        guard rawValue >= 0 else { throw SystemCallError(call: call(), errno: SystemCall.currentErrno) }
        self.rawValue = rawValue
    }

    public var description: String { "fd \(rawValue)" }

    /// Makes reads and writes on it return `.wouldBlock` instead of waiting.
    /// The corresponding C function is `fcntl` (`F_SETFL`, `O_NONBLOCK`).
    public func setNonBlocking() {
        _ = fcntl(rawValue, F_SETFL, fcntl(rawValue, F_GETFL) | O_NONBLOCK)
    }

    /// Reads at most `buffer.count` bytes: the count (0 at the end), or `.wouldBlock`.
    /// The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer,
                     name: @autoclosure () -> String = "read") throws(SystemCallError) -> SystemCall.Outcome<Int> {
        try SystemCall.run(name()) { system_read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads into `buffer` from `offset` to its end.
    public func read(into buffer: inout [UInt8], from offset: Int = 0,
                     name: @autoclosure () -> String = "read") throws(SystemCallError) -> SystemCall.Outcome<Int> {
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemCallError) in
                try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]), name: name())
            }
        }
        return try result.get()
    }

    /// Writes at most `bytes.count` bytes: the count, or `.wouldBlock`.
    /// The corresponding C function is `write`.
    public func write(_ bytes: UnsafeRawBufferPointer,
                      name: @autoclosure () -> String = "write") throws(SystemCallError) -> SystemCall.Outcome<Int> {
        try SystemCall.run(name()) { system_write(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes` to a blocking byte stream, resuming after partial writes.
    /// Not for packet sockets, where one write is one packet (`writePacket`).
    /// - Throws: `SystemCallError` naming `name`; "would block", and a write that takes
    ///   nothing, count as failures here.
    public func writeAll(_ bytes: UnsafeRawBufferPointer, name: @autoclosure () -> String = "write") throws(SystemCallError) {
        try transferAll(bytes, name: name) { part throws(SystemCallError) in try write(part, name: name()) }
    }

    /// `writeAll` on a socket through `send`: a peer that went away is an error (EPIPE), never
    /// SIGPIPE, whether or not the program ignores that signal.
    public func sendAll(_ bytes: [UInt8], name: @autoclosure () -> String = "send") throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallError) in
                try transferAll(raw, name: name) { part throws(SystemCallError) in try send(part, name: name()) }
            }
        }
        try result.get()
    }

    /// All of `bytes` through `one` (a write or a send), resuming after partial transfers.
    private func transferAll(_ bytes: UnsafeRawBufferPointer, name: () -> String,
                             _ one: (UnsafeRawBufferPointer) throws(SystemCallError) -> SystemCall.Outcome<Int>)
        throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            switch try one(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case let .done(count) where count > 0: offset += count
            case .done: throw SystemCallError(call: name(), errno: EIO)
            case .wouldBlock: throw SystemCallError(call: name(), errno: EAGAIN)
            }
        }
    }

    /// Writes one packet with one write, to a socket that takes packets whole: whatever count
    /// it returns, the packet is sent (the kernel's management socket returns 0 for a command
    /// it answers itself, refusing it for lack of privilege: writing it again would queue the
    /// refusal again).
    /// - Throws: `SystemCallError` naming `name`; "would block" counts as a failure here.
    public func writePacket(_ bytes: [UInt8], name: @autoclosure () -> String = "write") throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallError) in try write(raw, name: name()) }
        }
        if case .wouldBlock = try result.get() { throw SystemCallError(call: name(), errno: EAGAIN) }
    }

    /// `writeAll` for an array.
    public func writeAll(_ bytes: [UInt8], name: @autoclosure () -> String = "write") throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallError) in try writeAll(raw, name: name()) }
        }
        try result.get()
    }

    /// Sends on a socket without raising SIGPIPE: the count, or `.wouldBlock`.
    /// The corresponding C function is `send` (with `MSG_NOSIGNAL`).
    public func send(_ bytes: UnsafeRawBufferPointer,
                     name: @autoclosure () -> String = "send") throws(SystemCallError) -> SystemCall.Outcome<Int> {
        try SystemCall.run(name()) { system_send(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// Sends one datagram to `address` (of `length` bytes) without raising SIGPIPE.
    /// The corresponding C function is `sendto`.
    public func send(_ bytes: UnsafeRawBufferPointer, to address: UnsafePointer<sockaddr>, length: socklen_t,
                     name: @autoclosure () -> String = "sendto") throws(SystemCallError) -> SystemCall.Outcome<Int> {
        try SystemCall.run(name()) {
            system_sendto(rawValue, bytes.baseAddress, bytes.count, address, length)
        }
    }

    /// A new socket, close-on-exec (`SOCK_NONBLOCK` in `type` makes it non-blocking).
    /// The corresponding C function is `socket`.
    public static func socket(domain: Int32, type: Int32, protocol proto: Int32 = 0,
                              name: @autoclosure () -> String = "socket") throws(SystemCallError) -> Descriptor {
        Descriptor(try SystemCall.blocking(name(), { system_socket(domain, type, proto) }))
    }

    /// Binds a socket to `address` (of `length` bytes). The corresponding C function is `bind`.
    public func bind(to address: UnsafePointer<sockaddr>, length: socklen_t,
                     name: @autoclosure () -> String = "bind") throws(SystemCallError) {
        _ = try SystemCall.blocking(name(), { system_bind(rawValue, address, length) })
    }

    /// Makes a bound socket listen. The corresponding C function is `listen`.
    public func listen(backlog: Int32, name: @autoclosure () -> String = "listen") throws(SystemCallError) {
        _ = try SystemCall.blocking(name(), { system_listen(rawValue, backlog) })
    }

    /// Sets an integer socket option (`IPPROTO_TCP`, `TCP_NODELAY`). The corresponding C
    /// function is `setsockopt`.
    public func setOption(level: Int32, _ option: Int32, to value: Int32,
                          name: @autoclosure () -> String = "setsockopt") throws(SystemCallError) {
        _ = try SystemCall.blocking(name(), { system_setsockopt(rawValue, level, option, value) })
    }

    /// Sets a time socket option (`SO_SNDTIMEO`, `SO_RCVTIMEO`): how long a blocking call
    /// waits before it fails with EAGAIN; zero waits for ever. The corresponding C function is
    /// `setsockopt`.
    public func setOption(level: Int32, _ option: Int32, to timeout: Duration,
                          name: @autoclosure () -> String = "setsockopt") throws(SystemCallError) {
        let (seconds, attoseconds) = timeout.components
        let time = timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, attoseconds) / 1_000_000_000_000))
        _ = try SystemCall.blocking(name(), { system_setsockopt(rawValue, level, option, time) })
    }

    /// A device control request with a pointer argument (`SIOCGIFFLAGS` and an `ifreq`).
    /// The corresponding C function is `ioctl`.
    public func control(_ request: UInt, _ argument: UnsafeMutableRawPointer,
                        name: @autoclosure () -> String = "ioctl") throws(SystemCallError) {
        _ = try SystemCall.blocking(name(), { system_ioctl(rawValue, request, argument) })
    }

    /// Connects a socket to `address` (of `length` bytes), waiting on a blocking socket.
    /// EINTR is not retried: an interrupted connect goes on in the kernel, and calling it again
    /// would fail (EALREADY), so it is reported like any other failure.
    /// The corresponding C function is `connect`.
    public func connect(to address: UnsafePointer<sockaddr>, length: socklen_t,
                        name: @autoclosure () -> String = "connect") throws(SystemCallError) {
        guard system_connect(rawValue, address, length) == 0 else {
            throw SystemCallError(call: name(), errno: SystemCall.currentErrno)
        }
    }

    /// The next connection waiting on a listening socket, non-blocking and close-on-exec; nil
    /// when no one is waiting. The corresponding C functions are `accept` and `fcntl`.
    public func accept(name: @autoclosure () -> String = "accept") throws(SystemCallError) -> Descriptor? {
        switch try SystemCall.run(name(), { system_accept(rawValue) }) {
        case let .done(fd): Descriptor(fd)
        case .wouldBlock: nil
        }
    }

    /// The user of the process at the other end of a Unix socket, as the kernel took it when
    /// the connection was made (`SO_PEERCRED`); nil where it is no Unix socket.
    public var peerUserID: UInt32? {
        // struct ucred (pid, uid, gid: three 32-bit fields), which glibc declares only with _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == 12 else { return nil }
        return credentials.uid
    }

    /// Waits until the descriptor is readable (or failed or hung up), or `timeout` passes;
    /// true when it is. The corresponding C function is `poll`.
    public func waitReadable(timeout: Duration) throws(SystemCallError) -> Bool {
        try Poll.wait(for: self, events: Int16(POLLIN), until: .now + timeout)
    }

    /// Waits until the descriptor can be written to, or `timeout` passes.
    public func waitWritable(timeout: Duration) throws(SystemCallError) -> Bool {
        try Poll.wait(for: self, events: Int16(POLLOUT), until: .now + timeout)
    }

    /// Whether there is something to read right now.
    public var isReadable: Bool { (try? Poll.wait(for: self, events: Int16(POLLIN), until: .now)) ?? false }

    /// How many descriptors this process has closed (through `close`, or `noteClosed` where a
    /// library closed one): an epoll set's registrations are kept while it stays the same (a
    /// closed descriptor leaves every epoll set, and its number may come back as another).
    public static var closeCount: UInt64 { closes.load(ordering: .acquiring) }

    /// Counts a descriptor closed by a C library (libbluetooth's `hci_close_dev`).
    public static func noteClosed() {
        closes.add(1, ordering: .releasing)
    }

    private static let closes = Atomic<UInt64>(0)

    /// Closes it. EINTR is not retried (on Linux the descriptor is gone either way), and a
    /// failure is not reported: nothing useful can follow a failed close.
    /// The corresponding C function is `close`.
    public func close() {
        system_close(rawValue)
    }
}
