// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import LinuxSystem
import Foundation

/// The Unix socket of `advertise --control PATH`: mode 0600, removed at exit. Served on the
/// emitter's run loop (`RunLoopSource`): each complete line a client sends gets one reply line
/// from `ControlHandler`, in the order sent (a held request holds back its client's later
/// ones); a client that leaves mid-line is forgotten with its partial line and its held
/// requests; nothing a client does stops advertising.
///
/// Bounded before it costs, so that no client (nor a thousand) can exhaust it: at most
/// `maximumClients` connections, at most `maximumClientsPerUser` of them one user's (the
/// kernel's word for who connected, `SO_PEERCRED`: a crowd of one user's sessions cannot lock
/// out another); a newcomer past them takes the place of the client owing its first line
/// longest, else of one answered and quiet for `quietLimit`, never of one whose request is
/// held or whose replies wait. Each is dropped when it sends nothing, or half a line, for
/// `idleLimit`; a line of at
/// most `JSONLines.maximumLine` bytes; at most `maximumHeld` requests of `maximumHeldBytes`
/// held all told; at most `unsentLimit` reply bytes queued for a client past the reply it is
/// taking. Running out of descriptors pauses accepting instead of spinning. What it refused
/// or dropped is counted (`refusals`).
public final class ControlServer: RunLoopSource {
    public let path: String
    /// What answers the requests; until it is attached, connections wait in the backlog.
    private var handler: ControlHandler?
    private let listener: Int32

    /// One connection: its bytes after its last complete line (longer than
    /// `JSONLines.maximumLine`: refused and dropped), and how long it has owed a whole line.
    private struct Client {
        var lines = JSONLines()
        /// Since when it owes a whole line: from its connecting until its first one, and from
        /// the start of a line it has not finished; nil while every line it sent was whole.
        var owingSince: ContinuousClock.Instant?
        /// When it connected or last sent a whole line.
        var lastLine: ContinuousClock.Instant
        /// Whether it has sent a whole line (and been answered): such a client (a box's
        /// long-lived session, a script's) never gives its place to a newcomer.
        var answered = false
        /// Who connected (`SO_PEERCRED`), nil where the kernel did not say.
        var user: UInt32?
        /// Lines read and not yet taken (the held bounds were reached behind its held request):
        /// at most what one serve reads. While there are any, it is not read.
        var deferred: [String] = []
    }

    private var clients: [Int32: Client] = [:]
    /// The most connections served at once: every script and box of a lab at the same moment,
    /// with room; a newcomer past it takes the place of the client that has owed its first line
    /// longest (not one that was answered, nor one whose request is held or whose replies wait).
    public static let maximumClients = 16
    /// The most connections one user holds at once: half of `maximumClients`, so that one
    /// user's sessions (a lab's `beacon` login, say, answered and staying) leave room for another.
    public static let maximumClientsPerUser = 8
    /// How long an answered client may stay quiet and keep its place against a newcomer when
    /// the server is full (it is never dropped for quiet otherwise): a box's session sends its
    /// steps' requests far more often than that.
    public var quietLimit = Duration.seconds(600)
    /// How long a client may owe a whole line (having sent nothing since it connected, or half
    /// a line) before it is dropped: a `control` command sends its line at once; a box's session
    /// sends `status` at once, then waits between whole lines as long as it likes.
    public var idleLimit = Duration.seconds(10)
    /// The most requests held while the beacons are off the air or a command waits, all
    /// clients together, and their bytes: past either, a client with nothing held is answered
    /// `retry` at once, and one with a request held already (whose replies keep their order) is
    /// not read further until its held requests are answered.
    public static let maximumHeld = 64
    public static let maximumHeldBytes = 1 << 18
    /// How many connections one serve accepts (the others wait in the backlog for the next turn).
    static let acceptPerServe = 16
    /// While accepting fails for want of descriptors (EMFILE, ENFILE) and no client can give
    /// one up: the listener is not watched until then.
    private var listenerPausedUntil: ContinuousClock.Instant?

