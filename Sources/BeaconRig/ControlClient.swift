// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import LinuxSystem

/// The client side: one request line, one reply line.
public enum ControlClient {
    /// Sends `request` (a JSON object, one line) and returns the reply line.
    /// - Throws: `ControlError` when the socket cannot be reached or does not answer within `timeout`.
    public static func send(_ request: String, to path: String,
                            timeout: Duration = ControlHandler.holdLimit + .seconds(5)) throws(ControlError) -> String {
        let socket = Descriptor(try ControlServer.connect(path))
        defer { socket.close() }
        do {
            try socket.sendAll(JSONLines.frame(request))
        } catch {
            throw ControlServer.failure(error, path)
        }
        var reply = JSONLines()
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw ControlError(message: "\(path): no reply within \(timeout)") }
            let read: SystemCall.Outcome<Int>
            do {
                guard try socket.waitReadable(timeout: remaining) else { continue }
                read = try socket.read(into: &chunk)
            } catch {
                throw ControlServer.failure(error, path)
            }
            guard case let .done(count) = read else { continue }
            if count == 0 { throw ControlError(message: "\(path): closed without a reply") }
            if let line = reply.append(chunk[..<count]).first { return line }
        }
    }
}
