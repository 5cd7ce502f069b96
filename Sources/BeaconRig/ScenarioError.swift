// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a scenario file was refused: where (`FILE:LINE:COLUMN`, as compilers say it) and what
/// was expected there.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var place: Scenario.Place?
    public var message: String
    /// The file could not be read at all (no such file, no permission): the environment's
    /// fault, not the file's (exit 74, where a mistake in it is 65).
    public var unreadable = false

    public init(file: String, place: Scenario.Place?, message: String, unreadable: Bool = false) {
        self.file = file
        self.place = place
        self.message = message
        self.unreadable = unreadable
    }

    public var description: String {
        (place.map { "\(file):\($0.line):\($0.column): " } ?? "\(file): ") + message
    }
}
