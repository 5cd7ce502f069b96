// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation
import LinuxSystem
import Synchronization

/// Beacons on the air from Swift concurrency: `BeaconAdvertisement`, supervised as `advertise`
/// keeps its beacons (put back after resets, takeovers, an adapter that comes back), driven
/// from async code. The beacons are a source of the library's one loop (`LibraryLoop`: one
/// thread for every broadcast and report stream of the process, waiting on their devices,
/// timers and wake pipes; nothing polls); each change is a request the loop carries out between
/// its waits, and what happens to the beacons is `events`.
///
///     try await BeaconBroadcast.withBeacons(.init(device: .kernel(index: 0), options: options)) { beacons in
///         try await beacons.update(1, to: .iBeacon(newer))   // beacon 1: the first given
///         for await event in beacons.events { print(event) }   // until the task is cancelled
///     }   // off the air when the body returns, throws or is cancelled
public final class BeaconBroadcast: Sendable {
    /// What happens while the beacons are on the air, as `advertise --json` reports it; ends
    /// when the beacons are off the air for good.
    public let events: AsyncStream<EmitterEvent>
    /// The device in messages: `hci0`, `tcp:127.0.0.1:6402`.
    public let device: String

    private let eventSink: AsyncStream<EmitterEvent>.Continuation
    /// Readable when a request is queued.
    private let requestsReady: WakePipe
    /// Readable when the beacons are to come off the air (`stop`, cancellation).
    private let stopRequested: WakePipe
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var requests: [Request] = []
        /// How the run ended, once it has.
        var ended: Result<Void, HostError>?
        var waitingForEnd: [CheckedContinuation<Void, Never>] = []
        var running: [RunningBeacon] = []
    }

    private enum Change: Sendable {
        case update(BeaconID, Beacon, BeaconParameters?)
        case add(Beacon, BeaconParameters)
        case remove(BeaconID)
    }

    private struct Request: Sendable {
        var change: Change
        var answer: CheckedContinuation<Result<BeaconID, HostError>, Never>
    }

    private init(device: String, running: [RunningBeacon], events: (AsyncStream<EmitterEvent>, AsyncStream<EmitterEvent>.Continuation),
                 requestsReady: WakePipe, stopRequested: WakePipe) {
        (self.events, eventSink) = events
        self.device = device
        self.requestsReady = requestsReady
        self.stopRequested = stopRequested
        state = Mutex(State(running: running))
    }

    /// Opens the device and puts the beacons on the air; they stay there, supervised, until
    /// `stop()`.
    /// - Throws: `HostError` when the device cannot be opened or refuses; nothing is left on
    ///   the air or open then.
    public static func start(_ configuration: BeaconAdvertisement.Configuration) async throws(HostError) -> BeaconBroadcast {
        let pipes: (WakePipe, WakePipe)
        do throws(SystemCallError) {
            pipes = (try WakePipe(), try WakePipe())
        } catch {
            throw .kernel(call: error.call, errno: error.errno, adapter: nil, adapters: [])
        }
        // Made first, so that what the start reports (advertising on) is the first event.
        let events = AsyncStream.makeStream(of: EmitterEvent.self, bufferingPolicy: .bufferingNewest(256))
        let started = await withCheckedContinuation { (started: CheckedContinuation<Result<BeaconBroadcast, HostError>, Never>) in
            do throws(HostError) {
                try LibraryLoop.shared.perform { loop in
                    Self.begin(configuration, on: loop, pipes: pipes, events: events, started: started)
                }
            } catch {
                events.1.finish()
                started.resume(returning: .failure(error))
            }
        }
        return try started.get()
    }

    /// Starts the beacons, runs `body` with them, and takes them off the air when `body`
    /// returns, throws, or its task is cancelled.
    public static func withBeacons<T: Sendable>(_ configuration: BeaconAdvertisement.Configuration,
                                                _ body: (BeaconBroadcast) async throws -> T) async throws -> T {
        let broadcast = try await start(configuration)
        let result: T
        do {
            result = try await withTaskCancellationHandler {
                try await body(broadcast)
            } onCancel: {
                broadcast.stopRequested.wake()
            }
        } catch {
            try? await broadcast.stop()
            throw error
        }
        try await broadcast.stop()
        return result
    }

    /// The beacons on the air now, in order, each with its id (as the last change left them).
    public var running: [RunningBeacon] { state.withLock { $0.running } }

    /// The beacons on the air now, in order (as the last change left them).
    public var beacons: [Beacon] { running.map(\.beacon) }

    /// Each beacon's own interval and TX power, in order (`.run`: the options').
    public var parameters: [BeaconParameters] { running.map(\.parameters) }

    /// Changes beacon `id` in place (new data on its set or instance, no gap on the air);
    /// with `parameters`, its own interval and TX power too (a short gap for it alone).
    public func update(_ id: BeaconID, to beacon: Beacon, parameters: BeaconParameters? = nil) async throws(HostError) {
        _ = try await perform(.update(id, beacon, parameters))
    }

    /// Adds a beacon while advertising, with its own interval and TX power if given.
    /// - Returns: its id.
    @discardableResult
    public func add(_ beacon: Beacon, parameters: BeaconParameters = .run) async throws(HostError) -> BeaconID {
        try await perform(.add(beacon, parameters))
    }

    /// Takes beacon `id` off the air (not the last one: `stop` is how advertising stops).
    public func remove(_ id: BeaconID) async throws(HostError) {
        _ = try await perform(.remove(id))
    }

    /// Takes the beacons off the air and closes the device; returns once they are off.
    /// - Throws: `HostError` when the run ended in a failure (the beacons were taken off
    ///   where the link still allowed it).
    public func stop() async throws(HostError) {
        stopRequested.wake()
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.ended != nil { return true }
                state.waitingForEnd.append(ended)
                return false
            }
            if done { ended.resume() }
        }
        if case let .failure(error)? = state.withLock({ $0.ended }) { throw error }
    }

    /// What a change asked for after the run ended is answered.
    private static let stopped = HostError.refused(Refusal(nil, .notAdvertising))

    private func perform(_ change: Change) async throws(HostError) -> BeaconID {
        let result = await withCheckedContinuation { (answer: CheckedContinuation<Result<BeaconID, HostError>, Never>) in
            let ended = state.withLock { state in
                if state.ended != nil { return true }
                state.requests.append(Request(change: change, answer: answer))
                return false
            }
            if ended {
                answer.resume(returning: .failure(Self.stopped))
            } else {
                requestsReady.wake()
            }
        }
        return try result.get()
    }

    /// On the library's loop: starts the beacons, says so, and adds their run to the loop as a
    /// source, which runs them until `stop` and then answers whatever is left.
    private static func begin(_ configuration: BeaconAdvertisement.Configuration, on loop: EventLoop,
                              pipes: (WakePipe, WakePipe),
                              events: (AsyncStream<EmitterEvent>, AsyncStream<EmitterEvent>.Continuation),
                              started: CheckedContinuation<Result<BeaconBroadcast, HostError>, Never>) {
        let sink: (EmitterEvent) -> Void = { [eventSink = events.1] in eventSink.yield($0) }
        let advertisement: BeaconAdvertisement
        do {
            advertisement = try BeaconAdvertisement.start(configuration, report: sink)
        } catch {
            events.1.finish()
            started.resume(returning: .failure(error))
            return
        }
        let made = BeaconBroadcast(device: advertisement.device, running: advertisement.live.running, events: events,
                                   requestsReady: pipes.0, stopRequested: pipes.1)
        let requests = RequestSource(broadcast: made, live: advertisement.liveBeacons)
        let run = advertisement.runSource(stop: made.stopRequested.descriptor, sources: [requests], report: sink) {
            made.finish($0)
        }
        loop.add(run)
        started.resume(returning: .success(made))
    }

    /// The run has ended: every request still queued, and every `stop` waiting, is answered.
    private func finish(_ outcome: Result<Void, HostError>) {
        let (requests, waiting) = state.withLock { state in
            state.ended = outcome
            defer {
                state.requests.removeAll()
                state.waitingForEnd.removeAll()
            }
            return (state.requests, state.waitingForEnd)
        }
        for request in requests {
            request.answer.resume(returning: .failure(Self.stopped))
        }
        for waiter in waiting { waiter.resume() }
        eventSink.finish()
    }

    /// The requests, served on the run loop's thread between its waits.
    private final class RequestSource: RunLoopSource {
        let broadcast: BeaconBroadcast
        let live: LiveBeacons

        init(broadcast: BeaconBroadcast, live: LiveBeacons) {
            self.broadcast = broadcast
            self.live = live
        }

        var descriptors: [Int32] { [broadcast.requestsReady.descriptor] }

        func serve() {
            broadcast.requestsReady.drain()
            let requests = broadcast.state.withLock { state in
                defer { state.requests.removeAll() }
                return state.requests
            }
            for request in requests {
                let result: Result<BeaconID, HostError>
                do throws(HostError) {
                    switch request.change {
                    case let .update(id, beacon, parameters):
                        try live.update(id, to: beacon, parameters: parameters)
                        result = .success(id)
                    case let .add(beacon, parameters): result = .success(try live.add(beacon, parameters: parameters))
                    case let .remove(id):
                        try live.remove(id)
                        result = .success(id)
                    }
                } catch {
                    result = .failure(error)
                }
                let running = live.running
                broadcast.state.withLock { $0.running = running }
                request.answer.resume(returning: result)
            }
        }
    }
}
