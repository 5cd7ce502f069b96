// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// A fake controller driven by a script: each step names the command bytes the host must send
/// next and the event bytes the controller answers with. Anything else fails the test.
final class ScriptedTransport: PacketTransport {
    /// A step's command is the bytes expected (no H4 type byte), or nil for "no command, just
    /// these events"; its answers are event bytes.
    typealias Step = Script<[UInt8], [UInt8]>.Step

    let name = "scripted"
    private var script: Script<[UInt8], [UInt8]>
    /// After the script runs out: close the link (true) or stay silent (false).
    var closeWhenDone = false
    private(set) var closed = false

    /// Answers every command with success (and zeroed return parameters) instead of a script.
    private let answeringEverything: Bool
    /// While answering everything: commands refused with a status, so many times each.
    private var refusals: [UInt16: (status: UInt8, times: Int)] = [:]

    /// While answering everything, refuses the next `times` commands with `opcode`, with `status`.
    func refuse(opcode: UInt16, status: UInt8, times: Int) {
        refusals[opcode] = (status, times)
    }

    init(_ steps: [Step]) {
        script = Script(steps)
        answeringEverything = false
    }

    init(answeringEverything: Bool) {
        script = Script([])
        self.answeringEverything = answeringEverything
    }

    var remainingSteps: Int { script.steps.count }
    var sent: [[UInt8]] { script.sent }

    func send(_ packet: H4Packet) throws(TransportError) {
        if closed || (closeWhenDone && script.steps.isEmpty) { throw .closed(transport: name) }
        if answeringEverything {
            let opcode = UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8
            if let refusal = refusals[opcode], refusal.times > 0 {
                refusals[opcode] = (refusal.status, refusal.times - 1)
                script.received(packet.body, answeredWith: complete(opcode, status: refusal.status))
                return
            }
            script.received(packet.body, answeredWith: complete(opcode, returning: [UInt8](repeating: 0, count: 8)))
            return
        }
        script.received(packet.body) { HexText.format($0 ?? [], separator: " ") }
    }

    func receive(timeout: Duration) throws(TransportError) -> ReceiveResult {
        if let bytes = script.next() { return .packet(H4Packet(type: .event, body: bytes)) }
        if closeWhenDone && script.steps.isEmpty { throw .closed(transport: name) }
        return .timedOut
    }

    func close() { closed = true }
}

/// Command Complete with status only, one credit.
func complete(_ opcode: UInt16, status: UInt8 = 0x00, returning extra: [UInt8] = []) -> [UInt8] {
    let parameters: [UInt8] = [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + extra
    return [0x0E, UInt8(parameters.count)] + parameters
}

/// Bytes from annotated hex (everything after `//` is a comment).
func hex(_ annotated: String) -> [UInt8] {
    (try? HexText.parse(annotated: annotated)) ?? []
}

extension Advertiser {
    /// Its beacons, changed as `advertise` and the library change them (`LiveBeacons`, the one
    /// change path), on a session made for the change (nothing sent for it).
    var live: LiveBeacons { HCISession(advertiser: self, kernelIndex: nil, ownsController: true, reconnect: nil).live }
}

extension ManagedAdvertiser {
    /// Its beacons, changed as `advertise` and the library change them (`LiveBeacons`).
    var live: LiveBeacons { ManagedSession(advertiser: self, openMonitor: { _ in nil }).live }
}
