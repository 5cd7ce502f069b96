// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation

/// Which advertising instances of an adapter beacon-emit added: the management API cannot
/// say who added an instance, so `stop` removes only the instances listed here, and only
/// while they still exist. The record lives in the runtime directory (`$RUNTIME_DIRECTORY`
/// under systemd, `$XDG_RUNTIME_DIR/beacon-emit`, `/run/beacon-emit` for root, else
/// `/tmp/beacon-emit-UID`) and names the kernel's boot, so a record from before a reboot
/// (when the numbers may since belong to someone else) is ignored.
public struct InstanceRecord: Equatable, Sendable {
    public var adapter: String
    public var instances: [UInt8]
    public var boot: String

    public init(adapter: String, instances: [UInt8], boot: String = InstanceRecord.currentBoot) {
        self.adapter = adapter
        self.instances = instances
        self.boot = boot
    }

    /// The kernel's boot identifier (`/proc/sys/kernel/random/boot_id`), or "" where unreadable.
    public static var currentBoot: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The directory the records live in.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let systemd = environment["RUNTIME_DIRECTORY"], !systemd.isEmpty {
            return String(systemd.split(separator: ":").first ?? Substring(systemd))
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/beacon-emit" }
        return getuid() == 0 ? "/run/beacon-emit" : "/tmp/beacon-emit-\(getuid())"
    }

    static func path(adapter: String, directory: String) -> String { "\(directory)/\(adapter).instances" }

    /// The text of a record: `boot ID`, then `instance N` per line.
    public var text: String {
        (["boot \(boot)"] + instances.map { "instance \($0)" }).joined(separator: "\n") + "\n"
    }

    /// Reads a record's text; nil when it is not one.
    public init?(adapter: String, text: String) {
        var boot: String? = nil
        var instances: [UInt8] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "boot": boot = parts[1]
            case "instance":
                guard let instance = UInt8(parts[1]), instance > 0 else { return nil }
                instances.append(instance)
            default: return nil
            }
        }
        guard let boot else { return nil }
        self.init(adapter: adapter, instances: instances, boot: boot)
    }

    /// Writes the record (replacing any), creating the directory (mode 0700).
    /// - Throws: the file system's error; the caller reports it (advertising works without it).
    public func save(in directory: String = InstanceRecord.directory()) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try text.write(toFile: Self.path(adapter: adapter, directory: directory), atomically: true, encoding: .utf8)
    }

    /// The record for `adapter` from this boot, if there is one.
    public static func load(adapter: String, in directory: String = InstanceRecord.directory()) -> InstanceRecord? {
        guard let text = try? String(contentsOfFile: path(adapter: adapter, directory: directory), encoding: .utf8),
              let record = InstanceRecord(adapter: adapter, text: text), record.boot == currentBoot else { return nil }
        return record
    }

    /// Removes the record for `adapter` (none is fine).
    public static func remove(adapter: String, in directory: String = InstanceRecord.directory()) {
        try? FileManager.default.removeItem(atPath: path(adapter: adapter, directory: directory))
    }
}
