// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The C calls `Descriptor` and `Poll` wrap, under names of their own so that the methods named
// after them can call them (the same on Glibc and Musl). Nothing outside this target calls
// socket, bind, listen, connect, setsockopt, ioctl, read, write, send, accept, poll or close
// directly.

@usableFromInline func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

@usableFromInline func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

func system_send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    send(fd, buffer, count, Int32(MSG_NOSIGNAL))
}

func system_sendto(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ address: UnsafePointer<sockaddr>,
                   _ length: socklen_t) -> Int {
    sendto(fd, buffer, count, Int32(MSG_NOSIGNAL), address, length)
}

/// `accept`, the new descriptor made non-blocking and close-on-exec.
func system_accept(_ fd: Int32) -> Int32 {
    let accepted = accept(fd, nil, nil)
    guard accepted >= 0 else { return accepted }
    _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
    _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
    return accepted
}

func system_poll(_ fds: inout [pollfd], _ milliseconds: Int32) -> Int32 {
    poll(&fds, nfds_t(fds.count), milliseconds)
}

func system_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

func system_socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32 {
    socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), proto)
}

func system_bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}

func system_listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}

func system_setsockopt(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32) -> Int32 {
    var value = value
    return setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
}

func system_setsockopt(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: timeval) -> Int32 {
    var value = value
    return setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<timeval>.size))
}

func system_ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
    ioctl(fd, request, argument)
}

func system_close(_ fd: Int32) {
    _ = close(fd)
    Descriptor.noteClosed()
}
