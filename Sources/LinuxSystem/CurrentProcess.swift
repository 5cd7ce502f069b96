// SPDX-License-Identifier: GPL-2.0-or-later

import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process: its id, its user, its executable, its environment, the machine it runs on,
/// and running another program in its place.
public enum CurrentProcess {
    /// The process id (getpid).
    public static var id: Int32 { getpid() }

    /// The version this build says: "0.0.0-dev", or the release's, which scripts/release-binary
    /// writes into the linked binary (no source file is changed for it).
    public static var buildVersion: String { String(cString: clinux_build_version()) }

    /// The real user id (getuid).
    public static var userID: UInt32 { UInt32(getuid()) }

    /// Whether the effective user is root (geteuid).
    public static var isRoot: Bool { geteuid() == 0 }

    /// The user whose rights this process has (geteuid): whom the programs it starts run as.
    public static var effectiveUserID: UInt32 { UInt32(geteuid()) }

    /// The path of this program's executable (/proc/self/exe); nil where it cannot be read.
    public static var executablePath: String? { FileSystem.linkTarget("/proc/self/exe") }

    /// The environment variable `name` (getenv); nil where it is not set.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Sets the environment variable `name` to `value` (setenv), for this process and what it runs.
    public static func setEnvironment(_ name: String, to value: String) {
        _ = setenv(name, value, 1)
    }

    /// Whether `descriptor` (1: standard output) is a terminal (isatty).
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// The processors online (sysconf).
    public static var processorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// The memory page size in bytes (sysconf).
    public static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    /// The clock ticks a second /proc's times count in (sysconf's `_SC_CLK_TCK`).
    public static var clockTicksPerSecond: Int { Int(sysconf(Int32(_SC_CLK_TCK))) }

    /// The most descriptors it may have open (getrlimit's soft `RLIMIT_NOFILE`); nil where
    /// it cannot be read.
    public static var descriptorLimit: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// Runs `arguments` (the program found on the PATH) in this process's place (execvp).
    /// - Returns: only when that fails: why.
    public static func replace(with arguments: [String]) -> SystemCallError {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execvp(arguments[0], &argv)
        let code = errno
        argv.forEach { free($0) }
        return SystemCallError(call: "execvp(\(arguments[0]))", errno: code)
    }
}
