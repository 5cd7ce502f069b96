// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// The rules of the tree that the compiler does not keep, read from the sources: every system
/// call goes through LinuxSystem; the host library's messages name no option of the command.
/// The same on every architecture: not run again as an arm64 binary under qemu-user
/// (scripts/arm64-test sets BEACON_EMIT_EMULATED), where its regular expressions take minutes.
@Suite(.disabled(if: ProcessInfo.processInfo.environment["BEACON_EMIT_EMULATED"] == "1",
                 "under emulation: the tree's rules are read natively, the same on every architecture"))
struct ArchitectureTests {
    /// The package's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each Swift source of the targets but LinuxSystem (and the fuzzer, a test tool), with its lines.
    static func sources() throws -> [(path: String, lines: [Substring])] {
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") && !$0.hasPrefix("LinuxSystem/") && !$0.hasPrefix("CodecFuzzer/") }
            .sorted().map { path in
                (path, try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8).split(separator: "\n",
                                                                                                          omittingEmptySubsequences: false))
            }
    }

    /// The C library's system calls (and the calls around them: the environment, the group
    /// database, name resolution, terminal settings) that LinuxSystem wraps. A call written
    /// as a free function anywhere else is one that went around it. (read, write, close,
    /// send, connect and the like are left out: the targets have methods of those names.)
    static let wrapped = ["lstat", "fstat", "stat", "unlink", "chmod", "chown", "getgrnam", "umask", "getaddrinfo",
                          "freeaddrinfo", "tcgetattr", "tcsetattr", "cfmakeraw", "cfsetispeed", "cfsetospeed", "tcflush",
                          "mmap", "munmap", "madvise", "lseek", "sysconf", "getpid", "getppid", "getuid", "geteuid",
                          "access", "readlink", "ioctl", "fcntl", "pipe", "pipe2", "kill", "waitpid", "setsockopt",
                          "getsockopt", "sendto", "recvfrom", "dup", "dup2", "isatty", "mkdir", "getenv", "setenv",
                          "unsetenv", "execvp", "execv", "fork", "posix_spawn", "poll", "epoll_create1", "epoll_ctl",
                          "epoll_wait", "timerfd_create", "timerfd_settime", "eventfd", "sigaction", "sigprocmask",
                          "usleep", "nanosleep", "opendir", "readdir", "strerror", "flock"]

    @Test func everySystemCallGoesThroughLinuxSystem() throws {
        let call = try Regex("(^|[^.\\w])(" + Self.wrapped.joined(separator: "|") + ")\\(")
        let stringLiteral = try Regex(#""(\\.|[^"\\])*""#)
        let sources = try Self.sources()
        var found: [String] = []
        for (path, lines) in sources {
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let code = String(line).replacing(stringLiteral, with: "\"\"")
                for match in code.matches(of: call) where !code[...match.range.lowerBound].hasSuffix("func ") {
                    found.append("\(path):\(number + 1): \(code[match.range].drop { !$0.isLetter }.dropLast())")
                }
            }
        }
        #expect(found.isEmpty, "system calls outside LinuxSystem:\n\(found.joined(separator: "\n"))")
        #expect(sources.count > 100, "the sources were found")
    }

    /// Arguments of other programs the host runs (unshare, pip, setpriv, a tool's --version):
    /// the only double-dash words a string of the host library may hold.
    static let otherProgramsArguments: Set<String> = ["--net", "--map-root-user", "--quiet", "--pdeathsig", "--version"]

    /// BeaconHost says what failed (HostError, Refusal, its warnings and steps) in the library's
    /// terms; only the command knows its options, and adds them as advice.
    @Test func theHostLibraryNamesNoOption() throws {
        let stringLiteral = try Regex(#""(\\.|[^"\\])*""#)
        let option = try Regex("--[a-z][a-z-]*")
        let sources = try Self.sources().filter { $0.path.hasPrefix("BeaconHost/") }
        var found: [String] = []
        for (path, lines) in sources {
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                for literal in line.matches(of: stringLiteral) {
                    for name in line[literal.range].matches(of: option)
                    where !Self.otherProgramsArguments.contains(String(line[literal.range][name.range])) {
                        found.append("\(path):\(number + 1): \(line[literal.range][name.range])")
                    }
                }
            }
        }
        #expect(found.isEmpty, "option names in BeaconHost's strings:\n\(found.joined(separator: "\n"))")
        // Nor does it refuse in words: every refusal is a `Refusal` a program can switch on.
        let worded = sources.flatMap { source in
            source.lines.enumerated().filter { $0.element.contains(".unsupported(") }.map { "\(source.path):\($0.offset + 1)" }
        }
        #expect(worded.filter { !$0.hasPrefix("BeaconHost/Supervision/HostError.swift") }.isEmpty,
                "refusals in words in BeaconHost: \(worded)")
        #expect(sources.count > 40, "the sources were found")
    }

    /// The places outside the formats' own files (`AdvertisementCodec/Beacons/`) that still
    /// name beacon kinds, each with how many times and why. Everything else asks the format
    /// (`Beacon.format`, `BeaconFormat`): a new format adds its own file and its registration
    /// in `Beacon.format`, not a case here.
    static let kindSites: [String: (count: Int, why: String)] = [:]

    /// A module that switches over beacon kinds outside the formats' own files fails here.
    @Test func onlyTheFormatsNameBeaconKinds() throws {
        try Self.expectSites(Self.kindSites, matching: Self.kindCase,
                             what: "beacon kinds named outside the formats' files (ask the format: BeaconFormat)")
    }

    /// The pattern a switch's case over beacon kinds matches.
    static let kindCase = #"(case|if case|guard case)[^\n]*[^\w]\.(iBeacon|altBeacon|eddystone)\b|\.eddystone\(\.(uid|url|tlm|eid|encryptedTLM|other)"#

    /// A `default:` arm in a switch over beacon kinds outside the formats' files lets a new
    /// format through without a word: such a switch asks the format, or names every kind.
    @Test func noSwitchOverKindsHasADefaultArm() throws {
        try #expect(Self.defaultArmsOverKinds(in: Self.sources()).isEmpty)
        // The check sees one: a scratch switch with a `default:` under a kind's case.
        let scratch: [Substring] = ["    switch beacon {", "    case .eddystone(.uid): true", "    default: false", "    }"]
        #expect(try Self.defaultArmsOverKinds(in: [("Scratch/Scratch.swift", scratch)]) == ["Scratch/Scratch.swift:3"])
    }

    /// The `default:` lines (as `path:line`) of switches whose cases name beacon kinds, outside
    /// the formats' files: the arm and the cases from the nearest `switch` above it.
    static func defaultArmsOverKinds(in sources: [(path: String, lines: [Substring])]) throws -> [String] {
        let kind = try Regex(kindCase)
        let switchLine = try Regex(#"(^|\s|=\s*)switch\s"#)
        var found: [String] = []
        for (path, lines) in sources where !path.hasPrefix("AdvertisementCodec/Beacons/") {
            for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces).hasPrefix("default:") {
                guard let start = lines[..<index].lastIndex(where: { $0.contains(switchLine) })
                else { continue }
                if lines[start..<index].contains(where: { $0.contains(kind) }) { found.append("\(path):\(index + 1)") }
            }
        }
        return found
    }

    /// One owner of change and of supervision: `LiveBeacons` is the only type of the sources
    /// that implements the change API (`LiveAdvertising`; the advertisers send commands), and
    /// `EmitterRun` the only one that makes a `Supervisor` (for `advertise`, the library and a
    /// scenario's stage alike).
    @Test func oneTypeChangesBeaconsAndOneSupervises() throws {
        let sources = try Self.sources()
        #expect(try Self.siteCounts(in: sources, matching: #"(class|struct|extension) \w+\s*:.*\bLiveAdvertising\b"#)
                == ["BeaconHost/Advertising/LiveBeacons.swift": 1])
        #expect(try Self.siteCounts(in: sources, matching: #"(^|[^\w.])Supervisor\("#) == ["BeaconHost/Supervision/EmitterRun.swift": 1])
        // Seen finding a second implementer, as a scratch file would hold one.
        let scratch = [(path: "BeaconHost/Advertising/Scratch.swift",
                        lines: ["extension Advertiser: LiveAdvertising {", "    let s = Supervisor(session: session)"] as [Substring])]
        #expect(try Self.siteCounts(in: scratch, matching: #"(class|struct|extension) \w+\s*:.*\bLiveAdvertising\b"#).count == 1)
        #expect(try Self.siteCounts(in: scratch, matching: #"(^|[^\w.])Supervisor\("#).count == 1)
    }

    /// The lines outside the formats' own files matching `pattern` (comments aside), counted per
    /// file: more than `sites` allows fails, and so does fewer (the count is lowered with them).
    static func expectSites(_ sites: [String: (count: Int, why: String)], matching pattern: String, what: String) throws {
        let counts = try siteCounts(in: sources(), matching: pattern)
        let unexpected = counts.filter { sites[$0.key]?.count ?? 0 < $0.value }
        #expect(unexpected.isEmpty, "\(what): \(unexpected)")
        let stale = sites.filter { counts[$0.key] ?? 0 < $0.value.count }
        #expect(stale.isEmpty, "fewer than counted (lower the count): \(stale.mapValues(\.count)) found \(counts)")
    }

    /// How many lines of each file outside the formats' own files match `pattern`, comments aside.
    static func siteCounts(in sources: [(path: String, lines: [Substring])], matching pattern: String) throws -> [String: Int] {
        let regex = try Regex(pattern)
        var counts: [String: Int] = [:]
        for (path, lines) in sources where !path.hasPrefix("AdvertisementCodec/Beacons/") {
            for line in lines where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(regex) {
                counts[path, default: 0] += 1
            }
        }
        return counts
    }

    /// The checks see what they count: a scratch switch over kinds and a scratch enum restating
    /// them, outside the formats' folder, are found; the same lines in it are not.
    @Test func theCountsSeeAScratchSwitchAndList() throws {
        let scratch: [Substring] = ["    switch beacon {", "    case .iBeacon: 1", "    case .eddystone(.tlm): 2", "    }",
                                    "enum Kind: String { case ibeacon, altbeacon, eddystoneUID }", "    // case .iBeacon: a comment"]
        #expect(try Self.siteCounts(in: [("Scratch/Scratch.swift", scratch)], matching: Self.kindCase) == ["Scratch/Scratch.swift": 2])
        #expect(try Self.siteCounts(in: [("Scratch/Scratch.swift", scratch)], matching: Self.spellingPattern)
                == ["Scratch/Scratch.swift": 1])
        #expect(try Self.siteCounts(in: [("AdvertisementCodec/Beacons/Scratch.swift", scratch)], matching: Self.kindCase).isEmpty)
    }

    /// The places outside the formats' own files that spell the kinds in lowercase or restate
    /// their list (an enum of formats, a table of names, a message listing them), each with how
    /// many lines and why: the lists a new format of the codec's own must still be added to.
    /// `onlyTheFormatsNameBeaconKinds` sees the switches; this sees the lists beside them.
    static let spellingSites: [String: (count: Int, why: String)] = [
        "BeaconEmitter/BeaconOptions.swift": (2, "the command's flag per format (swift-argument-parser needs a static list; FormatFlagTests holds it equal to the formats)"),
    ]

    /// The pattern a lowercase spelling or a restated list of the kinds matches.
    static let spellingPattern = #"(case\s+(ibeacon|altbeacon|eddystone[A-Za-z]*)\b)|"(ibeacon|altbeacon|eddystone|eddystone-(uid|url|tlm|eid))"|\b(ibeacon|altbeacon), (altbeacon|eddystone)"#

    /// A new lowercase spelling or list of the kinds outside the formats' files fails here.
    @Test func theKindsListsAreCounted() throws {
        try Self.expectSites(Self.spellingSites, matching: Self.spellingPattern,
                             what: "the kinds spelled or listed outside the formats' files (ask the format)")
    }

    /// The longest a function of the command may be: it parses, calls and prints, one small
    /// function per kind of thing printed.
    static let longestCommandFunction = 80

    /// A function of the command (`Sources/BeaconEmitter`) over `longestCommandFunction` lines,
    /// from its `func` line to the brace that closes it at the same indentation, fails here.
    @Test func theCommandsFunctionsAreShort() throws {
        let function = try Regex(#"^(\s*)(?:@\w+\s+)*(?:(?:public|private|fileprivate|package|internal|static|mutating|override|final)\s+)*func\s+(\w+)"#)
        var long: [String] = []
        for (path, lines) in try Self.sources() where path.hasPrefix("BeaconEmitter/") {
            for (index, line) in lines.enumerated() where line.hasSuffix("{") {
                guard let match = line.firstMatch(of: function), let indent = match.output[1].substring,
                      let name = match.output[2].substring else { continue }
                let closing = indent + "}"
                guard let end = lines[(index + 1)...].firstIndex(where: { $0.hasPrefix(closing) && !$0.dropFirst(indent.count).hasPrefix(" ") })
                else { continue }
                if end - index + 1 > Self.longestCommandFunction { long.append("\(path) \(name): \(end - index + 1) lines") }
            }
        }
        #expect(long.isEmpty, "functions of the command over \(Self.longestCommandFunction) lines (split them): \(long)")
    }
}
