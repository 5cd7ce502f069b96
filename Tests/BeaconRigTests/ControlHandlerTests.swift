// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconHost
import BeaconRig
import BeaconReports
import Foundation
import Testing

/// A running emitter's beacons, faked: what the control protocol changed, and a switch to
/// make the next change fail as a controller refusal would.
final class FakeLive: LiveAdvertising {
    /// Ids as the core gives them: 1, 2, ... in order, each added one the next, never reused.
    private(set) var running: [RunningBeacon]
    private var nextID: Int
    var refuseNext = false
    /// The next change is cut short by this disruption (and changes nothing).
    var interruptNext: Disruption?
    private(set) var changes = 0

    init(_ beacons: [Beacon]) {
        running = beacons.indices.map { RunningBeacon(id: BeaconID($0 + 1), beacon: beacons[$0]) }
        nextID = beacons.count + 1
    }

    private func check() throws(HostError) {
        if let disruption = interruptNext {
            interruptNext = nil
            throw .interrupted(by: disruption, .hardwareError(code: 0x2A))
        }
        if refuseNext {
            refuseNext = false
            throw .controllerRefused(opcode: .leSetExtendedAdvertisingData, status: .commandDisallowed, context: nil)
        }
    }

    private func index(_ id: BeaconID) throws(HostError) -> Int {
        guard let index = running.firstIndex(where: { $0.id == id }) else { throw .unsupported("no beacon \(id)") }
        return index
    }

    func update(_ id: BeaconID, to beacon: Beacon, parameters own: BeaconParameters?) throws(HostError) {
        let index = try index(id)
        try check()
        running[index].beacon = beacon
        if let own { running[index].parameters = own }
        changes += 1
    }

    func add(_ beacon: Beacon, parameters own: BeaconParameters) throws(HostError) -> BeaconID {
        try check()
        let id = BeaconID(nextID)
        running.append(RunningBeacon(id: id, beacon: beacon, parameters: own))
        nextID += 1
        changes += 1
        return id
    }

    func show(_ id: BeaconID, _ frame: Beacon) throws(HostError) {}

    func renewAddress(_ id: BeaconID, with content: Beacon?) throws(HostError) -> BluetoothAddress {
        throw .unsupported("no address of its own")
    }

    func remove(_ id: BeaconID) throws(HostError) {
        let index = try index(id)
        guard running.count > 1 else { throw .unsupported("the last one") }
        try check()
        running.remove(at: index)
        changes += 1
    }
}

/// The control protocol, request by request: each reply, and that a refused request changes nothing.
@Suite struct ControlHandlerTests {
    static func beacon(_ minor: UInt16) -> Beacon {
        .iBeacon(IBeacon(proximityUUID: UUID(uuidString: lobbyUUID)!, major: 1, minor: minor))
    }

    /// The fields the tests' factory reads, for an iBeacon.
    static func fields(_ beacon: Beacon) -> [String: String] {
        guard case let .iBeacon(beacon) = beacon else { return [:] }
        return ["uuid": beacon.proximityUUID.uuidString, "major": "\(beacon.major)", "minor": "\(beacon.minor)"]
    }

    let live = FakeLive([beacon(1), beacon(2)])
    var handler: ControlHandler { ControlHandler(session: live, makeBeacon: testBeacon, fieldsOf: Self.fields) }

