// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// A fake controller driven by a script: each step names the command bytes the host must send
/// next and the event bytes the controller answers with. Anything else fails the test.
final class ScriptedTransport: HCITransport {
    struct Step {
        /// The command expected (no H4 type byte), or nil for "no command, just these events".
        var command: [UInt8]?
        var answers: [[UInt8]]
    }

    let name = "scripted"
    private var steps: [Step]
    private var queued: [[UInt8]] = []
    private(set) var sent: [[UInt8]] = []
    /// After the script runs out: close the link (true) or stay silent (false).
    var closeWhenDone = false
    private(set) var closed = false

    /// Answers every command with success (and zeroed return parameters) instead of a script.
    private let answeringEverything: Bool

    init(_ steps: [Step]) {
        self.steps = steps
        self.answeringEverything = false
        deliverUnsolicited()
    }

    init(answeringEverything: Bool) {
        self.steps = []
        self.answeringEverything = answeringEverything
    }

    var remainingSteps: Int { steps.count }

    func send(_ packet: H4Packet) throws(TransportError) {
        if closed || (closeWhenDone && steps.isEmpty) { throw .closed(transport: name) }
        sent.append(packet.body)
        if answeringEverything {
            let opcode = UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8
            queued.append(complete(opcode, returning: [UInt8](repeating: 0, count: 8)))
            return
        }
        guard let step = steps.first else {
            Issue.record("unexpected command after the script ended: \(HexText.format(packet.body, separator: " "))")
            return
        }
        #expect(HexText.format(packet.body, separator: " ") == HexText.format(step.command ?? [], separator: " "),
                "command \(sent.count)")
        steps.removeFirst()
        queued += step.answers
        deliverUnsolicited()
    }

    private func deliverUnsolicited() {
        while let step = steps.first, step.command == nil {
            queued += step.answers
            steps.removeFirst()
        }
    }

    func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> ReceiveResult {
        if !queued.isEmpty {
            let bytes = queued.removeFirst()
            return .packet(H4Packet(type: .event, body: bytes))
        }
        if closeWhenDone && steps.isEmpty { throw .closed(transport: name) }
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
