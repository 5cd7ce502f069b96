// SPDX-License-Identifier: GPL-2.0-or-later

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
