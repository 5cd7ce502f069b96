// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `--device virtual`: a private rootcanal (Android's virtual controller), pinned, installed
/// from PyPI into a cache on first use, running in a private network namespace so its ports
/// are reachable from nowhere else, and bound to die with this program (parent-death signal).
package enum VirtualController {
    /// 1.11 and later need glibc 2.38 and do not start on Debian 12.
    public static let rootcanalVersion = "1.10.0"
    public static let hciPort: UInt16 = 6402
    static let insideMarker = "BEACON_EMIT_PRIVATE_NAMESPACE"
    /// Environment variable naming a rootcanal binary to use instead of the cached install.
    public static let binaryVariable = "BEACON_EMIT_ROOTCANAL"

    /// Whether this process already runs inside the private namespace.
    public static var isInsidePrivateNamespace: Bool { CurrentProcess.environment(insideMarker) == "1" }

    /// Makes sure rootcanal is installed, then re-executes this program inside a new network
    /// namespace (through `unshare`). Returns only when already inside.
    /// - Throws: `HostError.virtualController` saying what is missing.
    public static func enterPrivateNamespace(arguments: [String], progress: (String) -> Void) throws(HostError) {
        if isInsidePrivateNamespace { return }
        let binary = try rootcanalBinary(progress: progress)
        CurrentProcess.setEnvironment(binaryVariable, to: binary)
        CurrentProcess.setEnvironment(insideMarker, to: "1")
        // No --fork: unshare execs this program in place, so signals reach it directly.
        var command = ["unshare", "--net"]
        if CurrentProcess.userID != 0 { command.append("--map-root-user") }
        command += ["--", HostError.executablePath] + arguments.dropFirst()
        let code = CurrentProcess.replace(with: command).errno
        throw .virtualController("cannot create a private network namespace with unshare (util-linux): "
                                 + "\(SystemCallError.message(code)): a controller run apart and reached over TCP "
                                 + "does without it")
    }

    /// The rootcanal binary: `$BEACON_EMIT_ROOTCANAL`, or the cached install (made on first use).
    static func rootcanalBinary(progress: (String) -> Void) throws(HostError) -> String {
        if let given = CurrentProcess.environment(binaryVariable), !given.isEmpty {
            guard FileSystem.isExecutable(given) else { throw .virtualController("\(binaryVariable)=\(given) is not executable") }
            return given
        }
        let venv = "\(try cacheDirectory())/rootcanal-\(rootcanalVersion)"
        let python = "\(venv)/bin/python"
        if let installed = try? locate(python: python) { return installed }
        // One install at a time: processes started together on a new machine (a test suite's)
        // wait for the first one's, instead of finding its venv half made.
        let installed: Result<String, HostError>
        do {
            installed = try FileSystem.withExclusiveLock(venv + ".lock") {
                Result { () throws(HostError) in try install(venv: venv, progress: progress) }
            }
        } catch {
            throw .virtualController("cannot lock the virtual controller's install (\(venv).lock): "
                                     + SystemCallError.message(error.errno))
        }
        return try installed.get()
    }

    /// Installs rootcanal into the venv at `venv`, unless it is there already (another process
    /// installed it while this one waited): its binary.
    private static func install(venv: String, progress: (String) -> Void) throws(HostError) -> String {
        let python = "\(venv)/bin/python"
        if let installed = try? locate(python: python) { return installed }
        progress("installing rootcanal \(rootcanalVersion) (the virtual controller) from PyPI into \(venv); "
                 + "first use only, about 125 MB")
        guard try run(["python3", "-m", "venv", venv]).status == 0 else {
            throw .virtualController("`python3 -m venv` failed: install python3 and python3-venv")
        }
        guard try run(["\(venv)/bin/pip", "install", "--quiet", "rootcanal==\(rootcanalVersion)"]).status == 0 else {
            throw .virtualController("`pip install rootcanal==\(rootcanalVersion)` failed: check access to PyPI")
        }
        return try locate(python: python)
    }

    /// This user's cache directory for beacon-emit (`$XDG_CACHE_HOME/beacon-emit`, else
    /// `~/.cache/beacon-emit`, the home directory from `$HOME` or else the password database),
    /// made where missing; refused unless it and the cache above it are this user's alone:
    /// what is in it runs (the virtual controller's Python).
    static func cacheDirectory() throws(HostError) -> String {
        func variable(_ name: String) -> String? { CurrentProcess.environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        let home = variable("HOME") ?? FileSystem.passwordHome
        guard let root = variable("XDG_CACHE_HOME") ?? home.map({ $0 + "/.cache" }) else {
            throw .virtualController("no cache directory for the virtual controller: HOME is not set and this user has no "
                                     + "home directory: set XDG_CACHE_HOME to a directory of this user's")
        }
        for directory in [root, root + "/beacon-emit"] {
            if let why = FileSystem.distrust(directory: directory, create: true) {
                throw .virtualController("the cache directory \(directory) is not to be trusted with the virtual controller "
                                         + "(what is in it runs): \(why): set XDG_CACHE_HOME to a directory of this user's "
                                         + "that no one else can write")
            }
        }
        return root + "/beacon-emit"
    }

    /// Runs a helper (python3, pip) to completion: its exit status and standard output.
    private static func run(_ arguments: [String]) throws(HostError) -> (status: Int32, output: String) {
        do {
            let (termination, output) = try ChildProcess.run(arguments)
            return (termination.status, output)
        } catch {
            throw .virtualController("cannot start \(arguments[0]): \(SystemCallError.message(error.errno))")
        }
    }

    private static func locate(python: String) throws(HostError) -> String {
        let (status, output) = try run([python, "-c",
            "import rootcanal.binaries as b; print(b.get_package_binary_resource_path('rootcanal'))"])
        let path = output.split(separator: "\n").last.map(String.init) ?? ""
        guard status == 0, FileSystem.isExecutable(path) else {
            throw .virtualController("rootcanal \(rootcanalVersion) is installed but its binary was not found")
        }
        return path
    }

    /// Inside the namespace: brings loopback up and starts rootcanal, waiting until its HCI
    /// port accepts connections.
    /// - Throws: `HostError.virtualController` if it does not come up within 5 s.
    public static func launch() throws(HostError) -> RunningVirtualController {
        try bringLoopbackUp()
        let binary = try rootcanalBinary(progress: { _ in })
        // setpriv --pdeathsig: rootcanal dies with this process, however this process ends.
        let child: ChildProcess
        do {
            child = try ChildProcess(arguments: ["setpriv", "--pdeathsig", "KILL", "--", binary, "-test_port=6401",
                                                 "-hci_port=\(hciPort)", "-link_port=6403", "-link_ble_port=6404"],
                                     output: .discard, errors: .discard)
        } catch {
            throw .virtualController("cannot start rootcanal: \(error)")
        }
        let running = RunningVirtualController(child: child)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if isListening(port: hciPort) { return running }
            if let ended = child.termination {
                throw .virtualController("rootcanal exited at start (\(ended)); "
                                         + "rootcanal \(rootcanalVersion) needs glibc 2.36 or later")
            }
            _ = Poll.pause(.milliseconds(10), interrupt: nil)
        }
        running.stop()
        throw .virtualController("rootcanal did not accept connections within 5 s")
    }

    /// Whether a TCP socket listens on `port` (read from /proc/net/tcp, without connecting:
    /// each connection to rootcanal's HCI port would add a device to the radio).
    static func isListening(port: UInt16) -> Bool {
        guard let file = fopen("/proc/net/tcp", "r") else { return false }
        defer { fclose(file) }
        let wanted = ":" + String(port, radix: 16, uppercase: true).leftPadded(to: 4) + " 00000000:0000 0A"
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.contains(wanted) { return true }
        }
        return false
    }

    private static func bringLoopbackUp() throws(HostError) {
        let socket: Descriptor
        do {
            socket = try Descriptor.socket(domain: AF_INET, type: Int32(SOCK_DGRAM.rawValue))
        } catch {
            throw .virtualController("socket: \(SystemCallError.message(error.errno))")
        }
        defer { socket.close() }
        var request = ifreq()
        withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { name in
            name.copyBytes(from: Array("lo".utf8))
        }
        do {
            try withUnsafeMutableBytes(of: &request) { (raw) throws(SystemCallError) in
                try socket.control(UInt(SIOCGIFFLAGS), raw.baseAddress!)
            }
        } catch {
            throw .virtualController("reading loopback flags: \(SystemCallError.message(error.errno))")
        }
        request.ifr_ifru.ifru_flags |= Int16(IFF_UP)
        do {
            try withUnsafeMutableBytes(of: &request) { (raw) throws(SystemCallError) in
                try socket.control(UInt(SIOCSIFFLAGS), raw.baseAddress!)
            }
        } catch {
            throw .virtualController("bringing loopback up in the private namespace: \(SystemCallError.message(error.errno))")
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
