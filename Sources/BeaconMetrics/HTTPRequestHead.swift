// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An HTTP request's head, once whole (its request line and headers, up to the blank line).
package enum HTTPRequestHead: Equatable {
    /// The method and the path (without a query).
    case request(method: String, path: String)
    /// No HTTP request line.
    case malformed

    /// Nil while the head is not whole yet.
    package init?(_ bytes: [UInt8]) {
        guard let end = Self.endOfHead(bytes) else { return nil }
        let line = String(decoding: bytes[..<end].prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), !parts[0].isEmpty, parts[1].hasPrefix("/") else {
            self = .malformed
            return
        }
        self = .request(method: String(parts[0]), path: String(parts[1].prefix { $0 != "?" }))
    }

    /// Where the blank line ending the head starts (CRLF CRLF, or LF LF from a lax client).
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 0x0A && bytes[index + 1] == 0x0A { return index }
            if index + 3 < bytes.count && bytes[index] == 0x0D && bytes[index + 1] == 0x0A
                && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
