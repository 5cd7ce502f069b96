// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An HTTP endpoint that answers `GET /metrics` with `body()` in Prometheus' text format, served
/// from the emitter's own loop (a `RunLoopSource`: no thread, no wait). One request per
/// connection, answered and closed; anything else than `GET /metrics` gets a 404, a request
/// that is no HTTP a 400.
///
/// Bounded like the control socket: at most `maximumClients` connections (a newcomer past it
/// takes the oldest's place); a client that has not sent its whole request head
/// (`maximumRequest` bytes at most) within `requestLimit` is dropped, as is one that takes nothing
/// of its answer for `replyLimit` or has not taken all of it within `wholeReplyLimit`; a client's
/// answer is written as the socket takes it, never waited for. What it answered and dropped is
/// counted (`counts`). The metrics are rendered at most once per `freshFor` (a second) while
/// nothing noted changes (`changes`), whatever the rate of scrapes.
public final class MetricsEndpoint: RunLoopSource {
    public let address: MetricsAddress
    /// The port it listens on (the one the kernel chose for port 0).
    public let port: UInt16
    private var listener: Descriptor?
    private let body: () -> [UInt8]

    private struct Client {
        var request: [UInt8] = []
        var reply: [UInt8] = []
        var sent = 0
        let connected: ContinuousClock.Instant
        var answeredAt: ContinuousClock.Instant?
        /// When the socket last took some of the answer.
        var lastTaken: ContinuousClock.Instant?
    }

    private var clients: [Int32: Client] = [:]
    public static let maximumClients = 8
    /// The most bytes of a request head (request line and headers) read.
    public static let maximumRequest = 8192
    /// How long a client has to send its request head.
    public var requestLimit = Duration.seconds(2)
    /// How long a client may take nothing of its answer (a scraper that reads, however slowly
    /// the machine runs, is never cut off by it).
    public var replyLimit = Duration.seconds(2)
    /// How long a client has to take all of its answer (one that reads a byte now and then holds
    /// a place no longer than this).
    public var wholeReplyLimit = Duration.seconds(30)
    private var listenerPausedUntil: ContinuousClock.Instant?
    /// How long one rendering of the metrics answers scrapes: a scraper that asks a thousand
    /// times a second costs the emitter one rendering a second, not a thousand.
    public var freshFor = Duration.seconds(1)
    /// A count that moves whenever what the metrics say changes in a way a scraper must see at
    /// once (an event, a control request): a rendering is reused only while it stands still.
    public var changes: (() -> Int)?
    private var rendered: (at: ContinuousClock.Instant, changes: Int?, bytes: [UInt8])?

    /// What the endpoint answered, refused or dropped since it opened.
    public struct Counts: Equatable, Sendable {
        /// `GET /metrics` answered.
        public var scrapes = 0
        /// Requests answered 404 (another path or method) or 400 (no HTTP).
        public var notFound = 0
        public var badRequests = 0
        /// Clients dropped for not sending a whole request head in time.
        public var idle = 0
        /// Clients dropped for a request head past `maximumRequest`.
        public var tooMuch = 0
        /// Clients dropped for taking nothing of their answer for `replyLimit`, or not all of it
        /// within `wholeReplyLimit`.
        public var slow = 0
        /// Clients that gave their place to a newcomer past `maximumClients`.
        public var displaced = 0
        /// Times accepting failed for want of descriptors.
        public var outOfDescriptors = 0

        /// Each count by its name in snake case (the `outcome` label of
        /// `beacon_emit_metrics_requests_total`).
        public var byOutcome: [String: Int] {
            ["scrape": scrapes, "not_found": notFound, "bad_request": badRequests, "idle": idle, "too_much": tooMuch,
             "slow": slow, "displaced": displaced, "out_of_descriptors": outOfDescriptors]
        }
    }

    public private(set) var counts = Counts()

    /// Opens the endpoint (before anything is sent: a port in use is an error then).
    /// - Parameter body: the metrics, read at each scrape.
    /// - Throws: `MetricsError` naming the address and the reason.
    public init(address: MetricsAddress, body: @escaping () -> [UInt8]) throws(MetricsError) {
        self.address = address
        self.body = body
        let socket: Descriptor
        do {
            socket = try TCPConnection.listen(host: address.host, port: address.port, backlog: 16, name: "\(address)")
        } catch {
            let inUse = error.errno == EADDRINUSE
            throw MetricsError(description: "--metrics \(address): " + (inUse
                ? "the port is in use (another program, or another emitter, listens there): choose another port"
                : "cannot listen there: \(error)"), portInUse: inUse)
        }
        listener = socket
        port = TCPConnection.localPort(of: socket) ?? address.port
    }

    public var descriptors: [Int32] {
        guard let listener else { return [] }
        return (listenerPausedUntil == nil ? [listener.rawValue] : [])
            + clients.filter { $0.value.answeredAt == nil }.keys.sorted()
    }

