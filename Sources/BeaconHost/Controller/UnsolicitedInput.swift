// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Input nobody asked for, and the one rule for it.
///
/// **What ends a session**: the link breaking (a closed socket, H4 framing lost, a system call
/// failing), a command left unanswered past its deadline, and a refusal (or an answer that does
/// not parse) of a command the host sent and needs. Those throw `HostError`.
///
/// **Everything else that arrives unasked** (an event that does not parse, an event or LE
/// subevent the host never enabled, an answer to a command it did not send, data packets, a
/// command packet from the controller) is one of these kinds: counted, reported (the first of a
/// kind, then at 10, 100, 1000, ... of it), and the session goes on. A scan skips such events
/// and its summary says how many.
public enum UnsolicitedInput: Hashable, Sendable, CustomStringConvertible {
    /// An event whose bytes do not parse (an advertising report with lengths past its end, a
    /// Command Status of the wrong length, ...).
    case malformedEvent
    /// An event or LE Meta subevent the host does not handle, from a controller it owns.
    case unknownEvent
    /// A Command Complete or Command Status for a command this host is not waiting for, from a
    /// controller it owns (on a kernel socket those are other programs' answers).
    case strayAnswer
    /// ACL, synchronous or ISO data: the host opened no connection.
    case dataPacket
    /// A command packet coming from an owned controller.
    case commandFromController
    /// Events that arrived while a command waited and that no one collected in time: the
    /// oldest are let go, so a flood cannot grow memory.
    case droppedEvent

    /// A short name for JSON output.
    public var code: String {
        switch self {
        case .malformedEvent: "malformed-event"
        case .unknownEvent: "unknown-event"
        case .strayAnswer: "stray-answer"
        case .dataPacket: "data-packet"
        case .commandFromController: "command-from-controller"
        case .droppedEvent: "dropped-event"
        }
    }

    /// What was ignored, plural: "events that do not parse".
    public var description: String {
        switch self {
        case .malformedEvent: "events that do not parse"
        case .unknownEvent: "events the host did not enable"
        case .strayAnswer: "answers to commands this host did not send"
        case .dataPacket: "data packets (no connection was opened)"
        case .commandFromController: "command packets from the controller"
        case .droppedEvent: "events dropped while a command waited (more than \(UnsolicitedInputCounter.queueLimit) queued)"
        }
    }
}

