// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// errno helpers.
enum SystemError {
    /// strerror's text for `code`.
    static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The current errno.
    static var current: Int32 { errno }
}