    /// The next deadline (a client's), or soon while an answer is partly sent (the socket
    /// takes more as the client reads) or the listener rests.
    public var due: ContinuousClock.Instant? {
        var times = clients.values.map { $0.answeredAt.map { _ in ContinuousClock.now + .milliseconds(20) } ?? $0.connected + requestLimit }
        if let paused = listenerPausedUntil { times.append(paused) }
        return times.min()
    }

    /// Scrapes are answered while a command of the emitter waits: they send none.
    public var servesWhileCommandWaits: Bool { true }

    public func serve() {
        serve(ready: descriptors.filter { Descriptor($0).isReadable })
    }

    public func serve(ready: [Int32]) {
        guard let listener else { return }
        let now = ContinuousClock.now
        if let paused = listenerPausedUntil, paused <= now { listenerPausedUntil = nil }
        for (fd, client) in clients {
            if let answered = client.answeredAt {
                // Not all sent, so still a client (`flush` drops one it is done with).
                guard !flush(fd) else { continue }
                let taken = clients[fd]?.lastTaken ?? answered
                if taken.duration(to: now) >= replyLimit || answered.duration(to: now) >= wholeReplyLimit {
                    counts.slow += 1
                    drop(fd)
                }
            } else if client.connected.duration(to: now) >= requestLimit {
                counts.idle += 1
                drop(fd)
            }
        }
        for fd in ready {
            if fd == listener.rawValue { accept() } else if clients[fd]?.answeredAt == nil { read(fd) }
        }
    }

    private func accept() {
        guard let listener else { return }
        for _ in 0..<Self.maximumClients {
            let accepted: Descriptor?
            do {
                accepted = try listener.accept(name: "accept(\(address))")
            } catch {
                if error.errno == EMFILE || error.errno == ENFILE {
                    counts.outOfDescriptors += 1
                    if !displaceOldest() { listenerPausedUntil = .now + .milliseconds(100) }
                }
                return
            }
            guard let client = accepted else { return }
            if clients.count >= Self.maximumClients { _ = displaceOldest() }
            clients[client.rawValue] = Client(connected: .now)
            read(client.rawValue)
        }
    }

    private func displaceOldest() -> Bool {
        guard let oldest = clients.min(by: { $0.value.connected < $1.value.connected })?.key else { return false }
        counts.displaced += 1
        drop(oldest)
        return true
    }

    private func read(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 2048)
        while var client = clients[fd] {
            let count: Int
            switch (try? Descriptor(fd).read(into: &chunk)) ?? .done(0) {
            case .wouldBlock: return
            case let .done(read): count = read
            }
            guard count > 0 else {
                drop(fd)
                return
            }
            client.request += chunk[..<count]
            clients[fd] = client
            if let head = HTTPRequestHead(client.request) {
                answer(fd, head)
                return
            }
            if client.request.count > Self.maximumRequest {
                counts.tooMuch += 1
                drop(fd)
                return
            }
        }
    }

    private func answer(_ fd: Int32, _ head: HTTPRequestHead) {
        let status: String
        var content: [UInt8]
        var type = "text/plain; charset=utf-8"
        switch head {
        case .request(method: "GET", path: "/metrics"):
            counts.scrapes += 1
            status = "200 OK"
            let now = ContinuousClock.now
            let changed = changes?()
            if let rendered, rendered.at.duration(to: now) < freshFor, rendered.changes == changed {
                content = rendered.bytes
            } else {
                content = body()
                rendered = (now, changed, content)
            }
            type = "text/plain; version=0.0.4; charset=utf-8"
        case .request:
            counts.notFound += 1
            status = "404 Not Found"
            content = Array("Not found: this endpoint answers GET /metrics\n".utf8)
        case .malformed:
            counts.badRequests += 1
            status = "400 Bad Request"
            content = Array("Bad request: this endpoint answers GET /metrics\n".utf8)
        }
        let header = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(content.count)\r\nConnection: close\r\n\r\n"
        content.insert(contentsOf: Array(header.utf8), at: 0)
        clients[fd]?.reply = content
        clients[fd]?.answeredAt = .now
        _ = flush(fd)
    }

    /// Sends what the client takes now of its answer; closes it once all is sent.
    /// - Returns: true when the answer is all sent (or the client gone).
    private func flush(_ fd: Int32) -> Bool {
        guard var client = clients[fd] else { return true }
        while client.sent < client.reply.count {
            let result = client.reply[client.sent...].withUnsafeBytes { raw in
                Result { () throws(SystemCallError) in try Descriptor(fd).send(raw) }
            }
            switch result {
            case let .success(.done(count)) where count > 0:
                client.sent += count
                client.lastTaken = .now
            case .success(.wouldBlock):
                clients[fd] = client
                return false
            default:
                drop(fd)
                return true
            }
        }
        drop(fd)
        return true
    }

    private func drop(_ fd: Int32) {
        clients[fd] = nil
        Descriptor(fd).close()
    }

    /// Closes the listener and every client.
    public func close() {
        for fd in clients.keys { drop(fd) }
        listener?.close()
        listener = nil
    }

    deinit { close() }
}

