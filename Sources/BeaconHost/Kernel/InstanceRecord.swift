// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// Which advertising instances of an adapter a beacon-emit process added: the management API
/// cannot say who added an instance, nor read back what it carries, so only the instances
/// recorded here are ever removed by a later run or by `beacon-emit stop`, and only while
/// they still exist and their owner is no longer running.
///
/// One file per process (`hci0-PID.instances`) names the kernel's boot (a record from before
/// a reboot is ignored: the numbers may since belong to someone else), the owner (its PID and
/// start time, so a reused PID is not taken for it), whether it was left on by request
/// (`--keep`), and the instances with their data.
///
/// The records live where a crash does not take them: under systemd in the unit's state
/// directory (`$STATE_DIRECTORY`, kept when systemd removes the runtime directory at a stop or
/// an automatic restart, which is exactly when a dead run's instances must still be found);
/// else `$RUNTIME_DIRECTORY`, `$XDG_RUNTIME_DIR/beacon-emit`, `/run/beacon-emit` for root,
/// `/tmp/beacon-emit-UID` for others.
package struct InstanceRecord: Equatable, Sendable {
    /// The process that added the instances.
    public struct Owner: Equatable, Sendable {
        public var pid: Int32
        /// Its start time in clock ticks since boot (`/proc/PID/stat`), to tell a reused PID.
        public var startTime: UInt64

        public init(pid: Int32, startTime: UInt64) {
            self.pid = pid
            self.startTime = startTime
        }

        /// This process.
        public static var current: Owner {
            Owner(pid: CurrentProcess.id, startTime: startTime(of: CurrentProcess.id) ?? 0)
        }

        /// Whether this owner still runs (the same PID started at the same time).
        public var isRunning: Bool {
            guard let now = Self.startTime(of: pid) else { return false }
            return now == startTime
        }

        static func startTime(of pid: Int32) -> UInt64? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return nil }
            // Fields after the command name start with the state (field 3); start time is field 22.
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 19 ? UInt64(fields[19]) : nil
        }
    }

    public var adapter: String
    public var instances: [UInt8]
    public var boot: String
    /// nil in a record from before owners were recorded: treated as not running.
    public var owner: Owner?
    /// Left on by request (`--keep`): only `beacon-emit stop` removes it, not the next run.
    public var kept: Bool
    /// What each instance carried when recorded (for the user's eyes: the kernel cannot say
    /// what an instance carries now).
    public var data: [UInt8: [UInt8]]

    public init(adapter: String, instances: [UInt8], boot: String = InstanceRecord.currentBoot,
                owner: Owner? = .current, kept: Bool = false, data: [UInt8: [UInt8]] = [:]) {
        self.adapter = adapter
        self.instances = instances
        self.boot = boot
        self.owner = owner
        self.kept = kept
        self.data = data
    }

    /// The kernel's boot identifier (`/proc/sys/kernel/random/boot_id`), or "" where unreadable.
    public static var currentBoot: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The directory the records live in.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for key in ["STATE_DIRECTORY", "RUNTIME_DIRECTORY"] {
            if let systemd = environment[key], !systemd.isEmpty {
                return String(systemd.split(separator: ":").first ?? Substring(systemd))
            }
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/beacon-emit" }
        return CurrentProcess.userID == 0 ? "/run/beacon-emit" : "/tmp/beacon-emit-\(CurrentProcess.userID)"
    }

    /// The file of this record: one per adapter and owner.
    public func path(in directory: String) -> String {
        "\(directory)/\(adapter)\(owner.map { "-\($0.pid)" } ?? "").instances"
    }

    /// The text of a record: `boot ID`, `owner PID START`, `kept yes` where kept, then
    /// `instance N [HEX]` per line.
    public var text: String {
        var lines = ["boot \(boot)"]
        if let owner { lines.append("owner \(owner.pid) \(owner.startTime)") }
        if kept { lines.append("kept yes") }
        for instance in instances {
            let hex = data[instance].map { " " + $0.map { String(format: "%02X", $0) }.joined() } ?? ""
            lines.append("instance \(instance)\(hex)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a record's text; nil when it is not one.
    public init?(adapter: String, text: String) {
        var boot: String? = nil
        var owner: Owner? = nil
        var kept = false
        var instances: [UInt8] = []
        var data: [UInt8: [UInt8]] = [:]
        // Any line end: "\r\n" is one Character, which a split at "\n" does not cut (a record
        // edited elsewhere, or carriage returns, kept one line whole: found by fuzzing).
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count >= 2 else { return nil }
            switch parts[0] {
            case "boot" where parts.count == 2: boot = parts[1]
            case "owner" where parts.count == 3:
                guard let pid = Int32(parts[1]), let start = UInt64(parts[2]) else { return nil }
                owner = Owner(pid: pid, startTime: start)
            case "kept" where parts.count == 2: kept = parts[1] == "yes"
            case "instance" where parts.count <= 3:
                guard let instance = UInt8(parts[1]), instance > 0 else { return nil }
                instances.append(instance)
                if parts.count == 3 {
                    let hex = Array(parts[2].utf8)
                    guard hex.count % 2 == 0 else { return nil }
                    var bytes: [UInt8] = []
                    for at in stride(from: 0, to: hex.count, by: 2) {
                        guard let byte = UInt8(String(decoding: hex[at..<at + 2], as: UTF8.self), radix: 16) else { return nil }
                        bytes.append(byte)
                    }
                    data[instance] = bytes
                }
            default: return nil
            }
        }
        guard let boot else { return nil }
        self.init(adapter: adapter, instances: instances, boot: boot, owner: owner, kept: kept, data: data)
    }

    /// A record directory that cannot be trusted: what is wrong, and what to do.
    public struct UntrustedDirectory: Error, CustomStringConvertible {
        public var directory: String
        public var why: String
        public var description: String {
            "the record directory \(directory) is not to be trusted: \(why); records are kept only in a directory of "
                + "this user's that no one else can write: remove it, or set XDG_RUNTIME_DIR (a login session sets it)"
        }
    }

    /// Why `directory` cannot be trusted with records (another user's, writable by others, a
    /// symbolic link); nil when it is fit, or missing (nothing recorded there yet).
    public static func distrust(_ directory: String) -> UntrustedDirectory? {
        guard FileSystem.kind(atPath: directory) != nil else { return nil }
        return FileSystem.distrust(directory: directory).map { UntrustedDirectory(directory: directory, why: $0) }
    }

    /// Writes the record (replacing this owner's earlier one), creating the directory (mode 0700).
    /// - Throws: `UntrustedDirectory` where the directory is not this user's alone, or the file
    ///   system's error; the caller reports it (advertising works without it).
    public func save(in directory: String = InstanceRecord.directory()) throws {
        if let why = FileSystem.distrust(directory: directory, create: true) {
            throw UntrustedDirectory(directory: directory, why: why)
        }
        try text.write(toFile: path(in: directory), atomically: true, encoding: .utf8)
    }

    /// This boot's records for `adapter` (nil: every adapter), each with its file; none from a
    /// directory that cannot be trusted (`distrust`): another user could have planted them.
    public static func all(adapter: String? = nil, in directory: String = InstanceRecord.directory())
        -> [(record: InstanceRecord, path: String)] {
        guard distrust(directory) == nil, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var found: [(InstanceRecord, String)] = []
        for name in names.sorted() where name.hasSuffix(".instances") {
            let stem = name.dropLast(".instances".count)
            let recordAdapter = String(stem.split(separator: "-", maxSplits: 1).first ?? stem)
            guard adapter == nil || recordAdapter == adapter else { continue }
            let path = "\(directory)/\(name)"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                  let record = InstanceRecord(adapter: recordAdapter, text: text) else { continue }
            if record.boot != currentBoot {
                try? FileManager.default.removeItem(atPath: path)  // from before a reboot: meaningless now
                continue
            }
            found.append((record, path))
        }
        return found
    }

    /// Removes a record's file (none is fine).
    public static func remove(path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension ManagedAdvertiser: RecordedInstances {}