    /// What the server refused or dropped since it opened, by why.
    public struct Refusals: Equatable, Sendable {
        /// Clients dropped for owing a whole line past `idleLimit`.
        public var idle = 0
        /// Clients that gave their place to a newcomer past `maximumClients`.
        public var displaced = 0
        /// Newcomers refused: every client had a request held or replies waiting, or was answered
        /// and not quiet for `quietLimit`.
        public var full = 0
        /// Newcomers refused: their user held `maximumClientsPerUser` already, none of which
        /// could give its place.
        public var perUser = 0
        /// Requests answered `retry` at once past the held bounds.
        public var heldBound = 0
        /// Clients dropped for a line past `JSONLines.maximumLine`, or for leaving replies untaken.
        public var tooMuch = 0
        /// Times accepting failed for want of descriptors.
        public var outOfDescriptors = 0

        /// Each count by its name, as status reports them.
        public var counts: [String: Int] {
            ["idle": idle, "displaced": displaced, "full": full, "perUser": perUser, "heldBound": heldBound,
             "tooMuch": tooMuch, "outOfDescriptors": outOfDescriptors]
        }
    }

    public private(set) var refusals = Refusals()
    /// Reply bytes a client has not taken yet, and since when: sent as it takes them, never
    /// waited for (the loop goes on); a client that takes nothing for `replyLimit`, or leaves
    /// more than `unsentLimit` bytes, is dropped.
    private var unsent: [Int32: (bytes: [UInt8], since: ContinuousClock.Instant)] = [:]
    /// How long a client may leave its replies untaken (1 s unless changed).
    public var replyLimit = Duration.seconds(1)
    /// How many reply bytes a client may leave untaken past the reply it is taking (so that one
    /// reply, however long, always goes out: `list` of the most beacons an emitter carries).
    public static let unsentLimit = 1 << 20
    /// Requests the handler held (`ControlHandler.respond`), oldest first.
    private var held: [(id: Int, fd: Int32, line: String, received: ContinuousClock.Instant)] = []
    private var nextHeldID = 0
    /// Whether a serve is under way: a serve nested in it (a command's wait) reads and answers,
    /// and leaves the held and deferred lines to it.
    private var serving = false

    /// The listening socket (a new client); `descriptors` adds each client's.
    public var descriptor: Int32 { listener }

    /// The listener (unless paused) and every client: the run loop's epoll set watches each
    /// beside the others.
    public var descriptors: [Int32] {
        (listenerPausedUntil == nil ? [listener] : []) + clients.filter { $0.value.deferred.isEmpty }.keys.sorted()
    }

    /// Opens the socket at `path` (before advertising starts, so that a client that waits for
    /// advertising finds it there). A socket file left by a run that ended without removing it
    /// is replaced; one that another emitter still answers on is not.
    /// - Parameters:
    ///   - handler: what answers the requests; or `attach` it later.
    ///   - group: a group whose members may use the socket too (mode 0660); nil: the owner only.
    /// - Throws: `ControlError` naming the path and the reason.
    public init(path: String, group: String? = nil, handler: ControlHandler? = nil) throws(ControlError) {
        self.path = path
        self.handler = handler
        // Shared with a group, the socket is made under a name of its own and renamed into place
        // once it is the group's (a client that finds `path` can use it at once).
        let staging = group == nil ? path : path + ".\(CurrentProcess.id)"
        try Self.checkLength(staging, for: path)
        if let kind = FileSystem.kind(atPath: path) {
            guard kind == .socket else {
                throw ControlError(message: "--control \(path): the path exists and is not a socket: choose another path")
            }
            if (try? LocalSocket.connect(path: path)).map({ $0.close(); return true }) == true {
                throw ControlError(message: "--control \(path): another beacon-emit is listening there: choose another path")
            }
            FileSystem.removeEntry(atPath: path)
        }
        if staging != path { FileSystem.removeEntry(atPath: staging) }
        // Created 0600 from the start (no moment where others could connect).
        let socket: Descriptor
        do {
            socket = try FileSystem.withCreationMask(0o177) { () throws(SystemCallError) in
                try LocalSocket.listen(path: staging, backlog: 64)
            }
        } catch {
            if staging != path { FileSystem.removeEntry(atPath: staging) }
            throw Self.failure(error, path)
        }
        listener = socket.rawValue
        try? FileSystem.setPermissions(0o600, atPath: staging)
        if let group {
            do throws(ControlError) {
                try Self.share(staging, with: group)
                do {
                    try FileSystem.rename(staging, to: path)
                } catch {
                    throw ControlError(message: "--control \(path): cannot put the socket in place (rename from \(staging)): "
                                       + "\(SystemCallError.message(error.errno)) (errno \(error.errno))")
                }
            } catch {
                socket.close()
                FileSystem.removeEntry(atPath: staging)
                throw error
            }
        }
    }

