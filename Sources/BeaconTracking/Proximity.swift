// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Proximity class, by the common convention: under 0.5 m immediate, up to 4 m near, else far.
public enum Proximity: String, Sendable, Hashable {
    case immediate, near, far, unknown

    /// - Parameter accuracy: metres; nil (or negative) is unknown.
    public init(accuracy: Double?) {
        guard let accuracy else {
            self = .unknown
            return
        }
        switch accuracy {
        case ..<0: self = .unknown
        case ..<0.5: self = .immediate
        case ...4: self = .near
        default: self = .far
        }
    }
}
