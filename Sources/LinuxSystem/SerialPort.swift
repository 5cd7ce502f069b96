// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Serial ports, opened raw.
public enum SerialPort {
    /// Opens `path` raw, 8N1, with RTS/CTS flow control, at `baud` (115200 where the speed has
    /// no constant), its buffers flushed.
    /// - Throws: `SystemCallError` naming the failing call; nothing stays open.
    public static func openRaw(path: String, baud: Int) throws(SystemCallError) -> Descriptor {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError(call: "open(\(path))", errno: errno) }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let code = errno
            Descriptor(fd).close()
            throw SystemCallError(call: "tcgetattr(\(path))", errno: code)
        }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        let speed = speedConstant(baud)
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            let code = errno
            Descriptor(fd).close()
            throw SystemCallError(call: "tcsetattr(\(path))", errno: code)
        }
        tcflush(fd, TCIOFLUSH)
        return Descriptor(fd)
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