    /// Gives the socket to `group`, read and write for its members (connecting needs write).
    private static func share(_ path: String, with group: String) throws(ControlError) {
        guard let id = FileSystem.groupID(named: group) else {
            throw ControlError(message: "--control-group \(group): no such group: create it (groupadd \(group)) or name another")
        }
        do {
            try FileSystem.setGroup(id, atPath: path)
        } catch {
            throw ControlError(message: "--control-group \(group): cannot give \(path) to the group: "
                               + "\(SystemCallError.message(error.errno)) (errno \(error.errno)): beacon-emit must be a member of "
                               + "\(group) (under systemd: SupplementaryGroups=\(group))")
        }
        try? FileSystem.setPermissions(0o660, atPath: path)
    }

    /// Starts answering with `handler` (the beacons are on the air).
    public func attach(_ handler: ControlHandler) {
        self.handler = handler
        handler.refused = { [weak self] in self?.refusals.counts ?? [:] }
    }

    /// Serves whatever is readable now (the held requests first).
    public func serve() {
        serve(ready: descriptors.filter { Descriptor($0).isReadable })
    }

    public func serve(ready: [Int32]) {
        guard handler != nil else { return }
        dropIdle()
        if let paused = listenerPausedUntil, paused <= .now { listenerPausedUntil = nil }
        for fd in unsent.keys.sorted() { _ = flush(fd) }
        // A serve nested in this one's answers (a command's wait) leaves the held and deferred
        // lines to this one.
        let outermost = !serving
        serving = true
        defer { if outermost { serving = false } }
        if outermost {
            offerHeld()
            offerDeferred()
        }
        for fd in ready {
            if fd == listener { acceptClients() } else if clients[fd] != nil { read(fd) }
        }
    }

    /// Drops the clients that have owed a whole line for `idleLimit`.
    private func dropIdle() {
        let now = ContinuousClock.now
        for (fd, client) in clients {
            guard let since = client.owingSince, since.duration(to: now) >= idleLimit else { continue }
            refusals.idle += 1
            drop(fd)
        }
    }

    /// Clients are served while a command of the emitter waits for its answer: `list` and
    /// `status` are answered, changes are held until the command is over (they send commands).
    public var servesWhileCommandWaits: Bool { true }

    public func serveWhileCommandWaits(ready: [Int32]) {
        handler?.commandWaiting = true
        defer { handler?.commandWaiting = false }
        serve(ready: ready)
    }

    /// At once when the beacons are back, else when the oldest held request runs out of time;
    /// while a client has replies untaken, every 10 ms (to send them as it takes them).
    /// A client owing a line is due when its `idleLimit` ends; a paused listener when its pause does.
    public var due: ContinuousClock.Instant? {
        guard let handler else { return nil }
        let flushing: ContinuousClock.Instant? = unsent.isEmpty ? nil : .now + .milliseconds(10)
        let heldDue: ContinuousClock.Instant? = held.first.map {
            handler.acceptsChanges ? .now : $0.received + ControlHandler.holdLimit
        }
        let idleDue = clients.values.compactMap(\.owingSince).min().map { $0 + idleLimit }
        return [flushing, heldDue, idleDue, listenerPausedUntil].compactMap { $0 }.min()
    }

    /// Reply bytes clients have not taken yet, all told.
    public var unsentBytes: Int { unsent.values.reduce(0) { $0 + $1.bytes.count } }

