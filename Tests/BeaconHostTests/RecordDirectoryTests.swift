// SPDX-License-Identifier: GPL-2.0-or-later

@testable import BeaconHost
import Foundation
import Testing

/// A record directory is trusted only when it is this user's alone: records planted in one
/// another user made (or one anyone can write, or a symbolic link) are neither read nor
/// written, and `stop --recorded` says why instead of acting on them.
@Suite struct RecordDirectoryTests {
    func makeDirectory(_ name: String, mode: mode_t) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("records-\(name)-\(UUID().uuidString)").path
        try #require(mkdir(path, 0o700) == 0)
        try #require(chmod(path, mode) == 0)
        return path
    }

    func plant(in directory: String) throws {
        let planted = InstanceRecord(adapter: "hci0", instances: [7], owner: InstanceRecord.Owner(pid: 1, startTime: 0))
        try planted.text.write(toFile: planted.path(in: directory), atomically: false, encoding: .utf8)
    }

    @Test func aDirectoryOthersCanWriteIsNeitherReadNorWritten() throws {
        let directory = try makeDirectory("open", mode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try plant(in: directory)
        #expect(InstanceRecord.all(in: directory).isEmpty, "a planted record was read")
        #expect(InstanceRecord.distrust(directory)?.description.contains("others can write in it (mode 777)") == true)
        #expect(throws: InstanceRecord.UntrustedDirectory.self) { try InstanceRecord(adapter: "hci0", instances: [1]).save(in: directory) }
        let said = AdvertisingShutdown.removeEveryRecordedInstance(directory: directory)
        #expect(said.count == 1 && said[0].contains("is not to be trusted") && said[0].contains("XDG_RUNTIME_DIR"), "\(said)")
    }

    /// A link another user made is refused whatever it points to; one root or this user made
    /// (systemd's state directory under DynamicUser) is followed, its target checked.
    @Test func aSymbolicLinkIsFollowedOnlyWhenOursOrRoots() throws {
        let target = try makeDirectory("target", mode: 0o700)
        let open = try makeDirectory("open-target", mode: 0o777)
        let link = target + "-link", openLink = open + "-link"
        defer {
            try? FileManager.default.removeItem(atPath: target)
            try? FileManager.default.removeItem(atPath: open)
            unlink(link)
            unlink(openLink)
        }
        try #require(symlink(target, link) == 0 && symlink(open, openLink) == 0)
        try plant(in: target)
        try plant(in: open)
        #expect(InstanceRecord.all(in: link).count == 1, "a link of ours to a directory of ours is followed")
        #expect(InstanceRecord.all(in: openLink).isEmpty, "a link to a directory others can write")
        #expect(InstanceRecord.distrust(openLink)?.why.contains("others can write in it") == true)
        guard getuid() == 0 else { return }  // only root can give a link away
        try #require(lchown(link, 65534, 65534) == 0)
        #expect(InstanceRecord.all(in: link).isEmpty, "a link nobody made was followed by root")
        #expect(InstanceRecord.distrust(link)?.why.contains("a symbolic link (to \(target)) that nobody made") == true,
                "\(String(describing: InstanceRecord.distrust(link)))")
    }

    /// systemd's state directory under DynamicUser=: root's link to a directory of the unit's
    /// user, which root (doctor) reads; the same directory named directly is refused.
    /// Root's link vouches only from a folder root alone can change (as /var/lib is): the same
    /// link in /tmp (sticky, anyone can write) vouches for nothing.
    @Test func rootsLinkVouchesForAnotherUsersDirectory() throws {
        guard getuid() == 0 else { return }  // only root can give a directory away
        let directory = try makeDirectory("unit", mode: 0o700)
        let lib = try makeDirectory("lib", mode: 0o755)
        let link = lib + "/state", tmpLink = directory + "-state"
        defer { try? FileManager.default.removeItem(atPath: directory); try? FileManager.default.removeItem(atPath: lib); unlink(tmpLink) }
        try plant(in: directory)
        try #require(chown(directory, 65534, 65534) == 0 && symlink(directory, link) == 0 && symlink(directory, tmpLink) == 0)
        #expect(InstanceRecord.all(in: link).count == 1, "root's link into the unit's directory")
        #expect(InstanceRecord.all(in: directory).isEmpty, "nobody's directory, named directly")
        #expect(InstanceRecord.all(in: tmpLink).isEmpty, "root's link in sticky /tmp vouched")
        #expect(InstanceRecord.distrust(tmpLink)?.why.contains("a link vouches for another user's directory only in a folder root "
                                                                + "owns and no one else can write") == true)
        try #require(chmod(lib, 0o1777) == 0)
        #expect(InstanceRecord.all(in: link).isEmpty, "root's link in a folder anyone can write, sticky or not")
        try #require(chmod(lib, 0o755) == 0 && chmod(directory, 0o777) == 0)
        #expect(InstanceRecord.all(in: link).isEmpty, "a directory others can write, even through root's link")
    }

    @Test func anotherUsersDirectoryIsRefused() throws {
        let directory = try makeDirectory("theirs", mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try plant(in: directory)
        guard getuid() == 0 else {
            // Only root can give a directory away; this user's own is read.
            #expect(InstanceRecord.all(in: directory).count == 1)
            return
        }
        try #require(chown(directory, 65534, 65534) == 0)
        #expect(InstanceRecord.all(in: directory).isEmpty, "a record in nobody's directory was read by root")
        #expect(InstanceRecord.distrust(directory)?.why.contains("belongs to") == true)
    }

    /// The folders above are walked, as OpenSSH's safe_path walks them: a directory of ours in
    /// a folder others can write (without the sticky bit) could be renamed away and replaced;
    /// so could root's link sitting there. /tmp (sticky) is fine.
    @Test func theFoldersAboveAreWalked() throws {
        let parent = try makeDirectory("above", mode: 0o700)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let directory = parent + "/records"
        try #require(mkdir(directory, 0o700) == 0)
        try plant(in: directory)
        #expect(InstanceRecord.all(in: directory).count == 1, "under a folder of ours, in sticky /tmp")
        try #require(chmod(parent, 0o777) == 0)
        #expect(InstanceRecord.all(in: directory).isEmpty, "a planted record was read under a folder others can write")
        #expect(InstanceRecord.distrust(directory)?.why.contains("others can write in \(parent), a folder above it (mode 777)") == true,
                "\(String(describing: InstanceRecord.distrust(directory)))")
        try #require(chmod(parent, 0o1777) == 0)
        #expect(InstanceRecord.all(in: directory).count == 1, "the sticky bit keeps others from renaming it")
        // A link of ours sitting in a folder others can write, to a directory of ours.
        try #require(chmod(parent, 0o700) == 0)
        let open = try makeDirectory("open-folder", mode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: open) }
        try #require(symlink(directory, open + "/link") == 0)
        #expect(InstanceRecord.all(in: open + "/link").isEmpty, "a link in a folder others can write vouched")
        guard getuid() == 0 else { return }
        try #require(chown(parent, 65534, 65534) == 0)
        #expect(InstanceRecord.distrust(directory)?.why.contains("\(parent), a folder above it, belongs to") == true,
                "\(String(describing: InstanceRecord.distrust(directory)))")
    }

    @Test func ourOwnDirectoryIsMadeAndUsed() throws {
        let parent = try makeDirectory("parent", mode: 0o700)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let directory = parent + "/beacon-emit"
        let record = InstanceRecord(adapter: "hci0", instances: [3])
        try record.save(in: directory)
        var info = stat()
        #expect(lstat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(InstanceRecord.all(in: directory).map(\.record.instances) == [[3]])
    }
}
