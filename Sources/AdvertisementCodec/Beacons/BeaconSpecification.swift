// SPDX-License-Identifier: GPL-2.0-or-later

/// What a format's specification asks of a beacon on the air, as an audit judges it
/// (`audit --profile NAME`): the exact layout of its bytes, whether it may be connectable, the
/// interval it is sent at, whether its data may change. A format that has one states it beside
/// its layout (`IBeacon.specification`, or `RegisteredBeaconFormat.specification`); the audit
/// reads only this, so a new format brings its rules with it.
public struct BeaconSpecification: Sendable, Hashable, CustomStringConvertible {
    /// What a layout check found: what is out of place (nothing: the layout holds), and a
    /// warning where the layout holds but a value is unusual.
    public struct LayoutFinding: Sendable, Equatable {
        public var problems: [String]
        public var warning: (seen: String, wanted: String)?

        public init(problems: [String] = [], warning: (seen: String, wanted: String)? = nil) {
            self.problems = problems
            self.warning = warning
        }

        public static func == (lhs: LayoutFinding, rhs: LayoutFinding) -> Bool {
            lhs.problems == rhs.problems && lhs.warning?.seen == rhs.warning?.seen && lhs.warning?.wanted == rhs.warning?.wanted
        }
    }

    /// The format's name (`BeaconFormat.formatName`): `--profile NAME` and reports name it so.
    public let name: String
    /// Its name in text: `iBeacon`.
    public let displayName: String
    /// The document the rules come from.
    public let source: String
    /// The layout in words (what `layout` checks).
    public let layoutWanted: String
    /// Checks the advertising data's structures against the layout.
    public let layout: @Sendable ([ADStructure]) -> LayoutFinding
    /// Whether a connectable beacon fails (the specification forbids it) rather than warns.
    public let connectableFails: Bool
    /// The interval the specification sets, in ms, and how far from it passes; nil: common
    /// practice (at most 1 s).
    public let interval: (ms: Double, within: Double)?
    /// Whether its data may change while it advertises (TLM's counters).
    public let dataMayChange: Bool

    public init(name: String, displayName: String, source: String, layoutWanted: String, connectableFails: Bool = false,
                interval: (ms: Double, within: Double)? = nil, dataMayChange: Bool = false,
                layout: @escaping @Sendable ([ADStructure]) -> LayoutFinding) {
        self.name = name
        self.displayName = displayName
        self.source = source
        self.layoutWanted = layoutWanted
        self.layout = layout
        self.connectableFails = connectableFails
        self.interval = interval
        self.dataMayChange = dataMayChange
    }

    /// The same format's specification: equal by name (a format has one).
    public static func == (lhs: BeaconSpecification, rhs: BeaconSpecification) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }

    /// The Core Specification's part on advertising (PDU types, intervals).
    public static let coreSource = "Bluetooth Core Specification, Vol 6 Part B"
}