    /// Offers the held requests again, oldest first; a client's later ones wait behind one still held.
    /// Each answer may run commands whose wait serves the clients again (held requests added,
    /// clients dropped): the requests are found by id after each.
    private func offerHeld() {
        guard let handler else { return }
        var waiting = Set<Int32>()  // clients with an earlier request still held
        for id in held.map(\.id) {
            guard let request = held.first(where: { $0.id == id }) else { continue }
            guard clients[request.fd] != nil else {  // its client left
                held.removeAll { $0.id == id }
                continue
            }
            guard !waiting.contains(request.fd), let reply = handler.respond(to: request.line, received: request.received) else {
                waiting.insert(request.fd)
                continue
            }
            held.removeAll { $0.id == id }
            _ = respond(request.fd, reply)
        }
    }

    /// What became of a line.
    private enum Answer {
        /// Answered, or held.
        case taken
        /// Not taken yet: the held bounds are reached and the client has a request held (its
        /// replies keep their order). It waits with the client's later lines, unread meanwhile.
        case deferred
        /// The client was dropped.
        case dropped
    }

    /// Answers one line now, or holds it (behind its client's held requests) within the held
    /// bounds; past them, a client with nothing held is answered `retry` at once.
    private func answer(_ fd: Int32, _ line: String) -> Answer {
        let received = ContinuousClock.now
        let behind = held.contains(where: { $0.fd == fd })
        if !behind, let reply = handler?.respond(to: line, received: received) { return respond(fd, reply) ? .taken : .dropped }
        guard held.count < Self.maximumHeld, heldBytes + line.utf8.count <= Self.maximumHeldBytes else {
            guard !behind else { return .deferred }
            refusals.heldBound += 1
            return respond(fd, ControlReply.refusal("\(held.count) requests (\(heldBytes / 1024) KiB) are held already, the "
                                                    + "most this emitter holds while its beacons are off the air or a command "
                                                    + "waits: nothing changed: send the request again", retry: true).line)
                ? .taken : .dropped
        }
        held.append((nextHeldID, fd, line, received))
        nextHeldID += 1
        return .taken
    }

    /// Answers `fd`'s lines (its deferred ones first) in order. They wait in the client until
    /// taken, so that a serve nested in an answer's command does not read the client meanwhile
    /// (its next lines would be answered first); from the first one deferred on, they wait
    /// there, the client unread, until the held requests are answered.
    /// - Returns: false when the client was dropped.
    private func answer(_ fd: Int32, lines: [String]) -> Bool {
        clients[fd]?.deferred += lines
        while let line = clients[fd]?.deferred.first {
            switch answer(fd, line) {
            case .taken: clients[fd]?.deferred.removeFirst()
            case .dropped: return false
            case .deferred: return true
            }
        }
        return clients[fd] != nil
    }

    /// Offers the clients' deferred lines again, now that held requests may have been answered.
    private func offerDeferred() {
        for fd in clients.keys.sorted() where clients[fd]?.deferred.isEmpty == false {
            _ = answer(fd, lines: [])
        }
    }

    /// The bytes of the held requests' lines (at most `maximumHeld` to add).
    private var heldBytes: Int { held.reduce(0) { $0 + $1.line.utf8.count } }

    /// Closes every connection and the socket, and removes the socket file.
    public func close() {
        for fd in clients.keys { Descriptor(fd).close() }
        clients.removeAll()
        unsent.removeAll()
        Descriptor(listener).close()
        FileSystem.removeEntry(atPath: path)
    }

