// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// Why a transport failed.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The other end closed the connection (a virtual controller stopped, a cable pulled).
    case closed(transport: String)
    /// A system call failed: its name and errno.
    case system(call: String, errno: Int32)
    /// The byte stream carried something that is not H4 framing (or a management packet
    /// that does not parse).
    case framing(CodecError)

    public init(_ error: SystemCallError) {
        self = .system(call: error.call, errno: error.errno)
    }

    public var description: String {
        switch self {
        case let .closed(transport): "\(transport) closed the connection"
        case let .system(call, code): SystemCallError(call: call, errno: code).description
        case let .framing(error): "lost H4 framing: \(error)"
        }
    }
}
