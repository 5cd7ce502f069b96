// SPDX-License-Identifier: GPL-2.0-or-later

/// Events a command engine keeps for its caller while a command waits for its answer, oldest
/// first, bounded: when a flood fills the queue (`UnsolicitedInputCounter.queueLimit`), the
/// oldest half goes, so memory stays bounded whatever a controller or the kernel sends. One
/// queue, one rule, for the HCI and the management command engines alike.
struct PendingEvents<Event> {
    private var events: [Event] = []

    var isEmpty: Bool { events.isEmpty }

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

extension PacketTransport {
    /// The next packet before `deadline`; nil when it passes or `interrupt` is readable. A
    /// deadline already past still reads what is there.
    /// - Throws: `HostError.transport` naming `device` when the transport fails.
    func nextPacket(until deadline: ContinuousClock.Instant, interrupt: Int32?,
                    device: String) throws(HostError) -> Packet? {
        let result: Received<Packet>
        do {
            result = try receive(timeout: max(ContinuousClock.now.duration(to: deadline), .zero), interrupt: interrupt)
        } catch {
            throw .transport(error, device: device)
        }
        guard case let .packet(packet) = result else { return nil }
        return packet
    }
}
