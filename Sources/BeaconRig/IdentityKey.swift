// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// An Eddystone-EID identity key, which is a secret: whoever has it can compute every identifier
/// the beacon will send. It is read from a file only its owner can read (`identity-key-file`,
/// as OpenSSH reads a private key), and no message ever carries it or a part of it: a bad key is
/// described by its length or the position of its bad character.
public enum IdentityKey {
    /// A key's length: 16 bytes (AES-128), 32 hex digits.
    public static let byteCount = 16
    /// The most a key file may hold (the key, and whitespace around it).
    public static let mostFileBytes = 4096

    /// The key written as 32 hex digits (whitespace around them allowed), in option or key `name`.
    /// - Throws: `BeaconDescription.Invalid` describing what is wrong without repeating the text.
    public static func parse(_ text: String, _ name: String) throws(BeaconDescription.Invalid) -> [UInt8] {
        let digits = Array(text.utf8.drop { isSpace($0) }.reversed().drop { isSpace($0) }.reversed())
        if let position = digits.firstIndex(where: { hexValue($0) == nil }) {
            throw BeaconDescription.Invalid("\(name): character \(position + 1) is not a hex digit (the key was not shown): "
                                            + "a key is \(byteCount * 2) hex digits (AES-128)")
        }
        guard digits.count == byteCount * 2 else {
            throw BeaconDescription.Invalid("\(name) has \(digits.count) hex digit\(digits.count == 1 ? "" : "s") (the key was "
                                            + "not shown): a key is \(byteCount * 2) hex digits (AES-128)")
        }
        return stride(from: 0, to: digits.count, by: 2).map { index in
            (hexValue(digits[index]) ?? 0) << 4 | (hexValue(digits[index + 1]) ?? 0)
        }
    }

    /// The key in the file at `path`, refused when anyone but its owner may read or write the
    /// file (its mode and `chmod 600` named), but in the unit's credentials directory: under
    /// systemd, `LoadCredential=` hands the unit's user a copy of a root-only file there.
    /// - Parameter name: the option or key that named the file, for messages.
    /// - Throws: `BeaconDescription.Invalid` naming the file and what is wrong.
    public static func read(file named: String, _ name: String) throws(BeaconDescription.Invalid) -> [UInt8] {
        let path = try resolve(named, name)
        let bytes: [UInt8]
        let mode: UInt32
        do {
            (bytes, mode, _) = try FileSystem.readSmallFile(path, most: mostFileBytes)
        } catch {
            let why = switch error.errno {
            case EFBIG: "it holds more than \(mostFileBytes) bytes, more than a key"
            case FileSystem.notRegularFile: "it is not a regular file (a FIFO, a device, a socket or a directory): "
                + "a key is a file of 32 hex digits"
            default: SystemCallError.message(error.errno)
            }
            throw BeaconDescription.Invalid("\(name) \(path): cannot read the key: \(why)")
        }
        if !isCredential(path), let refusal = refusal(mode: mode, path: path, name: name) { throw refusal }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw BeaconDescription.Invalid("\(name) \(path): the file is not text: it holds the key as \(byteCount * 2) hex digits")
        }
        return try parse(text, "\(name) \(path)")
    }

    /// How a key file's path may begin to name a credential of the unit's
    /// (`$CREDENTIALS_DIRECTORY/eid-key`): the same configuration then works wherever the unit
    /// runs, whatever its instance's name, and a check outside it can set the variable.
    public static let credentialsPrefix = "$CREDENTIALS_DIRECTORY/"

    /// `path` with a leading `$CREDENTIALS_DIRECTORY/` replaced by the directory systemd gives
    /// the unit.
    /// - Throws: `BeaconDescription.Invalid` when the path names it and it is not set.
    public static func resolve(_ path: String, _ name: String) throws(BeaconDescription.Invalid) -> String {
        guard path.hasPrefix(credentialsPrefix) else { return path }
        guard let directory = credentialsDirectory else {
            throw BeaconDescription.Invalid("\(name) \(path): CREDENTIALS_DIRECTORY is not set: systemd sets it for a unit "
                                            + "with LoadCredential= (docs/service.md); elsewhere set it, or name the key file itself")
        }
        return directory + path.dropFirst(credentialsPrefix.count)
    }

    /// The unit's credentials directory (`$CREDENTIALS_DIRECTORY`, absolute), ending in `/`;
    /// nil where it is not set.
    static var credentialsDirectory: String? {
        guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], directory.hasPrefix("/") else { return nil }
        return directory.hasSuffix("/") ? directory : directory + "/"
    }

    /// Whether `path` is in the unit's credentials directory (`$CREDENTIALS_DIRECTORY`), where
    /// systemd's `LoadCredential=` puts a copy of a file that the unit alone can read: its mode
    /// there says less than its access list (systemd grants the unit's user read access by an
    /// ACL entry, which shows in the group bits).
    static func isCredential(_ path: String) -> Bool {
        guard let directory = credentialsDirectory, !path.split(separator: "/").contains("..") else { return false }
        return path.hasPrefix(directory)
    }

    /// Why a key file of `mode` is refused: group or others may read or write it.
    static func refusal(mode: UInt32, path: String, name: String) -> BeaconDescription.Invalid? {
        guard mode & 0o077 != 0 else { return nil }
        let who = mode & 0o044 != 0 ? "other users can read it" : "other users can change it"
        return BeaconDescription.Invalid("\(name) \(path): \(who) (mode \(FileSystem.octalMode(mode))): a key "
                                         + "must be readable by its owner alone; run `chmod 600 \(path)`")
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
