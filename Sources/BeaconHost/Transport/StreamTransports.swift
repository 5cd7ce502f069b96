// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opens H4 byte-stream transports: TCP connections and serial ports.
package enum StreamTransports {
    /// Connects to `host:port` with Nagle off, and re-arms TCP_QUICKACK after every read so
    /// delayed ACKs do not add tens of milliseconds to each command round trip.
    /// - Throws: `TransportError.system` naming the failing call.
    public static func connectTCP(host: String, port: UInt16) throws(TransportError) -> HCIDescriptorTransport {
        let name = "tcp:\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .system(call: "getaddrinfo(\(host))", errno: status == EAI_SYSTEM ? errno : ENOENT)
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
            // Latency over throughput: each command goes out at once, each answer is acknowledged at once.
            try? socket.setOption(level: Int32(IPPROTO_TCP), TCP_NODELAY, to: 1)
            try? socket.setOption(level: Int32(IPPROTO_TCP), TCP_QUICKACK, to: 1)
            return HCIDescriptorTransport(name: name, descriptor: socket.rawValue, afterRead: { fd in
                try? Descriptor(fd).setOption(level: Int32(IPPROTO_TCP), TCP_QUICKACK, to: 1)
            })
        }
        throw .system(call: "connect(\(name))", errno: lastError)
    }

    /// Opens a serial port raw, 8N1, with RTS/CTS flow control, at `baud`.
    /// - Throws: `TransportError.system` naming the failing call.
    public static func openSerial(path: String, baud: Int) throws(TransportError) -> HCIDescriptorTransport {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(call: "open(\(path))", errno: errno) }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let code = errno
            Descriptor(fd).close()
            throw .system(call: "tcgetattr(\(path))", errno: code)
        }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        let speed = speedConstant(baud)
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            let code = errno
            Descriptor(fd).close()
            throw .system(call: "tcsetattr(\(path))", errno: code)
        }
        tcflush(fd, TCIOFLUSH)
        return HCIDescriptorTransport(name: "serial:\(path)", descriptor: fd)
    }

    private static func speedConstant(_ baud: Int) -> speed_t {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 2_500_000: speed_t(B2500000)
        case 3_000_000: speed_t(B3000000)
        case 3_500_000: speed_t(B3500000)
        case 4_000_000: speed_t(B4000000)
        default: speed_t(B115200)
        }
    }
}
