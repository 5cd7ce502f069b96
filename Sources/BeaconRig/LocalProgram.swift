// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports

/// A program a scenario runs on the machine that runs it. A scenario is code: its `hosts:`
/// start the system's `ssh`, and some ssh options run a command or load a library here
/// (`ProxyCommand`, `LocalCommand`, a configuration file given with `-F`). `run --check` names
/// each one so that whoever reviews a file sees what it would run.
public struct LocalProgram: Sendable, Equatable, CustomStringConvertible {
    /// The host whose session runs it, or the phone whose log it is.
    public var host: String
    /// What `host` names: "host" or "phone".
    public var kind: String
    /// Where the file says so.
    public var place: Scenario.Place?
    /// What runs, in words.
    public var what: String

    public init(host: String, place: Scenario.Place?, what: String, kind: String = "host") {
        self.host = host
        self.kind = kind
        self.place = place
        self.what = what
    }

    /// For a terminal: the host's name and what runs with their control characters written out
    /// (`TerminalText`: a `\r` or `ESC[2K` could hide what runs from whoever reviews it).
    public var description: String { "\(kind) '\(TerminalText.escape(host))': \(TerminalText.escape(what))" }
}
