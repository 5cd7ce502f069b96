// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The file system calls the other targets make: what is at a path, removing and renaming it,
/// its permissions and group, the creation mask, and a descriptor's identity.
public enum FileSystem {
    /// What is at a path (its last link not followed).
    public enum EntryKind: Sendable, Equatable {
        case socket, regularFile, directory, other
    }

    /// What is at `path`, its last link not followed (lstat); nil where nothing is (or it
    /// cannot be looked at).
    public static func kind(atPath path: String) -> EntryKind? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return .socket
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Why the file at `path` cannot be opened for reading, in the system's words (a directory
    /// counts as unreadable); nil when it can be.
    public static func whyUnreadable(_ path: String) -> String? {
        if kind(atPath: path) == .directory { return SystemCallError.message(EISDIR) }
        // Without waiting: a FIFO's open would wait for a writer.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor < 0 else {
            close(descriptor)
            return nil
        }
        return SystemCallError.message(errno)
    }

    /// Removes the entry at `path` (unlink); one that is not there, or cannot be removed, is left.
    public static func removeEntry(atPath path: String) {
        _ = unlink(path)
    }

    /// Gives `path` the permission bits `mode` (chmod).
    public static func setPermissions(_ mode: UInt32, atPath path: String) throws(SystemCallError) {
        guard chmod(path, mode_t(mode)) == 0 else { throw SystemCallError(call: "chmod(\(path))", errno: errno) }
    }

    /// Writes `bytes` as the regular file `path`, new or in place of a regular file there,
    /// whole or not at all: into a new file beside it (created exclusively, never through a
    /// link), then renamed over it. What is there and is not a regular file (a device such as
    /// /dev/null, a FIFO, a symbolic link, a directory) is refused, never replaced nor written
    /// through. The new file's mode is `mode` less the process's umask (0666: the user's
    /// usual; 0600: its owner alone).
    /// - Throws: `SystemCallError`; `notRegularFile` for what is there and is not a regular file.
    public static func writeRegularFile(_ path: String, _ bytes: [UInt8], mode: UInt32 = 0o666) throws(SystemCallError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else { throw SystemCallError(call: "lstat(\(path))", errno: notRegularFile) }
        } else if errno != ENOENT {
            throw SystemCallError(call: "lstat(\(path))", errno: errno)
        }
        let temporary = path + ".\(getpid()).new"
        let file = try Descriptor(checking: open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode)),
                                  call: "open(\(temporary))")
        do {
            try file.writeAll(bytes, name: "write(\(temporary))")
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
        file.close()
        guard system_rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw SystemCallError(call: "rename(\(temporary), \(path))", errno: code)
        }
    }

    /// Renames `source` to `destination`, replacing what is there (rename).
    public static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        guard system_rename(source, destination) == 0 else {
            throw SystemCallError(call: "rename(\(source), \(destination))", errno: errno)
        }
    }

    /// Gives `path` to the group `group`, its owner unchanged (chown).
    public static func setGroup(_ group: UInt32, atPath path: String) throws(SystemCallError) {
        guard chown(path, uid_t.max, gid_t(group)) == 0 else { throw SystemCallError(call: "chown(\(path))", errno: errno) }
    }

    /// The id of the group named `name` (the group database); nil where there is none.
    public static func groupID(named name: String) -> UInt32? {
        getgrnam(name).map { UInt32($0.pointee.gr_gid) }
    }

    /// A directory of this process's own under the system's temporary directory (`TMPDIR`, else
    /// /tmp), made with an unpredictable name and mode 0700 (mkdtemp); nil where it cannot be.
    public static func makePrivateTemporaryDirectory(prefix: String) -> String? {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
    }

    /// Runs `body` holding an exclusive lock on the file at `path` (flock), made (mode 0600,
    /// no link followed) where missing: other processes doing the same wait their turn (one
    /// install at a time into a shared cache). The lock goes with the descriptor, so it is
    /// released however this process ends.
    /// - Throws: `SystemCallError` when the file cannot be opened or locked (`body` not run).
    public static func withExclusiveLock<T>(_ path: String, _ body: () -> T) throws(SystemCallError) -> T {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0o600)
        guard descriptor >= 0 else { throw SystemCallError(call: "open(\(path))", errno: errno) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SystemCallError(call: "flock(\(path))", errno: errno) }
        }
        return body()
    }

    /// /dev/null opened for writing (closed on exec): where output is to be thrown away; -1
    /// where it cannot be opened.
    public static func openDiscard() -> Int32 {
        open("/dev/null", O_WRONLY | O_CLOEXEC)
    }

    /// Whether `path` exists (access F_OK).
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Whether this process may execute `path` (access X_OK).
    public static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// Why the directory at `path` cannot be trusted with what this process keeps there (its
    /// records, its cache): nil when it is a directory owned by this process's user and
    /// writable by no one else. A symbolic link is followed only when root or this user made it;
    /// one root made vouches for its directory whoever owns it (systemd's `StateDirectory=`
    /// under `DynamicUser=` is root's link into /var/lib/private, to a directory of the unit's
    /// user, which root's `doctor` reads too), but only where the folder holding the link is
    /// root's and writable by no one else, sticky or not (root's link in /tmp vouches for
    /// nothing); one another user made is refused, whatever it points to. The folders above it
    /// (where a link sits, and where it leads) are walked as OpenSSH's safe_path walks them:
    /// each root's or this user's, and writable by no one else (but root's with the sticky bit,
    /// as /tmp). With `create`, a missing one is made first (mode
    /// 0700: mkdir fails rather than follow anything planted there meanwhile).
    public static func distrust(directory path: String, create: Bool = false) -> String? {
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = errno
            guard code == ENOENT, create else { return "cannot look at it: \(SystemCallError.message(code))" }
            if mkdir(path, 0o700) == 0 {
                // 0700 whatever the creation mask (another thread's umask, a user's 0177).
                _ = chmod(path, 0o700)
            } else if errno != EEXIST {
                return "cannot make it: \(SystemCallError.message(errno))"
            }
            guard lstat(path, &info) == 0 else { return "cannot look at it: \(SystemCallError.message(errno))" }
        }
        var rootsLink = false
        let wasLink = info.st_mode & S_IFMT == S_IFLNK
        if wasLink {
            let link = "a symbolic link (to \(linkTarget(path) ?? "?"))"
            guard info.st_uid == 0 || info.st_uid == getuid() else { return "it is \(link) that \(owner(info.st_uid)) made" }
            rootsLink = info.st_uid == 0
            guard stat(path, &info) == 0 else { return "it is \(link) to nothing that can be looked at" }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "it is not a directory" }
        guard info.st_uid == getuid() || rootsLink else {
            return "it belongs to \(owner(info.st_uid)), not to this user (uid \(getuid()))"
        }
        if info.st_uid != getuid() {
            // Vouched for by root's link: only as good as the folder the link sits in.
            let folder = (path.hasPrefix("/") ? path : (currentDirectory() ?? "/") + "/" + path)
                .split(separator: "/").dropLast().joined(separator: "/")
            var above = stat()
            guard stat("/" + folder, &above) == 0, above.st_uid == 0, above.st_mode & 0o022 == 0 else {
                return "it belongs to \(owner(info.st_uid)), not to this user (uid \(getuid())), and root's link to it sits in "
                    + "/\(folder), which root alone cannot be said to control (a link vouches for another user's directory "
                    + "only in a folder root owns and no one else can write)"
            }
        }
        guard info.st_mode & 0o022 == 0 else {
            return "others can write in it (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        // The folders above it, where the link sits and where it leads, as OpenSSH's safe_path
        // walks them: another user could rename what they can write in.
        if let why = distrustAncestors(of: path) { return why }
        if wasLink, let resolved = realPath(path), let why = distrustAncestors(of: resolved) {
            return why
        }
        return nil
    }

    /// Why a folder above `path` cannot be trusted: owned by another user than root or this
    /// one, or writable by group or others without the sticky bit (which keeps others from
    /// renaming what is not theirs, as in /tmp); nil when each can be.
    static func distrustAncestors(of path: String) -> String? {
        let absolute = path.hasPrefix("/") ? path : (currentDirectory() ?? "/") + "/" + path
        var parts = absolute.split(separator: "/").map(String.init)
        while !parts.isEmpty {
            parts.removeLast()
            let folder = "/" + parts.joined(separator: "/")
            var info = stat()
            guard stat(folder, &info) == 0 else { return "cannot look at \(folder): \(SystemCallError.message(errno))" }
            guard info.st_uid == 0 || info.st_uid == getuid() else {
                return "\(folder), a folder above it, belongs to \(owner(info.st_uid))"
            }
            guard info.st_mode & 0o022 == 0 || (info.st_mode & S_ISVTX != 0 && info.st_uid == 0) else {
                return "others can write in \(folder), a folder above it (mode \(String(info.st_mode & 0o7777, radix: 8)))"
            }
        }
        return nil
    }

    /// `path` with every link resolved (realpath); nil where it cannot be.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A user's name in the password database; nil where it has none.
    private static func passwordName(_ uid: uid_t) -> String? {
        getpwuid(uid).map { String(cString: $0.pointee.pw_name) }
    }

    /// A user's name from the password database, or its number.
    private static func owner(_ uid: uid_t) -> String {
        passwordName(uid) ?? "uid \(uid)"
    }

    /// A user's name and number for messages: `nobody (uid 65534)`.
    public static func userName(_ uid: UInt32) -> String {
        passwordName(uid_t(uid)).map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
    }

    /// The home directory of this process's user in the password database (not `$HOME`).
    public static var passwordHome: String? {
        guard let entry = getpwuid(getuid()), let home = entry.pointee.pw_dir else { return nil }
        let path = String(cString: home)
        return path.isEmpty ? nil : path
    }

    /// Makes the directory `path` (mkdir); one that exists, or cannot be made, is left (what
    /// uses it finds out).
    public static func makeDirectory(_ path: String, permissions: UInt32 = 0o755) {
        _ = mkdir(path, mode_t(permissions))
    }

    /// Runs `body` with the creation mask `mask` (umask), then puts the one before back: what
    /// `body` creates has none of `mask`'s permission bits from its first moment.
    public static func withCreationMask<T, E: Error>(_ mask: UInt32, _ body: () throws(E) -> T) throws(E) -> T {
        let before = umask(mode_t(mask))
        defer { umask(before) }
        return try body()
    }

    /// What `descriptor` is open on, as its device and inode numbers (fstat); nil where it is
    /// not open.
    public static func identity(of descriptor: Int32) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// The permission bits (and the type) of what `descriptor` is open on, and its owner
    /// (fstat); nil where it is not open.
    public static func mode(of descriptor: Int32) -> (mode: UInt32, owner: UInt32, regularFile: Bool)? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return (UInt32(info.st_mode & 0o7777), UInt32(info.st_uid), info.st_mode & S_IFMT == S_IFREG)
    }

    /// The errno `readSmallFile` throws for what is not a regular file (a FIFO, a device, a
    /// socket, a directory), refused before a byte is read: a FIFO's read waits for a writer
    /// that may never come, a device's may never end.
    public static let notRegularFile = ENOTSUP

    /// Why a file could not be opened for reading (`openForReading`), for a message: what it is
    /// where it is not a file that may be read, else the system's words.
    public static func whyNotOpened(_ error: SystemCallError, path: String, pipes: Bool = false) -> String {
        guard error.errno == notRegularFile else { return SystemCallError.message(error.errno) }
        let what = switch kind(atPath: path) {
        case .directory: "a directory"
        case .socket: "a socket"
        default: pipes ? "a device" : "a FIFO, a pipe or a device"
        }
        return "it is \(what), not a regular file\(pipes ? " or a pipe" : ""): refused before reading"
    }

    /// A small file read whole through one descriptor, with the permission bits that
    /// descriptor's file had when it was read (so that what was judged is what was read).
    /// What is not a regular file is refused before it is opened (opening a device can do
    /// something) and again on the descriptor, opened non-blocking (a FIFO swapped in between
    /// answers at once).
    /// - Throws: `SystemCallError` when it cannot be opened or read, `notRegularFile` for what is
    ///   not a regular file, and `EFBIG` when it holds more than `most` bytes.
    public static func readSmallFile(_ path: String, most: Int) throws(SystemCallError)
        -> (bytes: [UInt8], mode: UInt32, owner: UInt32) {
        let descriptor = try openForReading(path)
        defer { close(descriptor) }
        guard let (mode, owner, _) = mode(of: descriptor) else { throw SystemCallError(call: "fstat(\(path))", errno: errno) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= most {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "read(\(path))", errno: errno)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        guard bytes.count <= most else { throw SystemCallError(call: "read(\(path))", errno: EFBIG) }
        return (bytes, mode, owner)
    }

    /// Opens `path` for reading (a blocking descriptor, closed on exec) only when it is a
    /// regular file, or, with `pipes`, a pipe or FIFO (`--config <(...)`, `/dev/stdin`: what the
    /// person running the command names on its command line). What else is there (a device, a
    /// socket, a directory) is refused at once, and a regular file is opened without waiting and
    /// checked again on the descriptor (`fstat`) before a byte is read: a FIFO swapped in
    /// between waits for no writer.
    /// - Throws: `SystemCallError`; `notRegularFile` for what is there and may not be read.
    public static func openForReading(_ path: String, pipes: Bool = false) throws(SystemCallError) -> Int32 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError(call: "stat(\(path))", errno: errno) }
        let kind = info.st_mode & S_IFMT
        let pipe = kind == S_IFIFO && pipes
        guard kind == S_IFREG || pipe else { throw SystemCallError(call: "open(\(path))", errno: notRegularFile) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (pipe ? 0 : O_NONBLOCK))
        guard descriptor >= 0 else { throw SystemCallError(call: "open(\(path))", errno: errno) }
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == (pipe ? S_IFIFO : S_IFREG) else {
            close(descriptor)
            throw SystemCallError(call: "open(\(path))", errno: notRegularFile)
        }
        if !pipe { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) }
        return descriptor
    }

    /// `mode`'s permission bits as `chmod` takes them: 0644.
    public static func octalMode(_ mode: UInt32) -> String {
        let octal = String(mode & 0o7777, radix: 8)
        return "0" + String(repeating: "0", count: max(0, 3 - octal.count)) + octal
    }

    /// Where the symbolic link `path` points (readlink); nil where it is none.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The C rename, under a name the method named after it can call.
private func system_rename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
