// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// The one command engine, for HCI and management packets alike: sends one command, waits with
/// a real deadline for the event that answers it, and keeps every other event for the caller
/// in a bounded queue. Input nobody asked for is counted and reported, never thrown
/// (`UnsolicitedInput` has the rule). `HCIController` (`CommandEngine<HCIWire>`) and
/// `MgmtClient` (`CommandEngine<MgmtWire>`) are the two; each protocol's commands are sent by
/// its own `send`.
package final class CommandEngine<Wire: CommandWire> {
    public let transport: any PacketTransport<Wire.Packet>
    /// The protocol's rules and state (HCI: command credits and the observers).
    public internal(set) var wire: Wire
    /// How long a command may go unanswered.
    public var commandTimeout: Duration
    /// The device named in messages and transport errors (a kernel adapter's changes when it
    /// comes back under another number).
    public internal(set) var device: String
    /// Called with each command sent and each answer, for `--verbose`.
    public var trace: ((String) -> Void)?
    /// Called with each command packet once it is sent (the takeover watch learns our
    /// management socket from it).
    public var sent: ((Wire.Packet) -> Void)?
    /// Commands sent so far (each is one round trip).
    public private(set) var roundTrips = 0
    /// The loop a wait for an answer runs until its deadline (the run's, while it runs); nil:
    /// the wait is on the link alone. Used where the transport has a descriptor to poll.
    public weak var loop: (any CommandWaitLoop)?
    /// Input nobody asked for, by kind.
    public private(set) var unsolicited = UnsolicitedInputCounter()
    /// Called when a kind of unsolicited input is first seen, and at 10, 100, ... of it.
    public var reportUnsolicited: ((UnsolicitedInputReport) -> Void)?

    private var pending = PendingEvents<Wire.Event>()
    /// Whether `nextEvent`'s wait handed the observer a packet (it then returns early).
    private var observedWhileWaiting = false

    public init(transport: any PacketTransport<Wire.Packet>, wire: Wire, device: String, commandTimeout: Duration) {
        self.transport = transport
        self.wire = wire
        self.device = device
        self.commandTimeout = commandTimeout
    }

    /// Sends `packet` once the wire allows it and returns what `answer` makes of the event
    /// that answers it; events about other things are passed over (`CommandWire.passOver`).
    /// - Parameters:
    ///   - line: the trace line for the command.
    ///   - timedOut: the error when no answer comes within `commandTimeout`, given what was
    ///     passed over meanwhile (the answer may have been among what did not parse).
    ///   - answer: what an event means to this command; a refusal is thrown from it.
    public func exchange<Answer>(_ packet: Wire.Packet, line: String, timeout: Duration? = nil,
                          timedOut: (_ ignoredMeanwhile: String?) -> HostError,
                          answer: (Wire.Event) throws(HostError) -> Answering<Answer>) throws(HostError) -> Answer {
        let deadline = ContinuousClock.now + (timeout ?? commandTimeout)
        let before = unsolicited
        while !wire.maySend {
            guard let event = try receive(until: deadline) else { throw timedOut(unsolicited.since(before).summary) }
            try passOver(event)
        }
        trace?(line)
        do {
            try transport.send(packet)
        } catch {
            throw .transport(error, device: device)
        }
        wire.sending(packet)
        roundTrips += 1
        sent?(packet)
        while true {
            guard let event = try receive(until: deadline) else { throw timedOut(unsolicited.since(before).summary) }
            switch try answer(event) {
            case let .answer(result): return result
            case .accepted: continue
            case .other: try passOver(event)
            }
        }
    }

    /// The next event that is not an answer, waiting at most `timeout` (`.zero`: what has
    /// arrived, read without waiting; a loop waits on the transport's descriptor with its own).
    /// - Returns: nil on timeout, or as soon as the wire's observer has been handed something.
    /// - Throws: `HostError` when the link fails, or a fault the wire throws.
    public func nextEvent(timeout: Duration) throws(HostError) -> Wire.Event? {
        if let event = pending.next() { return event }
        let deadline = ContinuousClock.now + timeout
        observedWhileWaiting = false
        while !observedWhileWaiting,
              let event = try receive(until: deadline, returnOnObserved: true) {
            guard wire.isAnswerOrFault(event) else { return event }
            try passOver(event)
        }
        return nil
    }

    /// The next event from the transport; nil once `deadline` passes (or, with
    /// `returnOnObserved`, once the observer was handed something).
    private func receive(until deadline: ContinuousClock.Instant, returnOnObserved: Bool = false) throws(HostError)
        -> Wire.Event? {
        while let packet = try nextPacket(until: deadline) {
            switch wire.classify(packet) {
            case let .event(event): return event
            case let .unsolicited(kind, detail): ignore(kind, detail: detail)
            case .observed:
                observedWhileWaiting = true
                if returnOnObserved { return nil }
            case .skipped: continue
            }
        }
        return nil
    }

    /// The next packet before `deadline`; nil when it passes. A deadline already past still
    /// reads what is there. With a `loop`, the link is read without waiting and the loop waits
    /// on it, serving its other sources meanwhile.
    private func nextPacket(until deadline: ContinuousClock.Instant) throws(HostError) -> Wire.Packet? {
        while true {
            let now = ContinuousClock.now
            let descriptor = loop == nil ? nil : transport.pollDescriptor
            let result: Received<Wire.Packet>
            do {
                result = try transport.receive(timeout: descriptor == nil ? max(now.duration(to: deadline), .zero) : .zero)
            } catch {
                throw .transport(error, device: device)
            }
            if case let .packet(packet) = result { return packet }
            guard let descriptor, let loop, now < deadline else { return nil }
            try loop.wait(for: descriptor, until: deadline)
        }
    }

    private func passOver(_ event: Wire.Event) throws(HostError) {
        let outcome = try wire.passOver(event)
        if let (kind, detail) = outcome.unsolicited { ignore(kind, detail: detail) }
        if outcome.observed { observedWhileWaiting = true }
        if outcome.keep {
            pending.keep(event) { dropped, event in
                trace?("< dropped the \(dropped) oldest events kept while commands waited")
                for _ in 0..<dropped { ignore(.droppedEvent, detail: wire.describe(event)) }
            }
        }
    }

    private func ignore(_ kind: UnsolicitedInput, detail: @autoclosure () -> String) {
        if let report = unsolicited.count(kind, detail: detail()) {
            trace?("< ignored: \(report)")
            reportUnsolicited?(report)
        }
    }
}

/// Events a command engine keeps for its caller while a command waits for its answer, oldest
/// first, bounded: when a flood fills the queue (`UnsolicitedInputCounter.queueLimit`), the
/// oldest half goes, so memory stays bounded whatever a controller or the kernel sends.
struct PendingEvents<Event> {
    private var events: [Event] = []

    /// Keeps `event`, first letting the oldest half go when the queue is full.
    /// - Parameter dropped: called with how many went, and the event that made room.
    mutating func keep(_ event: Event, dropped: (Int, Event) -> Void) {
        if events.count >= UnsolicitedInputCounter.queueLimit {
            let count = UnsolicitedInputCounter.queueLimit / 2
            events.removeFirst(count)
            dropped(count, event)
        }
        events.append(event)
    }

    /// The oldest event kept, if any.
    mutating func next() -> Event? {
        events.isEmpty ? nil : events.removeFirst()
    }
}
