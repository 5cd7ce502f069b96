// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// Opens H4 byte-stream transports: TCP connections and serial ports.
package enum StreamTransports {
    /// Connects to `host:port` with Nagle off, and re-arms TCP_QUICKACK after every read so
    /// delayed ACKs do not add tens of milliseconds to each command round trip.
    /// - Throws: `TransportError.system` naming the failing call.
    public static func connectTCP(host: String, port: UInt16) throws(TransportError) -> HCIDescriptorTransport {
        let name = "tcp:\(host):\(port)"
        let socket: Descriptor
        do {
            socket = try TCPConnection.connect(host: host, port: port, name: name)
        } catch {
            throw .system(call: error.call, errno: error.errno)
        }
        return HCIDescriptorTransport(name: name, descriptor: socket.rawValue, afterRead: { fd in
            TCPConnection.rearmQuickAcknowledgements(Descriptor(fd))
        })
    }

    /// Opens a serial port raw, 8N1, with RTS/CTS flow control, at `baud`.
    /// - Throws: `TransportError.system` naming the failing call.
    public static func openSerial(path: String, baud: Int) throws(TransportError) -> HCIDescriptorTransport {
        do {
            return HCIDescriptorTransport(name: "serial:\(path)", descriptor: try SerialPort.openRaw(path: path, baud: baud).rawValue)
        } catch {
            throw .system(call: error.call, errno: error.errno)
        }
    }
}