    func reply(_ handler: ControlHandler, _ line: String) throws -> [String: Any] {
        let text = handler.reply(to: line)
        #expect(!text.contains("\n"))
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A beacon of its own extended PDUs (`pdu=extended`) with data over 31 bytes, added over
    /// the socket to a run of legacy PDUs on the real core: accepted, its set's parameters
    /// without the legacy bit; the same data without it is refused, and nothing was sent for it.
    @Test func anExtendedBeaconAddedOverTheSocketJoinsALegacyRun() throws {
        let radio = SetsController(sets: 4)
        let advertiser = try Emitter(controller: HCIController(transport: radio), ownsController: true) { _ in }
            .start(options: AdvertisingOptions(beacons: [Self.beacon(1)]))
        let live = HCISession(advertiser: advertiser, kernelIndex: nil, ownsController: true, reconnect: nil).live
        let handler = ControlHandler(session: live)
        let long = "name=x,manufacturer-data=0x0059:" + String(repeating: "AB", count: 35)
        var sent = radio.sent.count
        let refused = handler.reply(to: #"{"command":"add","beacon":"\#(long)"}"#)
        #expect(refused.contains(#""ok":false"#) && refused.contains("legacy advertising carries at most 31 bytes; --extended-pdu, or pdu=extended"), "\(refused)")
        #expect(radio.sent.count == sent, "nothing sent for a refused add")
        sent = radio.sent.count
        let added = handler.reply(to: #"{"command":"add","beacon":"\#(long),pdu=extended"}"#)
        #expect(added.contains(#""ok":true"#), "\(added)")
        let parameters = radio.sent[sent...].filter { $0.opcode == 0x2036 }.map(\.parameters)
        #expect(parameters.count == 1 && parameters.first.map { $0[1] & 0x10 == 0 } == true, "extended PDUs: no legacy bit")
        #expect(live.running.count == 2 && live.running[1].parameters.pdu == .extended)
    }

    @Test func listShowsEachBeaconWithItsIdAndData() throws {
        let list = try reply(handler, #"{"command":"list"}"#)
        #expect(list["ok"] as? Bool == true)
        let beacons = try #require(list["beacons"] as? [[String: Any]])
        #expect(beacons.map { $0["id"] as? Int } == [1, 2])
        #expect(beacons.map { $0["minor"] as? Int } == [1, 2])
        #expect(beacons.first?["data"] as? String == "0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200010001C5")
    }

    @Test func idsStayWithTheirBeacons() throws {
        let handler = handler
        let added = try reply(handler, #"{"command":"add","beacon":{"uuid":"\#(lobbyUUID)","major":1,"minor":3}}"#)
        #expect(added["ok"] as? Bool == true && added["id"] as? Int == 3, "\(added)")
        #expect(try reply(handler, #"{"command":"remove","id":1}"#)["ok"] as? Bool == true)
        let updated = try reply(handler, #"{"command":"update","id":3,"fields":{"minor":9}}"#)
        #expect(updated["ok"] as? Bool == true, "\(updated)")
        #expect((updated["beacon"] as? [String: Any])?["minor"] as? Int == 9)
        #expect(live.beacons == [Self.beacon(2), Self.beacon(9)])
        let list = try reply(handler, #"{"command":"list"}"#)
        #expect((list["beacons"] as? [[String: Any]])?.map { $0["id"] as? Int } == [2, 3])
        // A spec string works as well as an object.
        let spec = try reply(handler, #"{"command":"add","beacon":"uuid=\#(lobbyUUID),major=1,minor=4"}"#)
        #expect(spec["id"] as? Int == 4, "\(spec)")
    }

    /// No EID oracle: an Eddystone-EID beacon's clock, key and rotation exponent cannot be
    /// changed over the socket (moving the clock would answer identifiers to come without the
    /// key); other fields can, and neither the reply nor `list` carries the key.
    @Test func anEIDBeaconsClockAndKeyAreNotForUpdates() throws {
        let key = "553C66DA1485E9F78849DE00F2CB178E"
        let eid = try BeaconDescription(specification: "type=eddystone-eid,identity-key=\(key),rotation-exponent=12,clock=4096").beacon()
        let live = FakeLive([eid])
        let handler = ControlHandler(session: live, makeBeacon: BeaconDescription.beacon(fromFields:parameters:))
        for fields in [#"{"clock":1000000}"#, #"{"identity-key":"000102030405060708090A0B0C0D0E0F"}"#,
                       #"{"identityKeyFile":"/etc/k"}"#, #"{"rotationExponent":3,"measuredPower":-60}"#] {
            let text = handler.reply(to: #"{"command":"update","id":1,"fields":\#(fields)}"#)
            #expect(text.contains(#""ok":false"#) && text.contains("of eddystone-eid beacon 1 cannot change while it runs")
                    && text.contains("remove it and add it again"), "\(text)")
        }
        #expect(live.changes == 0 && live.beacons == [eid])
        let moved = handler.reply(to: #"{"command":"update","id":1,"fields":{"measuredPower":-60}}"#)
        #expect(moved.contains(#""ok":true"#) && moved.contains(#""eid":"8F56056BCE87688D""#), "its current EID: \(moved)")
        let list = handler.reply(to: #"{"command":"list"}"#)
        for text in [moved, list] { #expect(!text.contains(key.prefix(8)) && !text.contains(key.suffix(8)), "\(text)") }
    }

    /// No EID oracle through `add` either: a beacon added over the socket cannot name a key
    /// file (the emitter's own, or its credentials', would be read with the emitter's rights and
    /// its identifiers answered for any clock; a FIFO would hold the loop), whatever the key's
    /// spelling; nothing is read or added. A key of the client's own, inline, is its business.
    @Test func aClientCannotNameAKeyFile() throws {
        let live = FakeLive([Self.beacon(1)])
        let handler = ControlHandler(session: live, makeBeacon: BeaconDescription.beacon(fromFields:parameters:))
        for spelling in ["identity-key-file", "identityKeyFile", "identity_key_file"] {
            let text = handler.reply(to: #"{"command":"add","beacon":"type=eddystone-eid,\#(spelling)=/nonexistent/k,clock=1000000"}"#)
            #expect(text.contains(#""ok":false"#) && text.contains(#"\"\#(spelling)\" names a file, which the emitter would read "#
                                                                   + "with its own rights"), "\(text)")
            #expect(!text.contains("No such file"), "refused before the file was looked at: \(text)")
        }
        #expect(live.changes == 0 && live.running.count == 1)
        let own = handler.reply(to: #"{"command":"add","beacon":"type=eddystone-eid,identity-key=553C66DA1485E9F78849DE00F2CB178E,clock=7"}"#)
        #expect(own.contains(#""ok":true"#), "\(own)")
    }

    /// A number written as a string in a request's JSON is refused as a scenario or
    /// configuration file refuses it, and nothing changes.
    @Test func aNumberWrittenAsAStringIsRefused() throws {
        let handler = handler
        let added = try reply(handler, #"{"command":"add","beacon":{"uuid":"\#(lobbyUUID)","major":"1","minor":3}}"#)
        #expect(added["ok"] as? Bool == false)
        #expect((added["error"] as? String)?.contains(#"add's "beacon": "major" must be a number from 0 to 65535, got the string "1""#) == true,
                "\(added)")
        let updated = try reply(handler, #"{"command":"update","id":1,"fields":{"minor":"9"}}"#)
        #expect(updated["ok"] as? Bool == false, "\(updated)")
        #expect(live.beacons == [Self.beacon(1), Self.beacon(2)])
        #expect(live.changes == 0)
    }

    /// A beacon's own interval and TX power: given with add, shown by list, changed by update
    /// alone or with data; an address of its own and its rotation too.
    @Test func aBeaconsOwnParametersComeAndChangeThroughRequests() throws {
        let handler = handler
        let added = try reply(handler, #"{"command":"add","beacon":{"uuid":"\#(lobbyUUID)","major":1,"minor":3,"interval":500,"txPower":-8}}"#)
        #expect(added["ok"] as? Bool == true, "\(added)")
        #expect(live.parameters == [.run, .run, BeaconParameters(intervalUnits: 800, txPower: -8)])
        #expect(live.beacons.last == Self.beacon(3))
        let listed = try #require(try reply(handler, #"{"command":"list"}"#)["beacons"] as? [[String: Any]])
        #expect(listed.map { $0["interval"] as? Double } == [nil, nil, 500])
        #expect(listed.map { $0["txPower"] as? Int } == [nil, nil, -8])
        // The interval alone: the data stays, the TX power too.
        #expect(try reply(handler, #"{"command":"update","id":3,"fields":{"interval":200}}"#)["ok"] as? Bool == true)
        #expect(live.parameters[2] == BeaconParameters(intervalUnits: 320, txPower: -8))
        #expect(live.beacons[2] == Self.beacon(3))
        // Data and a parameter in one request.
        #expect(try reply(handler, #"{"command":"update","id":1,"fields":"minor=7,tx-power=4"}"#)["ok"] as? Bool == true)
        #expect(live.beacons[0] == Self.beacon(7) && live.parameters[0] == BeaconParameters(txPower: 4))
        // An address of its own, then its rotation: the made-up kind kept.
        #expect(try reply(handler, #"{"command":"update","id":2,"fields":{"address":"static"}}"#)["ok"] as? Bool == true)
        #expect(try reply(handler, #"{"command":"update","id":2,"fields":{"rotateAddress":30}}"#)["ok"] as? Bool == true)
        #expect(live.parameters[1] == BeaconParameters(address: .generatedStaticRandom, addressRotation: 30))
        let shown = try #require((try reply(handler, #"{"command":"list"}"#)["beacons"] as? [[String: Any]])?[1])
        #expect(shown["address"] as? String == "static" && shown["rotateAddress"] as? Double == 30, "\(shown)")
        // Its PHY and connectability, kept with the rest; `list` shows them.
        #expect(try reply(handler, #"{"command":"update","id":2,"fields":{"phy":"coded","connectable":true}}"#)["ok"] as? Bool == true)
        #expect(live.parameters[1] == BeaconParameters(address: .generatedStaticRandom, addressRotation: 30, phy: .coded,
                                                       connectable: true))
        let coded = try #require((try reply(handler, #"{"command":"list"}"#)["beacons"] as? [[String: Any]])?[1])
        #expect(coded["phy"] as? String == "coded" && coded["connectable"] as? Bool == true, "\(coded)")
        let changes = live.changes
        for refused in [#"{"command":"update","id":1,"fields":{"address":"nowhere"}}"#,
                        #"{"command":"update","id":2,"fields":{"address":"C0:11:22:33:44:55"}}"#,
                        #"{"command":"update","id":1,"fields":{"interval":5}}"#,
                        #"{"command":"update","id":1,"fields":{"txPower":"4"}}"#,
                        #"{"command":"update","id":1,"fields":{"phy":"2m"}}"#] {
            let answer = try reply(handler, refused)
            #expect(answer["ok"] as? Bool == false, "\(refused): \(answer)")
        }
        #expect(live.changes == changes)
    }

    @Test func statusFollowsTheEmittersEvents() throws {
        let handler = handler
        handler.device = "hci0"
        #expect(try reply(handler, #"{"command":"status"}"#)["state"] as? String == "on-air")
        handler.note(.offAir(.controllerReset))
        let off = try reply(handler, #"{"command":"status"}"#)
        #expect(off["state"] as? String == "off-air")
        #expect(off["device"] as? String == "hci0" && off["beacons"] as? Int == 2)
        #expect((off["lastDisruption"] as? String)?.isEmpty == false)
        handler.note(.restored(.controllerReset, gap: .milliseconds(120), afterUsable: .milliseconds(100)))
        #expect(try reply(handler, #"{"command":"status"}"#)["state"] as? String == "on-air")
    }

    static let refusals: [(String, String)] = [
        ("not json", "not a JSON object: send one object per line"),
        ("[1, 2]", "not a JSON object"),
        (#"{"verb":"list"}"#, "no \"command\": expected one of add, remove, update, list, status"),
        (#"{"command":"fly"}"#, "unknown command \"fly\": expected one of add, remove, update, list, status"),
        (#"{"command":"list","id":1}"#, "list takes command, not \"id\""),
        (#"{"command":"remove","id":7}"#, "no beacon with id 7; there are: 1, 2"),
        (#"{"command":"remove","id":"1"}"#, "\"id\" must be a beacon's id (a number; see list)"),
        (#"{"command":"remove","id":true}"#, "\"id\" must be a beacon's id (a number; see list)"),
        (#"{"command":"update","id":1}"#, "update's \"fields\" must be an object of fields"),
        (#"{"command":"update","id":1,"fields":{}}"#, "update changes no field"),
        (#"{"command":"update","id":1,"fields":{"minor":70000}}"#, "major and minor must be from 0 to 65535"),
        (#"{"command":"update","id":1,"fields":{"minor":[1]}}"#, "update's \"fields\": \"minor\" must be a string, a number or true/false"),
        (#"{"command":"update","id":1,"fields":{"url":"https://x.org"}}"#,
         "update: \"url\" is not a field of beacon 1 (type ibeacon; its fields: major, minor, uuid): to change what it is"),
        (#"{"command":"add","beacon":{"uuid":"nope","major":1,"minor":1}}"#, "needs a uuid"),
        (#"{"command":"add","beacon":"uuid"}"#, "add's \"beacon\": expected KEY=VALUE pairs, got 'uuid'"),
        (#"{"command":"add"}"#, "add's \"beacon\" must be an object of fields"),
    ]

    @Test(arguments: refusals)
    func aBadRequestGetsAnErrorAndChangesNothing(request: String, message: String) throws {
        let answer = try reply(handler, request)
        #expect(answer["ok"] as? Bool == false)
        #expect((answer["error"] as? String)?.hasPrefix(message) == true, "\(answer)")
        #expect(live.changes == 0)
        #expect(live.beacons == [Self.beacon(1), Self.beacon(2)])
    }

    @Test func aRefusalOnTheAirIsReportedAndTheIdsStay() throws {
        let handler = handler
        live.refuseNext = true
        let failed = try reply(handler, #"{"command":"add","beacon":{"uuid":"\#(lobbyUUID)","major":1,"minor":3}}"#)
        #expect(failed["ok"] as? Bool == false)
        #expect((failed["error"] as? String)?.contains("Command Disallowed") == true, "\(failed)")
        live.refuseNext = true
        #expect(try reply(handler, #"{"command":"remove","id":2}"#)["ok"] as? Bool == false)
        let list = try reply(handler, #"{"command":"list"}"#)
        #expect((list["beacons"] as? [[String: Any]])?.map { $0["id"] as? Int } == [1, 2])
        // The next added beacon still gets the next id.
        #expect(try reply(handler, #"{"command":"add","beacon":"uuid=\#(lobbyUUID),major=1,minor=3"}"#)["id"] as? Int == 3)
        let last = try reply(handler, #"{"command":"remove","id":1}"#)
        #expect(last["ok"] as? Bool == true)
    }

    /// A change while the beacons are off the air is held, then made once they are back;
    /// reads are answered at once, with the truth.
    @Test func aChangeWhileOffTheAirIsHeldUntilTheBeaconsAreBack() throws {
        let handler = handler
        handler.note(.offAir(.controllerReset))
        #expect(!handler.acceptsChanges)
        let add = #"{"command":"add","beacon":"uuid=\#(lobbyUUID),major=1,minor=3"}"#
        #expect(handler.respond(to: add, received: .now) == nil)
        #expect(try reply(handler, #"{"command":"status"}"#)["state"] as? String == "off-air")
        #expect(live.changes == 0)
        handler.note(.restored(.controllerReset, gap: .milliseconds(120), afterUsable: .milliseconds(100)))
        let answer = try #require(handler.respond(to: add, received: .now))
        #expect(answer.contains(#""ok":true"#) && answer.contains(#""id":3"#), "\(answer)")
        #expect(live.beacons.count == 3)
    }

    /// Held past the limit: the documented retry answer, and nothing changed.
    @Test func aChangeHeldPastTheLimitIsAnsweredRetry() throws {
        let handler = handler
        handler.note(.offAir(.hardwareError(code: 0x2A)))
        let late = ContinuousClock.now - ControlHandler.holdLimit - .milliseconds(1)
        let answer = try #require(handler.respond(to: #"{"command":"remove","id":2}"#, received: late))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == false && object["retry"] as? Bool == true, "\(answer)")
        #expect((object["error"] as? String)?.contains("nothing changed") == true)
        #expect((object["error"] as? String)?.contains("hardware error") == true, "names the cause")
        #expect(live.changes == 0 && live.beacons.count == 2)
    }

    /// A change that a disruption cuts short is held too (the ids unchanged), and made once
    /// the supervisor reports the beacons back.
    @Test func aChangeCutShortIsHeldAndMadeAfterTheRestore() throws {
        let handler = handler
        live.interruptNext = .hardwareError(code: 0x2A)
        let remove = #"{"command":"remove","id":1}"#
        #expect(handler.respond(to: remove, received: .now) == nil)
        #expect(try reply(handler, #"{"command":"status"}"#)["state"] as? String == "off-air", "status is true at once")
        let list = try reply(handler, #"{"command":"list"}"#)
        #expect((list["beacons"] as? [[String: Any]])?.map { $0["id"] as? Int } == [1, 2])
        handler.note(.offAir(.hardwareError(code: 0x2A)))
        handler.note(.restored(.hardwareError(code: 0x2A), gap: .milliseconds(130), afterUsable: .milliseconds(100)))
        let answer = try #require(handler.respond(to: remove, received: .now))
        #expect(answer.contains(#""ok":true"#), "\(answer)")
        let after = try reply(handler, #"{"command":"list"}"#)
        #expect((after["beacons"] as? [[String: Any]])?.map { $0["id"] as? Int } == [2])
        #expect(live.beacons == [Self.beacon(2)])
    }
}

/// The socket itself: replies in the order each client sent, a held request holding back
/// its own client's later ones only.
@Suite struct ControlServerTests {
    final class Client {
        let fd: Int32
        init(path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(connected == 0)
        }
        func send(_ line: String) { _ = Array((line + "\n").utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        /// Whatever has arrived, as lines.
        func lines() -> [String] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
                guard count > 0 else { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        deinit { close(fd) }
    }

    /// A server at a socket of its own (`control-NAME-PID.sock`) with a handler of two beacons
    /// (not attached yet).
    static func server(named name: String) throws -> (path: String, live: FakeLive, handler: ControlHandler, server: ControlServer) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(name)-\(getpid()).sock").path
        let live = FakeLive([ControlHandlerTests.beacon(1), ControlHandlerTests.beacon(2)])
        let handler = ControlHandler(session: live, makeBeacon: testBeacon, fieldsOf: ControlHandlerTests.fields)
        return (path, live, handler, try ControlServer(path: path))
    }

    /// Serves until `client` has `count` reply lines (or 5 s passed), and returns them.
    static func serve(_ server: ControlServer, until client: Client, count: Int = 1) -> [String] {
        var lines: [String] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while lines.count < count && ContinuousClock.now < deadline {
            server.serve()
            lines += client.lines()
            if lines.count < count { usleep(2_000) }
        }
        return lines
    }

    @Test func aHeldRequestHoldsBackItsOwnClientOnly() throws {
        let (path, live, handler, server) = try Self.server(named: "server")
        defer { server.close() }
        let first = try Client(path: path), second = try Client(path: path)
        server.serve()
        #expect(first.lines().isEmpty, "nothing answered before a handler is attached")
        server.attach(handler)
        handler.note(.offAir(.controllerReset))
        first.send(#"{"command":"update","id":1,"fields":{"minor":7}}"#)
        first.send(#"{"command":"list"}"#)
        second.send(#"{"command":"status"}"#)
        let status = Self.serve(server, until: second)
        for _ in 0..<3 { server.serve(); usleep(10_000) }
        #expect(first.lines().isEmpty, "the update is held, and the list behind it")
        #expect(status.first?.contains(#""state":"off-air""#) == true, "\(status)")
        let due = try #require(server.due)
        #expect(due > .now && due <= .now + ControlHandler.holdLimit)
        handler.note(.restored(.controllerReset, gap: .milliseconds(110), afterUsable: .milliseconds(100)))
        #expect(try #require(server.due) <= .now, "due at once when the beacons are back")
        let replies = Self.serve(server, until: first, count: 2)
        #expect(replies.count == 2, "\(replies)")
        #expect(replies.first?.contains(#""minor":7"#) == true && replies.last?.contains(#""beacons""#) == true)
        #expect(server.due == nil)
        #expect(live.beacons.first == ControlHandlerTests.beacon(7))
    }

    /// A client that sends requests and does not read its replies never holds the loop up:
    /// what it has not taken waits in the server (serving returns at once), and goes out, in
    /// order, as it reads.
    @Test func aClientThatDoesNotReadNeverBlocksTheLoop() throws {
        let (path, _, handler, server) = try Self.server(named: "slow")
        defer { server.close() }
        server.attach(handler)
        // Patient with the client, so that only a serve that waited for it could take this
        // long: a machine too busy to serve 2,000 requests within the usual second must not
        // have the client dropped (the replies would then never arrive).
        server.replyLimit = .seconds(60)
        let slow = try Client(path: path)
        var receiveBuffer: Int32 = 4096
        setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        // About 350 bytes a reply: 2,000 of them are far more than the socket holds.
        let requests = 2000
        // In one write (40 kB: the server's side of the socket holds it; line by line, each
        // write's overhead would fill it first).
        slow.send(Array(repeating: #"{"command":"list"}"#, count: requests).joined(separator: "\n"))
        let deadline = ContinuousClock.now + .seconds(20)
        var longest = Duration.zero
        while server.unsentBytes == 0 && ContinuousClock.now < deadline {
            let started = ContinuousClock.now
            server.serve()
            longest = max(longest, started.duration(to: .now))
            usleep(1_000)
        }
        #expect(server.unsentBytes > 0, "the replies outgrew what the client takes")
        #expect(longest < server.replyLimit, "a serve returned without waiting for the client: \(longest)")
        #expect(try #require(server.due) <= .now + .milliseconds(10), "due again soon, to send the rest")
        // (A reply may arrive split across reads: the bytes are joined before they are split.)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.lazy.filter({ $0 == 0x0A }).count < requests && ContinuousClock.now < deadline {
            server.serve()
            while case let count = recv(slow.fd, &chunk, chunk.count, Int32(MSG_DONTWAIT)), count > 0 { bytes += chunk[..<count] }
        }
        let replies = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(replies.count == requests, "every reply arrived: \(replies.count)")
        #expect(replies.allSatisfy { $0.contains(#""beacons""#) })
        #expect(server.unsentBytes == 0)
    }

    /// A client that sends thousands of requests at once is answered in turns: one serve reads
    /// at most `readPerServe` bytes of it (the loop's other work goes on between), and the rest
    /// is read at the next turns, until every request has its reply, in order.
    @Test func aFloodingClientIsServedInTurns() throws {
        let (path, _, handler, server) = try Self.server(named: "flood")
        defer { server.close() }
        server.attach(handler)
        // Patient with the client, as the slow-client test is: one serve answers some 860 `list`
        // requests before the client can read, which took 0.9 to 1.4 s in a debug build on a
        // loaded machine, past the 1 s a client may leave replies untaken.
        server.replyLimit = .seconds(60)
        let flood = try Client(path: path)
        server.serve()  // accepted
        let request = #"{"command":"list"}"#
        let requests = 2000
        // In one write: the 38 kB wait in the socket (it holds them) before the server reads.
        flood.send(Array(repeating: request, count: requests).joined(separator: "\n"))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        func take() {
            while case let count = recv(flood.fd, &chunk, chunk.count, Int32(MSG_DONTWAIT)), count > 0 { bytes += chunk[..<count] }
        }
        // One serve: the replies it made are those the client has and those it has not taken
        // yet (every reply is the same list, so each is as long as the first).
        server.serve()
        take()
        let replyLength = (bytes.firstIndex(of: 0x0A) ?? bytes.count) + 1
        let answered = (bytes.count + server.unsentBytes) / replyLength
        let mostPerServe = ControlServer.readPerServe / (request.utf8.count + 1) + 1
        #expect(answered > 0 && answered <= mostPerServe && answered < requests, "\(answered) requests answered in one serve")
        // The rest at the next turns, in order.
        let deadline = ContinuousClock.now + .seconds(20)
        // (A reply may arrive split across reads: the bytes are joined before they are split.)
        while bytes.lazy.filter({ $0 == 0x0A }).count < requests && ContinuousClock.now < deadline {
            server.serve()
            take()
        }
        let replies = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(replies.count == requests && replies.allSatisfy { $0.contains(#""beacons""#) })
    }

    /// While a command of the emitter waits for its answer, the server is served by that wait:
    /// reads are answered, a change is held (it would send commands of its own) however long
    /// the command takes, and made once the loop serves the server again.
    @Test func whileACommandWaitsReadsAreAnsweredAndChangesHeld() throws {
        let (path, live, handler, server) = try Self.server(named: "wait")
        defer { server.close() }
        server.attach(handler)
        #expect(server.servesWhileCommandWaits)
        let changer = try Client(path: path), reader = try Client(path: path)
        func serveWhileACommandWaits(until client: Client) -> [String] {
            var lines: [String] = []
            let deadline = ContinuousClock.now + .seconds(5)
            while lines.isEmpty && ContinuousClock.now < deadline {
                server.serveWhileCommandWaits(ready: server.descriptors)
                lines += client.lines()
                if lines.isEmpty { usleep(2_000) }
            }
            return lines
        }
        for _ in 0..<3 {  // accepts both
            server.serveWhileCommandWaits(ready: server.descriptors)
            usleep(10_000)
        }
        changer.send(#"{"command":"update","id":1,"fields":{"minor":7}}"#)
        reader.send(#"{"command":"list"}"#)
        let listed = serveWhileACommandWaits(until: reader)
        #expect(listed.first?.contains(#""beacons""#) == true, "\(listed)")
        #expect(changer.lines().isEmpty && live.changes == 0, "the update waits for the command to end")
        #expect(!handler.commandWaiting)
        // Held past the limit by a command's wait still is not answered retry.
        let late = ContinuousClock.now - ControlHandler.holdLimit - .milliseconds(1)
        handler.commandWaiting = true
        #expect(handler.respond(to: #"{"command":"remove","id":2}"#, received: late) == nil)
        handler.commandWaiting = false
        // The loop's own turn: due at once, and the update is made.
        #expect(try #require(server.due) <= .now)
        let replies = Self.serve(server, until: changer)
        #expect(replies.first?.contains(#""minor":7"#) == true, "\(replies)")
        #expect(live.beacons.first == ControlHandlerTests.beacon(7) && live.changes == 1)
    }

    @Test func aGroupsSocketAppearsOnlyOnceItIsTheGroups() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("control-group-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("control").path
        let group = try #require(getgrgid(getgid()))
        let server = try ControlServer(path: path, group: String(cString: group.pointee.gr_name))
        defer { server.close() }
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660 && info.st_gid == getgid(), "mode \(String(info.st_mode, radix: 8)) gid \(info.st_gid)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["control"],
                "the name it was made under is gone")
        _ = try Client(path: path)
        server.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aPathWithNoRoomForTheGroupsStagingNameSaysSo() {
        let path = "/tmp/" + String(repeating: "c", count: 100)
        #expect {
            _ = try ControlServer(path: path, group: "root")
        } throws: { error in
            let message = (error as? ControlError)?.message ?? ""
            return message.contains("with --control-group") && message.contains(path)
        }
    }

    /// Whether the server has closed `client`'s connection (it reads the end, after any replies).
    static func closed(_ client: Client) -> Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(client.fd, &byte, 1, Int32(MSG_DONTWAIT))
            if count == 0 { return true }
            if count < 0 { return false }
        }
    }

    /// A client that sends nothing, or half a line, is dropped after `idleLimit`; one that sent
    /// whole lines may wait between them as long as it likes.
    @Test func aClientOwingALineIsDroppedAfterTheIdleLimit() throws {
        let (path, _, handler, server) = try Self.server(named: "idle")
        defer { server.close() }
        server.attach(handler)
        server.idleLimit = .milliseconds(300)
        let silent = try Client(path: path), half = try Client(path: path), whole = try Client(path: path)
        whole.send(#"{"command":"status"}"#)
        // (`send` ends every line: half a line is written without one.)
        _ = Array(#"{"command":"li"#.utf8).withUnsafeBytes { Glibc.send(half.fd, $0.baseAddress, $0.count, 0) }
        #expect(Self.serve(server, until: whole).count == 1)
        let due = try #require(server.due)
        #expect(due > .now && due <= .now + .milliseconds(300), "due when the first owing client's time is up")
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline && server.descriptors.count > 2 {
            server.serve()
            usleep(20_000)
        }
        #expect(server.descriptors.count == 2, "the listener and the client that sent a whole line: \(server.descriptors)")
        #expect(Self.closed(silent) && Self.closed(half) && !Self.closed(whole))
        #expect(server.refusals.idle == 2, "\(server.refusals)")
        // Status reports what was dropped, by why (input nobody asked for is counted, not silent).
        whole.send(#"{"command":"status"}"#)
        let status = Self.serve(server, until: whole).first.flatMap(ControlReply.init(line:))?.status
        #expect(status?.refused?["idle"] == 2 && status?.refused?["displaced"] == 0 && status?.refused?.count == 7,
                "\(String(describing: status))")
    }

    /// A layout's beacon over the socket: the layout itself, its identifiers and data fields
    /// as lists (or space-separated), built as the layout writes it.
    @Test func aLayoutsBeaconIsAddedWithItsLists() throws {
        let request = JSONValue.object(["layout": .string("m:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12"),
                                        "ids": .array([.string("0x01020304"), .integer(258)]), "data": .array([.integer(4660), .integer(5)]),
                                        "measuredPower": .integer(-70)])
        let fields = try ControlHandler.beaconFields(request, what: "add's beacon")
        #expect(fields["ids"] == "0x01020304 258" && fields["data"] == "4660 5")
        let beacon = try BeaconDescription(fields: fields).beacon()
        #expect(HexText.format(beacon.advertisingData.bytes) == "0201060EFFFFFF7A010203040201BA341205")
        #expect(throws: (any Error).self) {
            try ControlHandler.beaconFields(.object(["ids": .array([.object([:])])]), what: "add's beacon")
        }
    }

    /// Answered clients keep their places: one user's 8 sessions that each sent a request (a
    /// runner's boxes, between steps) are not evicted by that user's newcomers, who are answered
    /// `retry` and closed, naming the bound; each session's next request is answered. Quiet
    /// past `quietLimit`, the quietest gives its place to a newcomer.
    @Test func answeredClientsAreNeverEvictedByNewcomers() throws {
        let (path, _, handler, server) = try Self.server(named: "answered")
        defer { server.close() }
        server.attach(handler)
        var sessions: [Client] = []
        for _ in 0..<ControlServer.maximumClientsPerUser {
            let session = try Client(path: path)
            session.send(#"{"command":"status"}"#)
            #expect(Self.serve(server, until: session).first?.contains(#""ok":true"#) == true)
            sessions.append(session)
        }
        for _ in 0..<20 {
            let newcomer = try Client(path: path)
            newcomer.send(#"{"command":"list"}"#)
            let reply = Self.serve(server, until: newcomer)
            #expect(reply.first?.contains(#""retry":true"#) == true && reply.first?.contains("the most one user may hold") == true,
                    "\(reply)")
        }
        #expect(server.refusals.perUser == 20 && server.refusals.displaced == 0, "\(server.refusals)")
        for session in sessions.dropFirst() {
            session.send(#"{"command":"status"}"#)
            #expect(Self.serve(server, until: session).first?.contains(#""ok":true"#) == true, "a session was evicted")
        }
        // The first has been quiet longest: past the limit, it gives its place.
        server.quietLimit = .milliseconds(100)
        usleep(50_000)
        for session in sessions.dropFirst() { session.send(#"{"command":"status"}"#); _ = Self.serve(server, until: session) }
        usleep(60_000)
        let newcomer = try Client(path: path)
        newcomer.send(#"{"command":"status"}"#)
        #expect(Self.serve(server, until: newcomer).first?.contains(#""ok":true"#) == true)
        #expect(server.refusals.displaced == 1 && Self.closed(sessions[0]), "\(server.refusals)")
    }

    /// One user's sessions leave room for another's: of 16 sessions one user opens, answered
    /// and staying, 8 are taken; a client of another user (`nobody`, through `setpriv`) is
    /// answered (without the bound, the 16 locked it out).
    @Test(.enabled(if: geteuid() == 0, "connecting as another user needs root"))
    func oneUsersSessionsLeaveRoomForAnother() throws {
        let (path, _, handler, server) = try Self.server(named: "users")
        defer { server.close() }
        server.attach(handler)
        #expect(chmod(path, 0o666) == 0)
        var sessions: [Client] = []
        var answered = 0
        for _ in 0..<ControlServer.maximumClients {
            let session = try Client(path: path)
            session.send(#"{"command":"status"}"#)
            if Self.serve(server, until: session).first?.contains(#""ok":true"#) == true { answered += 1 }
            sessions.append(session)
        }
        #expect(answered == ControlServer.maximumClientsPerUser && server.refusals.perUser == 8, "\(server.refusals)")
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        other.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"command":"status"}\\n')
            print(s.makefile().readline().strip())
            """, path]
        let output = Pipe()
        other.standardOutput = output
        try other.run()
        let deadline = ContinuousClock.now + .seconds(10)
        while other.isRunning && ContinuousClock.now < deadline {
            server.serve()
            usleep(2_000)
        }
        if other.isRunning { other.terminate() }
        let reply = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(reply.contains(#""ok":true"#), "nobody's client: \(reply)")
        #expect(server.refusals.full == 0 && server.refusals.displaced == 0, "\(server.refusals)")
    }

    /// A thousand connections that send nothing cannot lock anyone out: the server keeps at
    /// most `maximumClients`, a newcomer taking the place of the one owing a line longest, and
    /// a request sent after them all is answered at the next serve.
    @Test func aCrowdOfSilentClientsLocksNoOneOut() throws {
        let (path, _, handler, server) = try Self.server(named: "crowd")
        defer { server.close() }
        server.attach(handler)
        var crowd: [Int32] = []
        defer { crowd.forEach { close($0) } }
        // Non-blocking connects: those past the backlog fail at once (EAGAIN) and are tried again.
        func connectSilently() -> Int32? {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else { close(fd); return nil }
            return fd
        }
        while crowd.count < 300 {
            if let fd = connectSilently() { crowd.append(fd) } else { server.serve() }
        }
        for _ in 0..<20 { server.serve() }
        #expect(server.descriptors.count <= ControlServer.maximumClients + 1, "\(server.descriptors.count) descriptors")
        let real = try Client(path: path)
        real.send(#"{"command":"status"}"#)
        let reply = Self.serve(server, until: real)
        #expect(reply.first?.contains(#""ok":true"#) == true, "\(reply)")
        #expect(server.refusals.displaced >= 300 - ControlServer.maximumClients, "\(server.refusals)")
        let displaced = reply.first.flatMap(ControlReply.init(line:))?.status?.refused?["displaced"] ?? 0
        #expect(displaced >= 300 - ControlServer.maximumClients, "status reports the displaced clients: \(reply)")
        #expect(try #require(server.due) > .now, "nothing is due at once: the loop sleeps")
    }

    /// While the beacons are off the air, held requests are bounded in count and bytes: past
    /// them, a client with nothing held is answered `retry` at once, and one with a request
    /// held is not read further (its replies keep their order) until the beacons are back,
    /// when every request it sent is answered, in order.
    @Test func heldRequestsAreBoundedInCountAndBytes() throws {
        let (path, _, handler, server) = try Self.server(named: "held")
        defer { server.close() }
        server.attach(handler)
        for (what, request, count) in [("bytes", #"{"command":"update","id":1,"fields":{"minor":7}"# + String(repeating: " ", count: 60_000) + "}", 6),
                                       ("count", #"{"command":"update","id":1,"fields":{"minor":8}}"#, ControlServer.maximumHeld + 6)] {
            handler.note(.offAir(.controllerReset))
            let piper = try Client(path: path)
            // Written without waiting (the server stops reading it): what the socket takes.
            var bytes = Array(Array(repeating: request, count: count).joined(separator: "\n").utf8) + [0x0A]
            let deadline = ContinuousClock.now + .seconds(5)
            while !bytes.isEmpty && ContinuousClock.now < deadline {
                let sent = bytes.withUnsafeBytes { Glibc.send(piper.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if sent > 0 { bytes.removeFirst(sent) }
                server.serve()
            }
            for _ in 0..<20 { server.serve() }
            let late = try Client(path: path)
            late.send(request)
            let retry = Self.serve(server, until: late)
            #expect(retry.first?.contains(#""retry":true"#) == true && retry.first?.contains("held already") == true,
                    "\(what): \(retry)")
            #expect(!Self.closed(piper) && piper.lines().isEmpty, "\(what): held and waiting, not dropped")
            handler.note(.restored(.controllerReset, gap: .milliseconds(110), afterUsable: .milliseconds(100)))
            var replies: [String] = []
            let answering = ContinuousClock.now + .seconds(10)
            while replies.count < count && ContinuousClock.now < answering {
                if !bytes.isEmpty {
                    let sent = bytes.withUnsafeBytes { Glibc.send(piper.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                    if sent > 0 { bytes.removeFirst(sent) }
                }
                server.serve()
                replies += piper.lines()
            }
            #expect(replies.count == count && replies.allSatisfy { $0.contains(#""ok":true"#) }, "\(what): \(replies.count) replies")
        }
        #expect(server.refusals.heldBound == 2, "\(server.refusals)")
    }
}