    /// Accepts up to `acceptPerServe` waiting connections, reading each at once (a `control`
    /// command has sent its line by then). Past `maximumClients`, a newcomer takes a quiet
    /// client's place, or is refused. Out of descriptors, a client that owes a line or is quiet
    /// gives its own up; with none to give, the listener rests for 100 ms (it stays readable:
    /// watching it meanwhile would spin).
    private func acceptClients() {
        for _ in 0..<Self.acceptPerServe {
            let accepted: Descriptor?
            do {
                accepted = try Descriptor(listener).accept(name: "accept(\(path))")
            } catch {
                if error.errno == EMFILE || error.errno == ENFILE {
                    refusals.outOfDescriptors += 1
                    if !displaceOne() { listenerPausedUntil = .now + .milliseconds(100) }
                }
                return
            }
            guard let client = accepted else { return }
            let user = client.peerUserID
            if let user, clients.values.count(where: { $0.user == user }) >= Self.maximumClientsPerUser
                && !displaceOne(of: user) {
                refusals.perUser += 1
                _ = try? client.sendAll(JSONLines.frame(ControlReply.refusal(
                    "\(Self.maximumClientsPerUser) clients of \(FileSystem.userName(user)) are connected, the most one user "
                    + "may hold, each answered or with a request in hand: close one, or try again", retry: true).line))
                client.close()
                continue
            }
            if clients.count >= Self.maximumClients && !displaceOne() {
                refusals.full += 1
                _ = try? client.sendAll(JSONLines.frame(ControlReply.refusal(
                    "\(Self.maximumClients) clients are connected, each answered or with a request in hand: try again",
                    retry: true).line))
                client.close()
                continue
            }
            clients[client.rawValue] = Client(owingSince: .now, lastLine: .now, user: user)
            read(client.rawValue)
        }
    }

    /// Drops the client (of `user`, where given) that has owed its first whole line longest, or
    /// else the one answered and quiet for `quietLimit` longest: never one answered and not that
    /// quiet (a box's session or a script, waiting to send the next: a crowd of newcomers must
    /// not evict it), nor one with a request held or replies waiting.
    /// - Returns: false when no client may be dropped (the newcomer is refused instead).
    private func displaceOne(of user: UInt32? = nil) -> Bool {
        let now = ContinuousClock.now
        let free = clients.filter { fd, client in
            (user == nil || client.user == user) && unsent[fd] == nil && !held.contains { $0.fd == fd }
        }
        let owing = free.filter { !$0.value.answered }.compactMap { fd, client in client.owingSince.map { (fd, $0) } }
        let quiet = free.filter { $0.value.answered && $0.value.lastLine.duration(to: now) >= quietLimit }
            .map { ($0.key, $0.value.lastLine) }
        guard let fd = (owing.min { $0.1 < $1.1 } ?? quiet.min { $0.1 < $1.1 })?.0 else { return false }
        refusals.displaced += 1
        drop(fd)
        return true
    }

    /// How much a client's input is read in one serve: a client that sends without pause is
    /// served in turns with the loop's other work (the rest stays readable for the next turn).
    package static let readPerServe = 4 * 4096

