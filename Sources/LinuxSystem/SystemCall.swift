// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system call that failed: its name (with what it was called on) and errno.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call and its object: `read(hci0)`, `connect(tcp:127.0.0.1:6402)`.
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// `read(hci0): Connection reset by peer (errno 104)`.
    public var description: String { "\(call): \(Self.message(errno)) (errno \(errno))" }

    /// strerror's text for `code`.
    public static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Whether the other end went away (a closed pipe or socket).
    public var isDisconnect: Bool { errno == EPIPE || errno == ECONNRESET }
}

/// The one helper every system call of this package goes through (as swift-system's and
/// swift-nio's wrappers do): EINTR is retried, "would block" is a value, any other failure is
/// a `SystemCallError` naming the call.
public enum SystemCall {
    /// What a call that may not block returned.
    public enum Outcome<Value> {
        case done(Value)
        /// EAGAIN / EWOULDBLOCK: nothing to read, no room to write, no one waiting.
        case wouldBlock
    }

    /// Runs `body` (a C call returning -1 and setting errno on failure), again while it fails
    /// with EINTR.
    /// - Parameter name: the call's name for the error, made only when it fails.
    /// - Throws: `SystemCallError` for any failure other than EINTR and "would block".
    @inlinable
    public static func run<Result: BinaryInteger>(_ name: @autoclosure () -> String,
                                                  _ body: () -> Result) throws(SystemCallError) -> Outcome<Result> {
        while true {
            let result = body()
            if result >= 0 { return .done(result) }
            let code = currentErrno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemCallError(call: name(), errno: code)
        }
    }

    /// `run` for calls that cannot report "would block" (blocking descriptors, control calls):
    /// EAGAIN is then an error like any other.
    @inlinable
    public static func blocking<Result: BinaryInteger>(_ name: @autoclosure () -> String,
                                                       _ body: () -> Result) throws(SystemCallError) -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = currentErrno
            if code == EINTR { continue }
            throw SystemCallError(call: name(), errno: code)
        }
    }

    /// The calling thread's errno.
    @inlinable
    public static var currentErrno: Int32 { errno }
}
