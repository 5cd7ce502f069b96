// SPDX-License-Identifier: GPL-2.0-or-later

/// How a beacon's content moves by itself while it advertises, as its format defines it
/// (`BeaconFormat.motion`): Eddystone-TLM's counters, Eddystone-EID's identifier. The host keeps
/// one schedule for every motion (`BeaconMotions`) and puts each new state on the air through
/// the one change path; it names no format.
public protocol ContentMotion: Sendable {
    /// What the motion is called where it is reported (`telemetry`, `eid`).
    var motionName: String { get }
    /// When its content next changes.
    var pace: MotionPace { get }
    /// The beacon `seconds` after this state (whole seconds for a stepped motion).
    func advanced(by seconds: Double, _ context: MotionContext) -> Beacon
    /// Whether a new address goes with each change, where the address is made up (Eddystone-EID:
    /// the specification rotates the address with the identifier).
    var renewsAddress: Bool { get }
    /// This state as a report names it (`EID 0A1B...`); nil: a change goes unreported (counters
    /// that move every few seconds).
    var stateText: String? { get }
    /// Whether `heard` is this beacon moved on by its motion (TLM: the same battery and
    /// temperature, whatever its counters).
    func isMovedOn(_ heard: Beacon) -> Bool
}

/// When a motion's content next changes.
public enum MotionPace: Sendable, Equatable {
    /// All the time (counters): the host sets it anew at a period of its own.
    case steady
    /// In `seconds` from the state's own time; never again when nil.
    case stepped(seconds: Double?)
}

/// What the host gives a motion: the advertising interval (counters of PDUs sent) and AES
/// (identifiers computed with it).
public struct MotionContext: Sendable {
    /// The advertising interval, in 0.625 ms units.
    public var intervalUnits: UInt32
    public var aes: any AESBlockEncrypting

    public init(intervalUnits: UInt32, aes: any AESBlockEncrypting) {
        self.intervalUnits = intervalUnits
        self.aes = aes
    }
}

extension Beacon {
    /// How its content moves by itself (its format's); nil for content that stays.
    public var motion: (any ContentMotion)? { format.motion }
}
