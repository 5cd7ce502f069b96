// SPDX-License-Identifier: GPL-2.0-or-later

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