    private func read(_ fd: Int32) {
        guard clients[fd]?.deferred.isEmpty == true else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<(Self.readPerServe / chunk.count) {
            let count: Int
            switch (try? Descriptor(fd).read(into: &chunk)) ?? .done(0) {
            case .wouldBlock: return
            case let .done(read): count = read
            }
            guard count > 0 else {
                drop(fd)  // closed (or failed): a partial line goes with it
                return
            }
            guard var client = clients[fd] else { return }
            let lines = client.lines.append(chunk[..<count])
            let now = ContinuousClock.now
            if !lines.isEmpty {
                client.lastLine = now
                client.owingSince = nil
                client.answered = true
            }
            if client.lines.hasPartialLine && client.owingSince == nil { client.owingSince = now }
            clients[fd] = client
            guard answer(fd, lines: lines) else { return }
            if clients[fd]?.deferred.isEmpty == false { return }  // read again once they are taken
            if clients[fd]?.lines.overflowed == true {
                refusals.tooMuch += 1
                _ = respond(fd, #"{"error":"request line longer than 65536 bytes","ok":false}"#)
                drop(fd)
                return
            }
        }
    }

    /// Queues a reply line and sends what the client takes now, without waiting for it.
    /// - Returns: false when the client was dropped (gone, or too far behind).
    private func respond(_ fd: Int32, _ reply: String) -> Bool {
        let frame = JSONLines.frame(reply)
        if var queued = unsent[fd] {
            guard queued.bytes.count + frame.count <= Self.unsentLimit else {
                refusals.tooMuch += 1
                drop(fd)
                return false
            }
            queued.bytes += frame
            unsent[fd] = queued
        } else {
            unsent[fd] = (frame, .now)
        }
        return flush(fd)
    }

    /// Sends what the client takes of its unsent replies now; drops it when it is gone, or has
    /// taken nothing for `replyLimit`.
    /// - Returns: false when the client was dropped.
    private func flush(_ fd: Int32) -> Bool {
        guard var queued = unsent[fd] else { return true }
        let client = Descriptor(fd)
        var offset = 0
        while offset < queued.bytes.count {
            let sent = queued.bytes[offset...].withUnsafeBytes { raw in Result { () throws(SystemCallError) in try client.send(raw) } }
            switch sent {
            case let .success(.done(count)) where count > 0:
                offset += count
                queued.since = .now
            case .success(.wouldBlock):
                queued.bytes.removeFirst(offset)
                guard ContinuousClock.now - queued.since < replyLimit else {
                    refusals.tooMuch += 1
                    drop(fd)
                    return false
                }
                unsent[fd] = queued
                return true
            default:
                drop(fd)
                return false
            }
        }
        unsent[fd] = nil
        return true
    }

    private func drop(_ fd: Int32) {
        clients[fd] = nil
        unsent[fd] = nil
        held.removeAll { $0.fd == fd }
        Descriptor(fd).close()
    }

    /// Refuses a socket path the socket cannot be named by (empty, or too long).
    /// - Parameter named: the path the user gave, when `path` is longer (a staging name beside it).
    static func checkLength(_ path: String, for named: String? = nil) throws(ControlError) {
        let count = path.utf8.count
        let most = LocalSocket.maximumPathLength
        guard count == 0 || count > most else { return }
        let given = named ?? path
        let room = most - (count - given.utf8.count)
        throw ControlError(message: "--control \(given): a socket path must be 1 to \(room) bytes long"
                           + (room < most ? " with --control-group" : ""))
    }

    /// How long a client waits to connect while the server's backlog is full (a server that
    /// has stopped serving, or is flooded).
    public static let connectTimeout = Duration.seconds(5)

    /// A connected socket to `path`.
    static func connect(_ path: String) throws(ControlError) -> Int32 {
        try checkLength(path)
        do {
            return try LocalSocket.connect(path: path, timeout: connectTimeout).rawValue
        } catch where error.errno == EAGAIN {
            throw ControlError(message: "\(path): connect: the emitter took no new connection within \(connectTimeout) "
                               + "(its queue is full: it is stopped, hung, or flooded with connections)")
        } catch {
            throw failure(error, path)
        }
    }

    /// What a failed call on the socket at `path` means, and what to do.
    static func failure(_ error: SystemCallError, _ path: String) -> ControlError {
        let (call, code) = (error.call, error.errno)
        let hint = code == ENOENT || code == ECONNREFUSED ? ": is beacon-emit running with --control \(path)?"
            : code == EACCES ? ": the socket is its owner's only (and its --control-group's): run as that user, or as a member of that group" : ""
        return ControlError(message: "\(path): \(call): \(SystemCallError.message(code)) (errno \(code))\(hint)")
    }
}

extension ControlClient {
    /// Sends `request` like `send`, again after a short pause while the reply says
    /// `"retry": true` (the beacons were off the air and the request changed nothing), for at
    /// most `retryingFor`; the last reply is returned either way.
    /// - Parameter retrying: called with each `retry` reply before the next attempt.
    public static func request(_ request: String, to path: String, retryingFor: Duration = .seconds(30),
                               retrying: (String) -> Void = { _ in }) throws(ControlError) -> String {
        let deadline = ContinuousClock.now + retryingFor
        while true {
            let reply = try send(request, to: path)
            guard asksToRetry(reply), ContinuousClock.now < deadline else { return reply }
            retrying(reply)
            _ = Poll.pause(.milliseconds(200), interrupt: nil)
        }
    }

    /// Whether a reply is the documented `retry` answer.
    static func asksToRetry(_ reply: String) -> Bool {
        ControlReply(line: reply)?.retry == true
    }
}
