// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// What arrived from a transport, as one protocol's rules (a `CommandWire`) classify it.
package enum Inbound<Event> {
    /// An event the host acts on: an answer, or an event for its caller.
    case event(Event)
    /// Input nobody asked for (`UnsolicitedInput`): counted and reported, never thrown.
    case unsolicited(UnsolicitedInput, detail: String)
    /// Another program's traffic handed to the wire's observer: a waiting `nextEvent` returns
    /// early, so that a watcher acts on it at once.
    case observed
    /// Normal traffic that concerns nobody here (another adapter's events, another
    /// program's answers on a shared kernel socket).
    case skipped
}
