// SPDX-License-Identifier: GPL-2.0-or-later

/// A program a scenario runs on the machine that runs it. A scenario is code: its `hosts:`
/// start the system's `ssh`, and some ssh options run a command or load a library here
/// (`ProxyCommand`, `LocalCommand`, a configuration file given with `-F`). `run --check` names
/// each one so that whoever reviews a file sees what it would run.
public struct LocalProgram: Sendable, Equatable, CustomStringConvertible {
    /// The host whose session runs it.
    public var host: String
    /// Where the file says so.
    public var place: Scenario.Place?
    /// What runs, in words.
    public var what: String

    public init(host: String, place: Scenario.Place?, what: String) {
        self.host = host
        self.place = place
        self.what = what
    }

    public var description: String { "host '\(host)': \(what)" }
}

/// The ssh options that run or load something on this machine.
public enum SSHOptionReview {
    /// Configuration keywords (`-o KEYWORD=VALUE`) whose value ssh runs or loads here.
    static let running: [String: String] = [
        "proxycommand": "runs the command",
        "localcommand": "runs the command (with PermitLocalCommand=yes)",
        "knownhostscommand": "runs the command",
        "pkcs11provider": "loads the library",
        "securitykeyprovider": "loads the library",
        "match": "may run a command (Match exec)",
        "include": "reads the configuration file, which may run any command",
    ]

    /// One finding: the option's index in the list, and what it runs.
    public struct Finding: Sendable, Equatable {
        public var index: Int
        public var what: String
    }

    /// What in `options` (a host's `sshOptions`) runs or loads something on this machine.
    public static func findings(_ options: [String]) -> [Finding] {
        var found: [Finding] = []
        var index = 0
        while index < options.count {
            let option = options[index]
            // "-o X", "-oX", and the flags with a value: "-F FILE", "-FFILE", "-I LIB".
            let flag = option.count >= 2 && option.hasPrefix("-") && !option.hasPrefix("--") ? option.dropFirst().first : nil
            let attached = option.count > 2 ? String(option.dropFirst(2)) : nil
            let value = attached ?? (index + 1 < options.count ? options[index + 1] : "")
            let valueIndex = attached == nil ? index + 1 : index
            switch flag {
            case "o":
                if let finding = keyword(value) { found.append(Finding(index: valueIndex, what: finding)) }
            case "F" where value != "none":
                found.append(Finding(index: valueIndex, what: "-F: ssh reads the configuration file '\(value)', which may run any command"))
            case "I":
                found.append(Finding(index: valueIndex, what: "-I: ssh loads the PKCS#11 library '\(value)'"))
            default:
                break
            }
            index = flag == "o" || flag == "F" || flag == "I" ? valueIndex + 1 : index + 1
        }
        return found
    }

    /// `KEYWORD=VALUE` or `KEYWORD VALUE`, as ssh reads an option: what it runs, if anything.
    static func keyword(_ text: String) -> String? {
        let trimmed = text.drop { $0 == " " || $0 == "\t" }
        let name = trimmed.prefix { $0 != "=" && $0 != " " && $0 != "\t" }
        guard let effect = running[name.lowercased()] else { return nil }
        let value = trimmed.dropFirst(name.count).drop { $0 == "=" || $0 == " " || $0 == "\t" }
        return "-o \(name): ssh \(effect) '\(value)' on this machine"
    }
}

/// The ssh options a scenario's host may give without `run --allow-ssh-options`: a key, a port, a
/// login and the options that only say how to connect. Everything else is refused (git lets no
/// repository choose ssh options either): some run or load a program on this machine
/// (`ProxyCommand`, `LocalCommand`, `-F`, ...), and a list that names only what is known to be
/// harmless cannot miss a spelling of one that is not.
public enum SSHOptionPolicy {
    /// The flags taken, each with its value (attached or next).
    static let flags: Set<Character> = ["i", "p", "l"]
    /// The `-o` keywords taken, in lower case (ssh reads keywords in any case).
    static let keywords: Set<String> = ["port", "user", "identityfile", "identitiesonly", "connecttimeout",
                                        "serveraliveinterval", "serveralivecountmax"]

    /// What the refusal lists as allowed.
    public static let allowed = "-i FILE, -p PORT, -l USER and -o with Port, User, IdentityFile, IdentitiesOnly, "
        + "ConnectTimeout, ServerAliveInterval or ServerAliveCountMax"

    /// The first option in `options` (a host's `sshOptions`) that is not allowed: its index and
    /// text; nil when every one is.
    public static func firstRefused(_ options: [String]) -> (index: Int, text: String)? {
        var index = 0
        while index < options.count {
            let option = options[index]
            guard option.count >= 2, option.hasPrefix("-"), !option.hasPrefix("--"), let flag = option.dropFirst().first,
                  flag == "o" || flags.contains(flag) else { return (index, option) }
            let attached = option.count > 2 ? String(option.dropFirst(2)) : nil
            guard let value = attached ?? (index + 1 < options.count ? options[index + 1] : nil) else { return (index, option) }
            let valueIndex = attached == nil ? index + 1 : index
            // No control character: ssh reads an option as a line of its configuration.
            // Said as written: the option with its value attached, or the value alone.
            let written = attached == nil ? value : option
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return (valueIndex, written) }
            if flag == "o" {
                let name = value.prefix { $0 != "=" && $0 != " " && $0 != "\t" }
                guard keywords.contains(name.lowercased()) else { return (valueIndex, written) }
            }
            index = valueIndex + 1
        }
        return nil
    }
}
